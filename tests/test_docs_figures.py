"""The figures the README and the docs print are ``scripts/docs_figures.py``'s, which measured
them by running the very commands the pages show: every marked figure equals its rendering from
``docs/figures.json``, and the scores there are those the run wrote. Cost: < 1 s (the slow
test that reruns the command is ``test_pipchem``'s and the first-hour tests')."""

from __future__ import annotations

import importlib.util
import json
from types import ModuleType

from .conftest import REPO_ROOT


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "docs_figures", REPO_ROOT / "scripts" / "docs_figures.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_marked_figure_is_the_record_of_a_run() -> None:
    script = _script()
    figures = json.loads((REPO_ROOT / "docs" / "figures.json").read_text(encoding="utf-8"))
    marked = 0
    for page in script.PAGES:
        text = page.read_text(encoding="utf-8")
        marked += len(script.REGION.findall(text)) + len(script.INLINE.findall(text))
        assert script.rewrite(text, figures) == text, (
            f"{page.relative_to(REPO_ROOT)}: a figure differs from docs/figures.json; run "
            "python scripts/docs_figures.py (or --render after editing the pages)"
        )
    assert marked >= 3  # the README's two times and the run's table


def test_the_record_is_one_runs_seven_pipchem_scores() -> None:
    from chemteb_eval.tasks import benchmark_tasks

    figures = json.loads((REPO_ROOT / "docs" / "figures.json").read_text(encoding="utf-8"))
    run = figures["main_run"]
    assert run["command"] == "chemteb run"
    assert list(run["scores"]) == [t.name for t in benchmark_tasks("PipChem")]
    assert run["scores"] == run["warm_scores"]  # a rerun prints the first run's
    assert 0 < run["warm_seconds"] < run["cold_seconds"]
