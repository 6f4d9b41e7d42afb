from __future__ import annotations

import subprocess
import sys

import pytest

from chemteb_eval.cli import main


def test_metrics_lists_all_five_with_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["metrics"]) == 0
    out = capsys.readouterr().out
    for name in (
        "classification",
        "clustering",
        "pair_classification",
        "bitext_mining",
        "retrieval",
    ):
        assert f"chemteb/{name}" in out
    assert "skip_tied_thresholds=False" in out and "samples_per_label=8" in out


def test_console_entry_point_runs() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "chemteb_eval", "--version"], capture_output=True, text=True
    )
    assert proc.returncode == 0 and "chemteb-eval" in proc.stdout


def test_scoring_import_stays_light() -> None:
    code = (
        "import sys, chemteb_eval.scoring, chemteb_eval.tasks; "
        "print(any(m in sys.modules for m in ('torch', 'datasets', 'evaluate')))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "False"


def test_ci_runs_exactly_the_readme_test_command() -> None:
    from .conftest import REPO_ROOT

    readme = (REPO_ROOT / "README.md").read_text()
    ci = (REPO_ROOT / ".ci" / "run").read_text()
    command = next(line for line in ci.splitlines() if line.startswith("python3 -m venv"))
    assert f"\n{command}\n" in readme
    assert "chemteb run" in readme
