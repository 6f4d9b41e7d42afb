"""Install size and time of each profile (issue 15), measured in one run on this machine.

Builds the wheel of the checkout, then installs it into fresh venvs: the core profile,
``[run]``, ``[run,pipchem]`` (what ``chemteb run`` needs) and ``[all]`` — torch pinned to the CPU
wheel (``torch==2.13.0``), as the README does — and resolves a metric Space's requirements without
installing them (``pip install --dry-run --report``). Each install is timed with pip's cache warm
(the script installs each profile once untimed first), so the times measure unpacking and
linking, not the network; the same-run baseline is ``pip install numpy`` into a fresh venv.

Usage: python benchmarks/bench_install.py [--profiles core run all]   (a few minutes; ~6 GB of
temporary disk for the venvs, removed at the end)
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TORCH_CPU = "torch==2.13.0"  # the CPU wheel; an unpinned torch is the multi-GB CUDA build
PROFILES = {
    "core": ("", []),
    "run": ("[run]", [TORCH_CPU]),
    "run,pipchem": ("[run,pipchem]", [TORCH_CPU]),
    "all": ("[all]", [TORCH_CPU]),
}


def pip(python: Path, *args: str) -> None:
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", *args], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"pip install {' '.join(args)} failed:\n{done.stderr[-3000:]}")


def fresh(root: Path) -> Path:
    shutil.rmtree(root, ignore_errors=True)
    venv.create(root, with_pip=True)
    return root / "bin" / "python"


def size_mb(python: Path) -> tuple[float, int]:
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    total = sum(f.stat().st_size for f in Path(site).rglob("*") if f.is_file())
    dists = len(list(Path(site).glob("*.dist-info")))
    return total / 1e6, dists


def timed_install(root: Path, *requirements: str) -> tuple[float, float, int]:
    python = fresh(root)
    started = time.perf_counter()
    pip(python, *requirements)
    seconds = time.perf_counter() - started
    mb, dists = size_mb(python)
    return seconds, mb, dists


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", nargs="+", default=list(PROFILES), choices=list(PROFILES))
    parser.add_argument(
        "--figures",
        action="store_true",
        help="record the run in docs/figures.json and rewrite docs/install.md's table from it",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="chemteb-bench-install-") as tmp:
        work = Path(tmp)
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(work), str(REPO)],
            check=True,
        )
        (wheel,) = work.glob("chemteb_eval-*.whl")
        print(f"wheel: {wheel.name} ({wheel.stat().st_size / 1e3:.0f} kB)")

        # Warm pip's cache for everything below (untimed), then the baseline.
        for name in args.profiles:
            suffix, extra = PROFILES[name]
            pip(fresh(work / "warm"), f"{wheel}{suffix}", *extra)
        pip(fresh(work / "warm"), "numpy")
        base, base_mb, _ = timed_install(work / "base", "numpy")
        print(f"baseline: pip install numpy into a fresh venv: {base:.1f} s, {base_mb:.0f} MB")

        rows = []
        for name in args.profiles:
            suffix, extra = PROFILES[name]
            seconds, mb, dists = timed_install(work / name, f"{wheel}{suffix}", *extra)
            rows.append((name, seconds, mb, dists))
            print(f"  {name}: {seconds:.1f} s, {mb:.0f} MB, {dists} distributions", flush=True)

        report = work / "space.json"
        python = fresh(work / "space")
        requirements = (REPO / "metrics" / "pair_classification" / "requirements.txt").read_text()
        reqs = [
            str(wheel) if r.strip() == "chemteb-eval" else r.strip()
            for r in requirements.splitlines()
            if r.strip()
        ]
        pip(python, "--dry-run", "--ignore-installed", "--report", str(report), *reqs)
        resolved = sorted(i["metadata"]["name"] for i in json.loads(report.read_text())["install"])
        heavy = [
            n
            for n in resolved
            if n.lower() in {"torch", "transformers", "rdkit", "sentence-transformers"}
        ]

    print("\n| profile | install | time (x numpy baseline) | site-packages | distributions |")
    print("|---|---|---|---|---|")
    for name, seconds, mb, dists in rows:
        label = "core" if name == "core" else f"[{name}]"
        command = f'pip install "chemteb-eval{PROFILES[name][0]}"' + (
            f" {TORCH_CPU}" if PROFILES[name][1] else ""
        )
        print(
            f"| {label} | `{command}` | {seconds:.0f} s ({seconds / base:.1f}x) | {mb:,.0f} MB | {dists} |"
        )
    print(
        f"\nmetric Space requirements ({', '.join(r for r in reqs if not r.endswith('.whl'))} + "
        f"chemteb-eval): {len(resolved)} distributions, heavy ones: {heavy or 'none'}"
    )
    if args.figures and set(args.profiles) == set(PROFILES):
        record_figures(base, rows, len(resolved), heavy)


def record_figures(
    base: float, rows: list[tuple[str, float, float, int]], space: int, heavy: list[str]
) -> None:
    from _figures import record

    record(
        "install",
        {
            "baseline_seconds": round(base, 1),
            "profiles": {
                name: {"seconds": round(seconds), "mb": round(mb), "distributions": dists}
                for name, seconds, mb, dists in rows
            },
            "space_distributions": space,
            "space_heavy": heavy,
        },
    )


if __name__ == "__main__":
    main()
