"""How fast the leaderboard Space answers: 100 synthetic models x 36 tasks (the issue's target:
every interaction's server handler < 0.5 s; the page interactive within 3 s of load).

python benchmarks/bench_space.py [--models 100] [--repeats 7] [--no-server] [--no-browser]

Three measurements, in one run, against a baseline measured in the same run (a 4096x384 @
384x4096 float32 matmul, as in bench_metrics.py):

1. in process: each handler function of space/app.py (filtering, styling, CSV writing, figures);
2. over HTTP: the same events through gradio_client against the app started as users start it,
   which adds Gradio's pre/post-processing and serialisation (the browser-only URL script is not
   run there);
3. in Chromium (if installed): seconds from navigation until the overall table shows its rows.
"""

from __future__ import annotations

import argparse
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "space"))

import app  # noqa: E402
from synthetic import write_synthetic_mteb_scores, write_synthetic_results  # noqa: E402


def timed(fn: Any, repeats: int) -> tuple[float, float]:
    """Median and maximum wall time of ``repeats`` calls."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), max(times)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--no-server", action="store_true")
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args()

    a = np.random.default_rng(0).standard_normal((4096, 384)).astype(np.float32)
    baseline = min(timed(lambda: a @ a.T, 5))
    results = Path(tempfile.mkdtemp(prefix="chemteb-space-bench-"))
    write_synthetic_results(results, n_models=args.models, seed=0, incomplete=5, malformed=3)
    # general-domain scores beside the results, where the app looks for them
    write_synthetic_mteb_scores(
        results / app.MTEB_SCORES_FILE, n_models=args.models, seed=1, missing=3
    )
    n_tasks = len(list((next(results.glob("synthetic-org0__*")) / ("0" * 40)).glob("*.json"))) - 1

    start = time.perf_counter()
    state = app.build_state([results])
    build_s = time.perf_counter() - start
    bench = "ChemTEB(paper)"
    v = app.parse_query(state, {})
    cases = {
        "filters changed (all tables, CSVs, plots)": lambda: app.view_all(
            state,
            bench,
            "open",
            ["100M-500M", "< 100M"],
            [],
            "model",
            "",
            "Retrieval",
            [],
            "Retrieval",
            "models",
            "spearman",
        ),
        "benchmark switched (no filters)": lambda: app.view_all(
            state, bench, "all", [], [], "", "", v["type"], [], v["vs_type"], "tasks", "spearman"
        ),
        "task picked": lambda: app.view_task(state, bench, "all", [], [], "", "ChemNQRetrieval"),
        "task type of the distribution": lambda: app.view_distribution(
            state, bench, "all", [], [], "", "Bitext mining"
        ),
        "radar models": lambda: app.view_radar(
            state, bench, "all", [], [], "", [r["Model"] for r in state.boards[bench].overall[:5]]
        ),
        "ChemTEB vs MTEB type (bootstrap of rho, 1,000 resamples)": lambda: app.view_domains(
            state, bench, "all", [], [], "", "Pair classification"
        ),
        "correlations, task x task": lambda: app.view_correlations(
            state, bench, "all", [], [], "", "tasks", "spearman"
        ),
        "correlations, model x model (clustered)": lambda: app.view_correlations(
            state, bench, "all", [], [], "", "models", "pearson"
        ),
    }
    rows = [(name, *timed(fn, args.repeats)) for name, fn in cases.items()]

    http_rows: list[tuple[str, float, float]] = []
    page_s: float | None = None
    if not args.no_server:
        port = free_port()
        proc = subprocess.Popen(
            [
                sys.executable,
                str(ROOT / "space" / "app.py"),
                "--results",
                str(results),
                "--port",
                str(port),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "GRADIO_ANALYTICS_ENABLED": "False"},
        )
        url = f"http://127.0.0.1:{port}/"
        try:
            for _ in range(600):
                try:
                    urllib.request.urlopen(url, timeout=2).close()
                    break
                except OSError:
                    time.sleep(0.2)
            from gradio_client import Client

            client = Client(
                url, verbose=False, download_files=False
            )  # as a browser: no file fetches
            controls = [
                bench,
                "open",
                ["< 100M"],
                [],
                "model",
                "ChemNQRetrieval",
                "Retrieval",
                [],
                "Retrieval",
                "tasks",
                "spearman",
            ]
            http_rows.append(
                (
                    "filters changed, over HTTP",
                    *timed(lambda: client.predict(*controls, api_name="/on_filters"), args.repeats),
                )
            )
            http_rows.append(
                (
                    "distribution type, over HTTP (Gradio's round trip: a tiny handler)",
                    *timed(
                        lambda: client.predict(
                            *controls[:5], "Retrieval", api_name="/distribution"
                        ),
                        args.repeats,
                    ),
                )
            )
            for label, api, extra in (
                ("ChemTEB vs MTEB type, over HTTP", "/domains", ["Pair classification"]),
                ("model x model correlations, over HTTP", "/correlations", ["models", "spearman"]),
            ):
                http_rows.append(
                    (
                        label,
                        *timed(
                            lambda api=api, extra=extra: client.predict(
                                *controls[:5], *extra, api_name=api
                            ),
                            args.repeats,
                        ),
                    )
                )
            if not args.no_browser and Path("/usr/bin/chromium").exists():
                page_s = page_load_seconds(url)
        finally:
            proc.terminate()
            proc.wait(timeout=30)

    lines = [
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}. "
        f"Baseline: a 4096x384 @ 384x4096 float32 matmul took {baseline * 1000:.1f} ms in this run.",
        f"Synthetic results: {args.models} models x {n_tasks} task files (5 incomplete, 3 broken "
        f"files); reading them and building all leaderboards at start: {build_s:.2f} s.",
        "",
        "| interaction | median (s) | max (s) | median / baseline |",
        "|---|---:|---:|---:|",
    ]
    for name, med, worst in [*rows, *http_rows]:
        lines.append(f"| {name} | {med:.3f} | {worst:.3f} | {med / baseline:.2f} |")
    if page_s is not None:
        lines.append(
            f"\nChromium: the overall table showed its rows {page_s:.2f} s after navigation."
        )
    text = "\n".join(lines)
    print(text)
    out = ROOT / "benchmarks" / "out"
    out.mkdir(exist_ok=True)
    (out / "bench_space.md").write_text(text + "\n")


def page_load_seconds(url: str) -> float:
    """Seconds from navigation until the overall table's first model cell has text."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        f"--user-data-dir={tempfile.mkdtemp(prefix='chromium-')}",
        "--window-size=1600,1200",
    ):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        start = time.perf_counter()
        driver.get(url)
        while time.perf_counter() - start < 60:
            cells = driver.find_elements(
                By.CSS_SELECTOR, "#overall-table [role='gridcell'][data-col='1']"
            )
            if any(c.text.strip() for c in cells):
                return time.perf_counter() - start
            time.sleep(0.05)
        raise RuntimeError("the overall table did not render within 60 s")
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
