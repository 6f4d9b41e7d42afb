"""A published metric Space works for someone who has only ``evaluate`` installed.

The fast tests read what ``bundle_space`` generates with evaluate's own import scanner
(``evaluate.loading.get_imports``): every bundled file is fetched, nothing imports chemteb_eval,
the code is ours line for line except the imports. The slow one builds a venv with evaluate,
numpy, scipy and scikit-learn only (no chemteb-eval), and there loads each of the eight bundles
from a folder — and pair classification from the loopback Hub after ``publish-metrics`` — runs
its doctests (evaluate's harness) and its ``tests.py`` cases, and gets exactly the checkout's
numbers. Cost: fast ~3 s; slow ~60 s (one venv, pip's cache makes the installs local).
"""

from __future__ import annotations

import ast
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chemteb_eval.hub.bundle import LIGHT, bundle_space, flat_name
from chemteb_eval.metric_docs import METRIC_NAMES
from tests.conftest import REPO_ROOT
from tests.helpers.fake_hub import FakeHub

METRICS = REPO_ROOT / "metrics"


def _write(bundle: Any, folder: Path) -> Path:
    folder.mkdir(parents=True)
    for name, text in bundle.files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _without_imports(text: str) -> str:
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if hasattr(node, "body") and isinstance(node.body, list):
            node.body = [n for n in node.body if not isinstance(n, (ast.Import, ast.ImportFrom))]
    return ast.dump(tree)


@pytest.mark.parametrize("name", METRIC_NAMES)
def test_the_bundle_is_self_contained_and_our_code(name: str, tmp_path: Path) -> None:
    from evaluate.loading import get_imports

    bundle = bundle_space(METRICS / name, name)
    folder = _write(bundle, tmp_path / name)
    bundled = {f"{flat_name(m)}.py" for m in bundle.modules}
    assert (
        set(bundle.files)
        == {f"{name}.py", "app.py", "requirements.txt", "README.md", "tests.py"} | bundled
    )
    # evaluate's scanner, on the generated script: it fetches every bundled file and asks for
    # no library but the light ones
    imports = get_imports(str(folder / f"{name}.py"))
    internal = {f"{n}.py" for kind, n, _, _ in imports if kind == "internal"}
    assert internal == bundled
    assert not [i for i in imports if i[0] == "external"]  # no "# From:" URL survives
    libraries = {n for kind, n, _, _ in imports if kind == "library"}
    assert libraries - set(sys.stdlib_module_names) <= LIGHT and "chemteb_eval" not in libraries
    # no generated file imports chemteb_eval; every relative import names a bundled file
    for file, text in bundle.files.items():
        if not file.endswith(".py"):
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Import):
                assert all(a.name.split(".")[0] != "chemteb_eval" for a in node.names), file
            elif isinstance(node, ast.ImportFrom):
                absolute = "" if node.level else (node.module or "")
                assert absolute.split(".")[0] != "chemteb_eval", (file, node.module)
                if node.level:
                    targets = [node.module] if node.module else [a.name for a in node.names]
                    assert all(f"{t}.py" in bundled for t in targets), (file, targets)
    # the same code as the checkout's, but for its imports
    for module in bundle.modules:
        source = Path(__import__("importlib").util.find_spec(module).origin)
        assert _without_imports(bundle.files[f"{flat_name(module)}.py"]) == _without_imports(
            source.read_text()
        ), module
    script = bundle.files[f"{name}.py"]
    assert _without_imports(script) == _without_imports((METRICS / name / f"{name}.py").read_text())
    requirements = bundle.files["requirements.txt"].split()
    assert not any(r.startswith("chemteb") for r in requirements)
    assert {r.split("=")[0].split(">")[0].split("<")[0] for r in requirements} <= {
        "numpy", "scipy", "scikit-learn", "evaluate", "datasets", "gradio"
    }  # fmt: skip
    assert bundle.files["README.md"] == (METRICS / name / "README.md").read_text()


def test_a_module_that_reaches_heavy_code_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "bad.py").write_text("import evaluate\n\nfrom chemteb_eval.runner import run\n")
    (folder / "app.py").write_text("")
    with pytest.raises(ValueError, match=r"bad: the bundled code imports .*(torch|tqdm)"):
        bundle_space(folder, "bad")
    (folder / "bad.py").write_text("import chemteb_eval.scoring\n")
    with pytest.raises(ValueError, match="cannot be bundled"):
        bundle_space(folder, "bad")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["sts", "ner", "chembench"])
def test_the_generated_app_takes_our_code_from_the_bundle(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import runpy

    import gradio

    launched: list[Any] = []
    monkeypatch.setattr(gradio.Blocks, "launch", lambda self, **kw: launched.append(self))
    folder = _write(bundle_space(METRICS / name, name), tmp_path / name)
    env = runpy.run_path(str(folder / "app.py"), run_name="__main__")
    assert len(launched) == 1
    if name == "chembench":  # its app imports nothing of ours: shipped as it is, no widget
        assert (folder / "app.py").read_text() == (METRICS / name / "app.py").read_text()
        assert not (folder / "chemteb_widget.py").exists()
        return
    # what the app took from chemteb-eval is the bundle's copy, loaded by evaluate
    flat = {"sts": "chemteb_widget", "ner": "chemteb_scoring_ner"}[name]
    bundled = sys.modules[env["_module"].__module__.rpartition(".")[0] + "." + flat]
    assert Path(str(bundled.__file__)).name == f"{flat}.py"
    assert "chemteb_eval" not in bundled.__name__
    if name == "ner":
        from chemteb_eval.scoring.ner import SCHEMES

        assert env["SCHEMES"] == SCHEMES and env["SCHEMES"] is bundled.SCHEMES


def test_an_app_that_cannot_be_bundled_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "sts"
    folder.mkdir()
    for file in ("sts.py", "README.md", "requirements.txt"):
        (folder / file).write_text((METRICS / "sts" / file).read_text())
    (folder / "app.py").write_text("def f():\n    from chemteb_eval.widget import launch_widget\n")
    with pytest.raises(ValueError, match=r"app\.py imports chemteb_eval inside a block"):
        bundle_space(folder, "sts")
    (folder / "app.py").write_text("from chemteb_eval.runner import run\n")
    with pytest.raises(ValueError, match="the bundled code imports"):
        bundle_space(folder, "sts")


# -- a venv with evaluate and the light libraries only (slow) --------------------------------


@pytest.fixture(scope="module")
def light_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from .test_install import fresh_venv

    root = tmp_path_factory.mktemp("light-venv")
    return fresh_venv(root, "evaluate==0.4.6", "numpy", "scipy", "scikit-learn")


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    server = FakeHub()
    server.add_token("hf_alice_write", "alice")
    yield server
    server.close()


_LOAD_AND_SCORE = """
import doctest, json, sys, importlib.util
import evaluate
assert importlib.util.find_spec("chemteb_eval") is None, "chemteb_eval is installed here"
out = {}
for where, folder in json.loads(sys.argv[1]).items():
    metric = evaluate.load(where)
    module = sys.modules[type(metric).__module__]
    doctest.ELLIPSIS_MARKER = "[...]"
    ran = doctest.testmod(module, raise_on_error=False, report=True)
    ns = {}
    exec(open(folder + "/tests.py").read(), ns)
    cases = [{k: v for k, v in c.items() if k != "result"} for c in ns["test_cases"]]
    scores = [metric.compute(**case) for case in cases]
    out[where] = {"doctests": [ran.attempted, ran.failed], "scores": scores}
print(json.dumps(out, default=str))
"""


@pytest.mark.slow
def test_every_bundle_scores_like_the_checkout_with_evaluate_only(
    light_venv: Path, hub: FakeHub, tmp_path: Path
) -> None:
    import evaluate

    from .test_hub import chemteb

    published = chemteb(
        hub, tmp_path, "publish-metrics", "--namespace", "alice", "--metric", "pair_classification"
    )
    assert published.returncode == 0, published.stderr
    targets = {
        str(_write(bundle_space(METRICS / n, n), tmp_path / "bundles" / n) / f"{n}.py"): str(
            METRICS / n
        )
        for n in METRIC_NAMES
    }
    targets["alice/pair_classification"] = str(METRICS / "pair_classification")
    from .test_install import _in_venv

    python = str(light_venv / "bin" / "python")
    done = _in_venv(light_venv, hub, tmp_path, python, "-c", _LOAD_AND_SCORE, json.dumps(targets))
    assert done.returncode == 0, done.stderr[-4000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(got) == set(targets)
    for where, folder in targets.items():
        attempted, failed = got[where]["doctests"]
        assert attempted > 1 and failed == 0, (where, got[where]["doctests"])
        here = evaluate.load(folder)
        ns: dict[str, Any] = {}
        exec((Path(folder) / "tests.py").read_text(), ns)
        for case, theirs in zip(ns["test_cases"], got[where]["scores"], strict=True):
            mine = here.compute(**{k: v for k, v in case.items() if k != "result"})
            assert json.loads(json.dumps(mine, default=str)) == theirs, where  # exactly equal


@pytest.mark.slow
def test_attack_each_published_widget_space_starts_without_chemteb_eval(tmp_path: Path) -> None:
    """Found by an outside attack: the widget once looked its example upload up by name and
    imported it on demand, which the bundle cannot rewrite, so every widget Space failed at
    start (``No module named 'chemteb_eval.scoring'``). Each bundle's ``app.py`` is started as
    a Space starts it, with chemteb-eval made unimportable and gradio's launch stubbed. Cost:
    ~30 s (six processes importing gradio)."""
    import subprocess

    from chemteb_eval.metric_docs import METRICS as ROWS

    widgets = [m.name for m in ROWS if m.example is not None]
    assert len(widgets) >= 6
    for name in widgets:
        space = _write(bundle_space(METRICS / name, name), tmp_path / name)
        starter = (
            "import runpy, sys\n"
            "sys.modules['chemteb_eval'] = None  # the Space has no chemteb-eval\n"
            "import gradio\n"
            "gradio.Blocks.launch = lambda self, *a, **k: print('LAUNCHED', len(self.fns))\n"
            "runpy.run_path('app.py', run_name='__main__')\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", starter],
            cwd=space,
            capture_output=True,
            text=True,
            timeout=300,
            env={
                "PATH": "/usr/bin:/bin",
                "HOME": str(space),
                "HF_HUB_OFFLINE": "1",
                "HF_MODULES_CACHE": str(space / ".modules"),
                "GRADIO_ANALYTICS_ENABLED": "False",
            },
        )
        assert done.returncode == 0 and "LAUNCHED" in done.stdout, (name, done.stderr[-600:])
