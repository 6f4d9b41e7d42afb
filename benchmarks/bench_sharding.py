"""Several processes under torchrun against one: what the ranks' coordination costs, a first run
on a fresh machine, and a full-scale task on two cores.

Three measurements, each a same-run ratio on this machine (CPU, gloo):

1. ``static``: a word-vector model (encoding nearly free, as on a GPU) over 240,000 texts through
   the engine, world size 2 (``taskset -c 0,1``) against 1 (``taskset -c 0``): the wall time
   of prefetch and the end's meeting, and the time the ranks spend meeting (the start's check,
   the end's barrier and counts). Each rank commits its own blocks; no call is collective per
   block. torch and accelerate are imported before the clock starts, as a GPU model's run has
   them (a static model alone under torchrun pays their import once, ~1.2 s here).
2. ``first_run``: ``chemteb run -t PipChemSMILESFormulaBM`` on a fresh cache (the PipChem build
   inside), two processes under torchrun against one: every rank used to build the suite.
3. ``full`` (``--full``, ~10 min): full-scale PipChemWikiRetrieval, the data built beforehand,
   a fresh embedding cache: ``taskset -c 0,1`` torchrun of two against ``taskset -c 0`` one
   process.

Run: ``python benchmarks/bench_sharding.py [--full]``; figures in docs/figures.json
("sharding").
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

from _figures import REPO, publish

TORCHRUN = shutil.which("torchrun", path=str(Path(sys.executable).parent)) or "torchrun"
TEXTS = 240_000

_STATIC = textwrap.dedent("""
    import json, os, sys, time
    import torch, accelerate  # loaded, as a GPU model's run has them (their import: see below)
    sys.path.insert(0, {repo!r})
    from chemteb_eval.engine import EmbeddingEngine
    from chemteb_eval.engine.cache import EmbeddingCache
    from chemteb_eval.models import load_encoder
    words = [f"w{{i}}" for i in range(5000)]
    texts = [" ".join(words[(i * 7 + j * 13) % 5000] for j in range(3 + i % 9)) + f" t{{i}}"
             for i in range({n})]
    encoder = load_encoder("word2vec:{vectors}")
    cache = EmbeddingCache(__import__("pathlib").Path({cache!r}), "bench-static", "v1", "-")
    import resource
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0 = time.perf_counter()
    engine = EmbeddingEngine(encoder, cache, batch_size=64, progress=False)
    t1 = time.perf_counter()
    engine.prefetch(("", t) for t in texts)
    t2 = time.perf_counter()
    engine.finish_ranks()
    t3 = time.perf_counter()
    import resource
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # MiB (Linux: KiB)
    if os.environ.get("RANK", "0") == "0":
        print("RESULT " + json.dumps({{"start_check": t1 - t0, "prefetch": t2 - t1,
              "meeting": t3 - t2, "wall": t3 - t0, "encoded": engine.stats.encoded,
              "blocks": len(list(cache.path.glob("*.block"))), "peak_rss_mib": peak,
              "before_encoding_rss_mib": before}}))
""")


def _vectors(folder: Path) -> Path:
    import numpy as np
    from gensim.models import KeyedVectors

    kv = KeyedVectors(vector_size=64)
    rng = np.random.default_rng(0)
    names = [f"w{i}" for i in range(5000)]
    kv.add_vectors(names, rng.normal(size=(5000, 64)).astype(np.float32))
    path = folder / "vectors.txt"
    kv.save_word2vec_format(str(path))
    return path


def _time(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    took = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr[-3000:]}")
    return took, proc.stdout


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, OMP_NUM_THREADS="1", **extra)
    env.pop("WORLD_SIZE", None)
    return env


def static(tmp: Path) -> dict[str, Any]:
    vectors = _vectors(tmp)
    out: dict[str, Any] = {"texts": TEXTS}
    for world, cores in ((1, "0"), (2, "0,1")):
        script = tmp / f"static{world}.py"
        cache = tmp / f"cache{world}"
        script.write_text(
            _STATIC.format(repo=str(REPO), n=TEXTS, vectors=vectors, cache=str(cache))
        )
        launch = (
            [sys.executable] if world == 1 else [TORCHRUN, "--standalone", "--nproc_per_node=2"]
        )
        took, said = _time(["taskset", "-c", cores, *launch, str(script)], _env())
        line = next(x for x in said.splitlines() if x.startswith("RESULT "))
        inside = json.loads(line[len("RESULT ") :])
        assert inside["encoded"] == TEXTS, inside
        out[f"world{world}"] = {"process_seconds": took, **inside}
    one, two = out["world1"], out["world2"]
    out["speedup_wall"] = one["wall"] / two["wall"]
    out["speedup_process"] = one["process_seconds"] / two["process_seconds"]
    # what a block costs beyond its own encoding and put, from the meetings: there are two a run
    out["meeting_seconds_per_block"] = (two["start_check"] + two["meeting"]) / max(two["blocks"], 1)
    return out


def first_run(tmp: Path) -> dict[str, Any]:
    out: dict[str, Any] = {"task": "PipChemSMILESFormulaBM", "scale": "full (the default)"}
    for world in (1, 2):
        root = tmp / f"first{world}"
        args = ["-m", "chemteb_eval", "run", "-t", "PipChemSMILESFormulaBM", "--quiet",
                "--output-dir", str(root / "out")]  # fmt: skip
        launch = (
            [sys.executable] if world == 1 else [TORCHRUN, "--standalone", "--nproc_per_node=2"]
        )
        env = _env(CHEMTEB_CACHE=str(root / "cache"))
        env.pop("CHEMTEB_PIPCHEM_SCALE", None)
        out[f"world{world}_seconds"], _ = _time([*launch, *args], env)
    out["ratio_one_over_two"] = out["world1_seconds"] / out["world2_seconds"]
    return out


def full(tmp: Path) -> dict[str, Any]:
    out: dict[str, Any] = {"task": "PipChemWikiRetrieval", "scale": "full"}
    data = tmp / "data"
    env = _env(CHEMTEB_CACHE=str(data), CHEMTEB_PIPCHEM_SCALE="full")
    build = "from chemteb_eval.data import pipchem; pipchem.ensure_built()"
    subprocess.run([sys.executable, "-c", build], env=env, check=True)
    for world, cores in ((1, "0"), (2, "0,1")):
        root = tmp / f"full{world}"
        root.mkdir()
        (root / "pipchem").symlink_to(data / "pipchem")
        args = ["-m", "chemteb_eval", "run", "-t", "PipChemWikiRetrieval", "--quiet",
                "--output-dir", str(root / "out")]  # fmt: skip
        launch = (
            [sys.executable] if world == 1 else [TORCHRUN, "--standalone", "--nproc_per_node=2"]
        )
        run_env = dict(env, CHEMTEB_CACHE=str(root))
        out[f"world{world}_seconds"], _ = _time(["taskset", "-c", cores, *launch, *args], run_env)
        scores = sorted((root / "out").rglob("PipChemWikiRetrieval.json"))
        out[f"world{world}_main_score"] = json.loads(scores[0].read_text())["scores"]["test"][0][
            "main_score"
        ]
    out["speedup"] = out["world1_seconds"] / out["world2_seconds"]
    return out


def main() -> None:
    """``--full`` adds the full-scale part; ``--only PART`` measures one part and keeps the
    others' figures recorded before."""
    parts = {"static": static, "first_run": first_run, "full": full}
    chosen = ["static", "first_run"] + (["full"] if "--full" in sys.argv else [])
    figures: dict[str, Any] = {}
    if "--only" in sys.argv:
        chosen = [sys.argv[sys.argv.index("--only") + 1]]
        recorded = json.loads((REPO / "docs" / "figures.json").read_text()).get("sharding", {})
        figures = {k: v for k, v in recorded.items() if k in parts}
    with tempfile.TemporaryDirectory(prefix="chemteb-sharding-") as tmp:
        for name in chosen:
            figures[name] = parts[name](Path(tmp))
            print(json.dumps(figures[name], indent=1), flush=True)
    publish("sharding", _rounded(figures))


def _rounded(value: Any) -> Any:
    """Seconds and ratios as the docs print them: 2 decimals (4 significant digits below 0.1)."""
    if isinstance(value, dict):  # a score as the result file has it
        return {k: v if "score" in k else _rounded(v) for k, v in value.items()}
    if isinstance(value, float):
        return float(f"{value:.4g}") if abs(value) < 0.1 else round(value, 2)
    return value


if __name__ == "__main__":
    main()
