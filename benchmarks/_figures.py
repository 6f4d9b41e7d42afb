"""One way for a benchmark to put its figures in the docs: merge them, dated, into
``docs/figures.json`` under the benchmark's key (other keys kept), then let
``scripts/docs_figures.py --render`` rewrite every ``<!-- fig:KEY -->`` in the pages.

Benchmarks run as scripts (``python benchmarks/bench_x.py``), so this folder is on ``sys.path``
and they import it as ``from _figures import record``.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
FLAGS = ("avx2", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile", "amx_int8")


def cpu() -> dict[str, Any]:
    """The CPU's model name, its core count and which of ``FLAGS`` it has: the machines these
    benchmarks run on change between sessions (an AMD EPYC without AMX, an Intel Xeon with it),
    so every record says which one measured it."""
    text = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    model = next((line.split(":", 1)[1].strip() for line in text.splitlines()
                  if line.startswith("model name")), platform.processor())  # fmt: skip
    found = set(next((line.split(":", 1)[1].split() for line in text.splitlines()
                      if line.startswith("flags")), []))  # fmt: skip
    return {"model": model, "cores": os.cpu_count(), "flags": [f for f in FLAGS if f in found]}


def record(key: str, values: dict[str, Any]) -> None:
    """``values`` (with today's date and this machine's CPU) as ``docs/figures.json[key]``,
    then the pages rendered."""
    path = REPO / "docs" / "figures.json"
    figures = json.loads(path.read_text()) if path.is_file() else {}
    figures[key] = {"date": time.strftime("%Y-%m-%d"), "cpu": cpu(), **values}
    path.write_text(json.dumps(figures, indent=1) + "\n")
    subprocess.run(
        [sys.executable, str(REPO / "scripts" / "docs_figures.py"), "--render"], check=True
    )


def publish(key: str, values: dict[str, Any], *, to_docs: bool = True) -> None:
    """A benchmark's figures with the CPU that measured them: ``benchmarks/out/<key>.json``,
    printed, and (``to_docs``) recorded in ``docs/figures.json`` with the pages rendered."""
    folder = REPO / "benchmarks" / "out"
    folder.mkdir(exist_ok=True)
    text = json.dumps({"cpu": cpu(), **values}, indent=1)
    (folder / f"{key}.json").write_text(text + "\n")
    print(text)
    if to_docs:
        record(key, values)
