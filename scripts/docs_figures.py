"""Measure the figures the README and the docs print, by running exactly the commands they show,
and write them into the pages: nothing a newcomer reads is typed by hand.

What it runs, in a fresh folder with a fresh chemteb cache (so "cold" is a first run's):
``chemteb run`` (the README's main command) twice — cold, then warm — and records each wall time
and the summary table the command prints. It writes ``docs/figures.json`` and replaces, in
README.md and docs/*.md, each region

    <!-- figures:NAME -->
    ...
    <!-- /figures -->

with NAME's rendering (``render``), and each inline ``<!-- fig:KEY -->VALUE<!-- /fig -->`` with
KEY's value. ``tests/test_docs_figures.py`` holds the pages to docs/figures.json.

Usage: python scripts/docs_figures.py            (about 5 minutes on 2 cores; needs the run and
       python scripts/docs_figures.py --render   pipchem extras) / only rewrite the pages
"""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ROOT / "docs" / "figures.json"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
REGION = re.compile(r"(<!-- figures:(\w+) -->\n)(.*?)(<!-- /figures -->)", re.S)
INLINE = re.compile(r"(<!-- fig:([a-z][\w.-]*) -->)(.*?)(<!-- /fig -->)")


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return seconds, done.stdout


def _scores(results: Path) -> dict[str, float]:
    """Each task's main score as the run wrote it (the summary table rounds to 4 places), read
    as ``chemteb rank`` reads it."""
    from chemteb_eval.results.board import read_results
    from chemteb_eval.tasks import benchmark_tasks, get_benchmark

    bench = get_benchmark("PipChem")
    (model,) = read_results([results], bench)
    return {t.name: round(model.scores[t.name], 6) for t in benchmark_tasks(bench)}


FILE = re.compile(r"<!-- file: ([\w./-]+) -->\n```\w*\n(.*?)\n```", re.S)


def _worked_example(chemteb: str, env: dict[str, str]) -> float:
    """docs/custom_tasks.md's worked example as a reader runs it: its files written where it
    names them, then its first command, timed (the model loads; the cache is warm)."""
    page = (ROOT / "docs" / "custom_tasks.md").read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="chemteb-example-") as tmp:
        for name, body in FILE.findall(page):
            (Path(tmp) / name).parent.mkdir(parents=True, exist_ok=True)
            (Path(tmp) / name).write_text(body + "\n", encoding="utf-8")
        argv = [chemteb, "run", "-m", "sentence-transformers/all-MiniLM-L6-v2", "--task-file"]
        seconds, _ = _run([*argv, "solvents.yaml", "synonyms.yaml"], Path(tmp), env)
    return seconds


def measure() -> dict[str, Any]:
    chemteb = str(Path(sys.executable).with_name("chemteb"))
    with tempfile.TemporaryDirectory(prefix="chemteb-figures-") as tmp:
        env = {**os.environ, "CHEMTEB_CACHE": str(Path(tmp) / "cache")}
        env.pop("CHEMTEB_PIPCHEM_SCALE", None)
        cold, _ = _run([chemteb, "run"], Path(tmp), env)
        scores = _scores(Path(tmp) / "results")
        warm, _ = _run([chemteb, "run"], Path(tmp), env)
        again = _scores(Path(tmp) / "results")
        example = _worked_example(chemteb, env)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _figures import cpu

    return {
        "machine": f"{os.cpu_count()} CPU cores, {platform.machine()}, Python "
        f"{platform.python_version()}",
        "cpu": cpu(),
        "date": time.strftime("%Y-%m-%d"),
        "main_run": {
            "command": "chemteb run",
            "cold_seconds": round(cold, 1),
            "warm_seconds": round(warm, 1),
            "cold_minutes": round(cold / 60),
            "scores": scores,
            "warm_scores": again,
        },
        "worked_example": {"seconds": round(example)},
    }


def render(name: str, figures: dict[str, Any]) -> str:
    """A region's Markdown from the figures."""
    if name == "main_run":
        run = figures["main_run"]
        rows = [f"| {task} | {score:.6f} |" for task, score in run["scores"].items()]
        where = f"{figures['cpu']['model']}, " if "cpu" in figures else ""
        return (
            f"What `{run['command']}` printed in a fresh folder with a fresh cache ({where}"
            f"{figures['machine']}; {figures['date']}): {run['cold_seconds']:.0f} s cold (the suite built and every "
            f"text encoded), {run['warm_seconds']:.0f} s when rerun (every task's result "
            "kept).\n\n| task | main score |\n|---|---:|\n" + "\n".join(rows) + "\n"
        )
    if name == "install":
        return _install_table(figures["install"])
    if name == "inspect":
        return _inspect_table(figures["inspect"])
    if name == "eee":
        return _eee_table(figures["eee"])
    if name == "vs_mteb":
        return _vs_mteb_table(figures["vs_mteb"])
    if name == "roofline":
        return _roofline_table(figures["roofline"])
    if name == "metrics":
        return _metrics_table(figures["metrics"])
    if name == "runner":
        return _runner_table(figures["runner"])
    if name == "pipeline":
        return _pipeline_table(figures["pipeline"])
    if name == "bf16_clustering":
        return _bf16_clustering_table(figures["bf16_clustering"])
    raise KeyError(f"figures: no rendering for region {name!r}")


TORCH = "torch==2.13.0"
PROFILE_INSTALLS = {
    "core": "pip install chemteb-eval",
    "run": f'pip install "chemteb-eval[run]" {TORCH}',
    "run,pipchem": f'pip install "chemteb-eval[run,pipchem]" {TORCH}',
    "all": f'pip install "chemteb-eval[all]" {TORCH}',
}


def _install_table(install: dict[str, Any]) -> str:
    base = install["baseline_seconds"]
    lines = [
        f"| profile | install | time (x `pip install numpy`, {base:.1f} s) | site-packages | "
        "distributions |",
        "|---|---|---|---|---|",
    ]
    for name, row in install["profiles"].items():
        label = "core" if name == "core" else f"`[{name}]`"
        lines.append(
            f"| {label} | `{PROFILE_INSTALLS[name]}` | {row['seconds']} s "
            f"({row['seconds'] / base:.1f}x) | {row['mb']:,} MB | {row['distributions']} |"
        )
    return (
        f"Measured on {install['date']} by `python benchmarks/bench_install.py --figures`:\n\n"
        + "\n".join(lines)
        + "\n"
    )


def _inspect_table(inspect: dict[str, Any]) -> str:
    lines = [
        "| task | distinct texts | SMILES | tokens per SMILES | unknown | tokens per text |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, task in inspect["tasks"].items():
        smiles = task["smiles"] or {}
        per = task["tokens_per_smiles"] if smiles else "—"
        unknown = f"{task['unknown_per_smiles_pct']} %" if smiles else "—"
        words = task["tokens_per_text"] if task["tokens_per_text"] is not None else "—"
        lines.append(
            f"| {name} | {task['texts']:,} | {smiles.get('strings', 0):,} | {per} | {unknown} "
            f"| {words} |"
        )
    return f"Measured on {inspect['date']}:\n\n" + "\n".join(lines) + "\n"


def _eee_table(eee: dict[str, Any]) -> str:
    lines = ["| task | lines | bytes |", "|---|---:|---:|"]
    for name, task in eee["per_task"].items():
        lines.append(f"| {name} | {task['lines']:,} | {task['bytes'] / 1e6:.2f} MB |")
    lines.append(
        f"| **all seven** | **{eee['model_lines']:,}** | **{eee['model_sidecar_mb']} MB** |"
    )
    return (
        f"Measured on {eee['date']} by `python benchmarks/bench_eee.py` ({eee['model']}'s "
        "record):\n\n" + "\n".join(lines) + "\n"
    )


def _vs_mteb_table(vs: dict[str, Any]) -> str:
    """Each dtype's own run of ``benchmarks/bench_vs_mteb.py --record``: both tools' seconds
    and main scores (MTEB always in float32)."""
    runs = {k: v for k, v in vs.items() if k in ("float32", "bfloat16")}
    head = "| | " + " | ".join(f"ours, {d} | MTEB, float32" for d in runs) + " |"
    lines = [head, "|---|" + "---:|---:|" * len(runs)]
    lines.append(
        "| wall time, seven tasks (s) | "
        + " | ".join(f"{r['ours_s']} | {r['mteb_s']}" for r in runs.values())
        + " |"
    )
    lines.append(
        "| MTEB's time / ours | "
        + " | ".join(f"**{r['ratio']}x** | " for r in runs.values())
        + " |"
    )
    first = next(iter(runs.values()))
    for task in first["ours"]:
        lines.append(
            f"| {task} | "
            + " | ".join(f"{r['ours'][task]:.6f} | {r['mteb'][task]:.6f}" for r in runs.values())
            + " |"
        )
    # the record's own difference (unrounded scores); the rounded ones hid a 3e-7
    apart = [
        r.get("max_score_diff", max(abs(r["ours"][t] - r["mteb"][t]) for t in r["ours"]))
        for r in runs.values()
    ]
    lines.append(
        "| largest main-score difference | " + " | ".join(f"{a:.1e} | " for a in apart) + " |"
    )
    said = "; ".join(
        f"{d}: {_machine(r) if 'cpu' in r else str(r['cores']) + ' cores'}, 1-minute load "
        + (
            f"{r['load_1min_before']} before"
            if "load_1min_before" in r
            else f"{r['load_1min']} after"
        )
        for d, r in runs.items()
    )
    return f"Measured on {vs['date']} ({said}), one run each:\n\n" + "\n".join(lines) + "\n"


def _roofline_table(roof: dict[str, Any]) -> str:
    lines = [
        "| dtype | peak at the model's shapes (GFLOP/s) | encoder achieved (GFLOP/s) | share "
        "of peak | tokens/s |",
        "|---|---:|---:|---:|---:|",
    ]
    for dtype in ("float32", "bfloat16"):
        r = roof[dtype]
        lines.append(
            f"| {dtype} | {r['peak_gflops']} | {r['achieved_gflops']} | "
            f"**{r['share_of_peak_pct']} %** | {r['tokens_per_s']:,} |"
        )
    flags = ", ".join(roof["cpu"]["flags"]) or "none of them"
    shares = ""
    if "time_shares_pct" in roof["float32"]:
        names = list(roof["float32"]["time_shares_pct"])
        shares = (
            "\nWhere a call's time goes (one thread, `torch.profiler`, % of self CPU time):\n\n"
            + "| dtype | "
            + " | ".join(names)
            + " |\n|---|"
            + "---:|" * len(names)
            + "\n"
            + "".join(
                f"| {d} | "
                + " | ".join(f"{roof[d]['time_shares_pct'].get(n, 0.0)}" for n in names)
                + " |\n"
                for d in ("float32", "bfloat16")
            )
        )
    return (
        f"Measured on {roof['date']} by `python benchmarks/bench_roofline.py` ({roof['cpu']['model']}; "
        f"flags: {flags}; torch {roof['torch']}, {roof['threads']} threads; "
        f"{roof['texts']:,} PipChem texts, {roof['float32']['tokens']:,} tokens):\n\n"
        + "\n".join(lines)
        + "\n"
        + shares
    )


def _machine(record: dict[str, Any]) -> str:
    """The CPU a benchmark ran on, as its record names it: the machines change between
    sessions, and with them what bfloat16 and a matrix product cost."""
    cpu = record.get("cpu")
    if not cpu:
        return "CPU not recorded"
    extras = [f for f in ("avx512_bf16", "amx_bf16") if f in cpu["flags"]]
    return f"{cpu['model']}, {cpu['cores']} cores" + (f" ({', '.join(extras)})" if extras else "")


def _metrics_table(metrics: dict[str, Any]) -> str:
    lines = [
        "| metric | size | ours (s) | ours / baseline | module / function | MTEB code (s) | "
        "MTEB / ours | peak MB (ours) |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in metrics["rows"]:
        lines.append(
            f"| {r['metric']} | {r['size']} | {r['ours_s']:.3f} | {r['ours_over_baseline']:.2f} "
            f"| {r['module_over_function']:.2f} | {r['mteb_s']:.3f} | {r['mteb_over_ours']}x "
            f"| {r['peak_mb']} |"
        )
    return (
        f"Measured on {metrics['date']} by `python benchmarks/bench_metrics.py --record` "
        f"({_machine(metrics)}; {metrics['machine']}). Baseline: a 4096x384 @ 384x4096 float32 matmul took "
        f"{metrics['baseline_ms']} ms in this run.\n\n" + "\n".join(lines) + "\n"
    )


def _runner_table(r: dict[str, Any]) -> str:
    saved = r["requested"] - r["unique"]
    rows = [
        ("plain sentence-transformers: load tasks + `encode` the unique texts (s)", r["bare_s"]),
        ("`run`, cold cache (s)", r["cold_s"]),
        ("`run`, warm cache, --overwrite (s)", r["warm_s"]),
        ("plain sentence-transformers' time / cold run's", f"**{r['bare_over_cold']}x**"),
        *(
            [
                ("plain `encode` alone, the unique texts (s)", r["plain_encode_s"]),
                ("the engine alone, the same texts (s)", r["engine_encode_s"]),
                ("plain `encode`'s time / the engine's", f"**{r['plain_over_engine_encode']}x**"),
            ]
            if "plain_encode_s" in r
            else []
        ),
        ("cold / warm (target >= 20)", f"{r['cold_over_warm']}x"),
        ("texts requested / unique", f"{r['requested']:,} / {r['unique']:,}"),
        ("encodings saved by deduplication", f"{saved:,} ({saved / r['requested']:.1%})"),
    ]
    return (
        f"Measured on {r['date']} by `python benchmarks/bench_runner.py --record` (PipChem, full; "
        f"all-MiniLM-L6-v2, float32, batch size {r['batch_size']}; {_machine(r)}, 1-minute load "
        f"{r['load_1min_before']} before; one process, one run):\n\n| measure | value |\n|---|---:|\n"
        + "\n".join(f"| {name} | {val} |" for name, val in rows)
        + "\n"
    )


def _pipeline_table(pipe: dict[str, Any]) -> str:
    lines = [
        "| stage | texts/s | x the forward pass here | x the H200 check's encode rate | "
        f"target (>= {pipe['target']:,} texts/s) |",
        "|---|---:|---:|---:|---|",
    ]
    for r in pipe["rows"]:
        forward = r["stage"].startswith("forward") or "(reference)" in r["stage"]
        met = (
            "—"
            if forward or "baseline" in r["stage"]
            else ("met" if r["meets_target"] else "not met")
        )
        lines.append(
            f"| {r['stage']} | {r['texts_per_second']:,} | {r['x_forward_on_this_cpu']}x | "
            f"{r['x_h200_encode_rate']}x | {met} |"
        )
    return (
        f"Measured on {pipe['date']} by `python benchmarks/bench_pipeline.py --record` "
        f"({_machine(pipe)}; {pipe['vectors']:,} vectors of 384 floats, {pipe['texts']:,} texts; best of 3):\n\n"
        + "\n".join(lines)
        + "\n"
    )


def _bf16_clustering_table(b: dict[str, Any]) -> str:
    lines = [
        "| what moved | by (relative norm, each vector) | V-measure move: mean | largest |",
        "|---|---:|---:|---:|",
        f"| bfloat16's vectors, the engine's calls | {b['vector_move_mean']} (largest "
        f"{b['vector_move_largest']}) | {b['bfloat16_move']} (one run) | |",
        f"| bfloat16's vectors, plain sentence-transformers' batches | "
        f"{b['plain_bfloat16_vector_move_mean']} | {b['plain_bfloat16_move']} (one run) | |",
        f"| float32 model under `torch.autocast` to bfloat16, plain batches "
        f"({b['autocast_over_bfloat16_time']}x the bfloat16 cast's time) | "
        f"{b['autocast_vector_move_mean']} | {b['autocast_move']} (one run) | |",
    ]
    for name, n in b["float32_under_noise"].items():
        label = "bfloat16's mean" if name == "bfloat16_mean" else name
        lines.append(
            f"| float32's vectors + random noise ({label}; {b['noise_seeds']} draws) | "
            f"{n['share']} | {n['mean_move']} | {n['largest_move']} |"
        )
    return (
        f"Measured on {b['date']} by `python benchmarks/bench_bf16_clustering.py --record` "
        f"({_machine(b)}; {b['task']}, {b['split']}, {b['texts']:,} texts; float32 {b['float32']}, bfloat16 "
        f"{b['bfloat16']}; the float32 vectors under k-means seeds 0-9 score "
        f"{b['kmeans_seeds_lowest']} to {b['kmeans_seeds_highest']}):\n\n" + "\n".join(lines) + "\n"
    )


def value(key: str, figures: dict[str, Any]) -> str:
    found: Any = figures
    for part in key.split("."):
        found = found[part]
    if isinstance(found, (dict, list)):  # a marker shows one number, never a repr
        raise TypeError(f"figures: {key} is not one value but a {type(found).__name__}")
    if isinstance(found, bool):  # before int: True is an int
        return "yes" if found else "no"
    return f"{found:,}" if isinstance(found, int) else str(found)


def rewrite(text: str, figures: dict[str, Any]) -> str:
    text = REGION.sub(lambda m: m.group(1) + render(m.group(2), figures) + m.group(4), text)
    return INLINE.sub(lambda m: m.group(1) + value(m.group(2), figures) + m.group(4), text)


def main() -> None:
    if "--render" in sys.argv:
        figures = json.loads(FIGURES.read_text(encoding="utf-8"))
    else:
        # the other scripts' records (install, costs) are kept: this script measures its own
        kept = json.loads(FIGURES.read_text(encoding="utf-8")) if FIGURES.is_file() else {}
        figures = {**kept, **measure()}
        if figures["main_run"]["scores"] != figures["main_run"]["warm_scores"]:
            sys.exit("a rerun printed other scores than the first run: not written")
        FIGURES.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        new = rewrite(text, figures)
        if new != text:
            page.write_text(new, encoding="utf-8")
            print(f"rewrote {page.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
