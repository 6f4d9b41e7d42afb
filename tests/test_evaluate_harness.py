"""evaluate's own module checks, on every ``metrics/<name>/`` folder.

``test_evaluate_harness`` is what huggingface/evaluate's ``tests/test_metric_common.py``
(``LocalModuleTest.test_load``) does to a metric folder: import the module the way
``evaluate.load`` does, refuse ``**kwargs`` in ``_compute``, and run the module's doctests (the
``Examples:`` of its class docstring) with ``evaluate.load(name)`` mapped to ``metrics/<name>``.
``test_tests_py_cases`` runs each folder's ``tests.py`` (evaluate-cli's template: a
``test_cases`` list of compute arguments and a ``result``) through ``evaluate.load``.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import math
import os
import runpy
from collections.abc import Iterator
from typing import Any
from unittest.mock import patch

import pytest

from chemteb_eval.metric_docs import METRIC_NAMES

from .conftest import REPO_ROOT

evaluate = pytest.importorskip("evaluate")

FOLDERS = sorted(p.name for p in (REPO_ROOT / "metrics").iterdir() if p.is_dir())


@pytest.fixture
def at_repo_root(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # evaluate's harness runs from its repository root with relative "metrics/<name>" paths,
    # and with doctest's ellipsis marker set to "[...]" (restored after each test).
    monkeypatch.chdir(REPO_ROOT)
    monkeypatch.setattr(doctest, "ELLIPSIS_MARKER", "[...]")
    yield


def _import(name: str) -> Any:
    factory = evaluate.loading.evaluation_module_factory(
        os.path.join("metrics", name), module_type="metric"
    )
    return importlib.import_module(factory.module_path)


def test_the_folders_are_the_metric_table() -> None:
    assert set(FOLDERS) == set(METRIC_NAMES)
    assert len(FOLDERS) == 8


@pytest.mark.parametrize("name", FOLDERS)
def test_evaluate_harness(name: str, at_repo_root: None) -> None:
    module = _import(name)
    cls = evaluate.loading.import_main_class(module.__name__)
    assert cls is not None, f"metrics/{name}: no EvaluationModule subclass"
    parameters = inspect.signature(cls._compute).parameters
    assert all(p.kind != p.VAR_KEYWORD for p in parameters.values()), (
        f"metrics/{name}: _compute takes **{[p.name for p in parameters.values() if p.kind == p.VAR_KEYWORD]}"
    )
    load = evaluate.load
    with patch(
        "evaluate.load",
        side_effect=lambda n, *a, **k: load(os.path.join("metrics", n), *a, **k),
    ):
        results = doctest.testmod(module, verbose=False, raise_on_error=True)
    assert results.failed == 0
    assert results.attempted > 1, f"metrics/{name}: {results.attempted} doctest example(s)"


@pytest.mark.parametrize("name", FOLDERS)
def test_doctests_need_neither_the_hub_nor_the_patch(name: str, at_repo_root: None) -> None:
    # What a user runs: the module's examples with no evaluate.load mapping at all (the Hub is
    # unreachable here, so an example that loaded "chemteb/<name>" or a bare name would fail).
    module = _import(name)

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"an example called evaluate.load{args}")

    with patch("evaluate.load", side_effect=refuse):
        results = doctest.testmod(module, verbose=False, raise_on_error=True)
    assert results.failed == 0 and results.attempted > 1


def _cases(name: str) -> list[dict[str, Any]]:
    path = REPO_ROOT / "metrics" / name / "tests.py"
    assert path.is_file(), f"metrics/{name}/tests.py is missing"
    # run_path compiles from source: no __pycache__ in the folder the Space is published from.
    cases: list[dict[str, Any]] = runpy.run_path(str(path))["test_cases"]
    return cases


def _check(got: Any, want: Any, where: str) -> None:
    if isinstance(want, dict):
        assert isinstance(got, dict), f"{where}: {got!r} is not a dict"
        for key, value in want.items():
            assert key in got, f"{where}: no key {key!r} in {sorted(got)}"
            _check(got[key], value, f"{where}[{key!r}]")
    elif isinstance(want, float):
        assert isinstance(got, (int, float)) and not isinstance(got, bool), where
        assert got == pytest.approx(want, abs=1e-9) or (math.isnan(want) and math.isnan(got)), (
            f"{where}: got {got!r}, want {want!r}"
        )
    else:
        assert got == want, f"{where}: got {got!r}, want {want!r}"


@pytest.mark.parametrize("name", FOLDERS)
def test_tests_py_cases(name: str) -> None:
    cases = _cases(name)
    assert len(cases) >= 2, f"metrics/{name}/tests.py: {len(cases)} case(s)"
    metric = evaluate.load(str(REPO_ROOT / "metrics" / name))
    accepted = set(inspect.signature(metric._compute).parameters) | {"predictions", "references"}
    for n, case in enumerate(cases):
        inputs = {k: v for k, v in case.items() if k != "result"}
        assert set(inputs) <= accepted, f"case {n}: {set(inputs) - accepted} not arguments"
        assert case.get("result"), f"metrics/{name}/tests.py case {n} checks nothing"
        _check(metric.compute(**inputs), case["result"], f"{name} case {n}")


def test_the_case_check_can_fail() -> None:
    with pytest.raises(AssertionError, match=r"got 0\.5"):
        _check({"a": 0.5}, {"a": 0.75}, "x")
    with pytest.raises(AssertionError, match="no key"):
        _check({"a": 0.5}, {"b": 0.5}, "x")
    with pytest.raises(AssertionError):
        _check({"a": {"n": 1}}, {"a": {"n": 2}}, "x")


def _inputs_section(name: str) -> str:
    card = (REPO_ROOT / "metrics" / name / "README.md").read_text()
    return card.split("## Inputs", 1)[1].split("## Output Values", 1)[0]


@pytest.mark.parametrize("name", FOLDERS)
def test_cards_list_the_compute_arguments_truly(name: str) -> None:
    import re

    metric = evaluate.load(str(REPO_ROOT / "metrics" / name))
    inputs = _inputs_section(name)
    params = inspect.signature(metric._compute).parameters
    for arg in metric._public_arguments():
        assert re.search(rf"(\*\*|`){arg}(\*\*|`|=)", inputs), f"metrics/{name}/README.md: {arg}"
    # A default the card writes as `name=value` is the one compute has.
    for arg, value in re.findall(r"`(\w+)=([^`]+)`", inputs):
        if arg in params:
            assert value == repr(params[arg].default), f"metrics/{name}/README.md: {arg}={value}"
