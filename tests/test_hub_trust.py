"""Issue 25 ("Trust, round 2"), the Hub side: what `submit --local` packs, what a merged card reads
as in huggingface_hub's own readers, and dry runs and hostile inputs that must end in one line.

One wheel is built per module (a clone of this checkout's HEAD, ~5 s); the loopback Hub
(tests/helpers/fake_hub.py) serves the real clients in subprocesses.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from chemteb_eval.cli import main
from chemteb_eval.errors import ChemtebError
from chemteb_eval.hub import jobs
from chemteb_eval.hub.model_card import CardMergeError, card_with_results
from tests.conftest import REPO_ROOT
from tests.helpers.fake_hub import FakeHub

sys.path.insert(0, str(REPO_ROOT / "space"))
from synthetic import write_synthetic_results

TOKEN = "hf_alice_write"
# Planted beside the tracked files: none may reach a wheel or a Space.
PLANTED = {
    ".env": "HF_TOKEN=hf_planted_root\n",
    "chemteb_eval/.env": "HF_TOKEN=hf_planted_package\n",
    "chemteb_eval/secret_token.txt": "hf_planted_txt\n",
    "metrics/classification/hf_token": "hf_planted_metrics\n",
}


_IDENTITY = ("-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false")


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *_IDENTITY, *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def _clone(dest: Path) -> Path:
    subprocess.run(["git", "clone", "--quiet", str(REPO_ROOT), str(dest)], check=True)
    return dest


def _plant(root: Path) -> None:
    for name, text in PLANTED.items():
        (root / name).write_text(text)


# -- item 5: the --local wheel holds the tracked files, and its message says which ----------


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, jobs.LocalWheel, list[str]]:
    clone = _clone(tmp_path_factory.mktemp("clone") / "chemteb-eval")
    _plant(clone)
    said: list[str] = []
    wheel = jobs.build_local_wheel(tmp_path_factory.mktemp("wheel"), root=clone, log=said.append)
    return clone, wheel, said


def test_item5_local_wheel_excludes_untracked(
    built: tuple[Path, jobs.LocalWheel, list[str]],
) -> None:
    clone, wheel, said = built
    names = set(zipfile.ZipFile(wheel.path).namelist())
    for planted in PLANTED:
        assert not any(n.endswith(Path(planted).name) for n in names), planted
    # Exactly the commit's files: the package, and metrics/ where the wheel force-includes it.
    tracked = _git(clone, "ls-files", "chemteb_eval", "metrics").split()
    expected = {n.replace("metrics/", "chemteb_eval/_metrics/", 1) for n in tracked}
    assert {n for n in names if ".dist-info/" not in n} == expected
    # The "clean" word is true: the commit alone, and the left-out files are named.
    head = _git(clone, "rev-parse", "HEAD").strip()
    assert wheel.state.describe() == head[:12] and wheel.state.changed == ()
    assert set(PLANTED) <= set(wheel.state.untracked)
    assert len(said) == 1 and "chemteb_eval/.env" in said[0] and "not tracked" in said[0]


def test_item5_dirty_checkout_is_said_and_copied_as_it_is(tmp_path: Path) -> None:
    clone = _clone(tmp_path / "c")
    _plant(clone)
    (clone / "chemteb_eval" / "widget.py").write_text("CHANGED = True\n")
    (clone / "chemteb_eval" / "staged_new.py").write_text("NEW = 1\n")
    _git(clone, "add", "chemteb_eval/staged_new.py")
    (clone / "chemteb_eval" / "py.typed").unlink()
    state = jobs.checkout_state(clone)
    assert state.changed == (
        "chemteb_eval/py.typed",
        "chemteb_eval/staged_new.py",
        "chemteb_eval/widget.py",
    )
    assert state.describe().endswith(
        "with uncommitted changes to chemteb_eval/py.typed, chemteb_eval/staged_new.py, "
        "chemteb_eval/widget.py"
    )
    assert jobs.checkout_commit(clone) == state.describe()
    out = tmp_path / "copy"
    copied = jobs.copy_tracked_files(clone, out)
    assert (out / "chemteb_eval" / "widget.py").read_text() == "CHANGED = True\n"
    assert (out / "chemteb_eval" / "staged_new.py").is_file()
    assert not (out / "chemteb_eval" / "py.typed").exists()
    assert not any((out / name).exists() for name in PLANTED)
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == copied


def test_item5_a_tracked_symlink_to_an_untracked_file_is_refused(tmp_path: Path) -> None:
    clone = _clone(tmp_path / "c")
    _plant(clone)
    (clone / "chemteb_eval" / "link.txt").symlink_to("../.env")
    _git(clone, "add", "chemteb_eval/link.txt")
    _git(clone, "commit", "--quiet", "-m", "a link")
    with pytest.raises(ChemtebError, match=r"chemteb_eval/link\.txt is a symlink"):
        jobs.copy_tracked_files(clone, tmp_path / "copy")


def test_item5_not_a_checkout_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ChemtebError, match="git"):
        jobs.checkout_state(tmp_path)
    clone = _clone(tmp_path / "c")
    with pytest.raises(ChemtebError, match="not the top of a git checkout"):
        jobs.checkout_state(clone / "chemteb_eval")


def test_item5_submit_local_dry_run_names_the_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    clone = _clone(tmp_path / "c")
    _plant(clone)
    (clone / "docs" / "hub.md").write_text("edited\n")
    monkeypatch.setattr(jobs, "_checkout_root", lambda: clone)
    args = ["submit", "-m", "alice/model", "--flavor", "cpu-basic", "--local", "--dry-run"]
    assert main(args) == 0
    out = capsys.readouterr().out
    head = _git(clone, "rev-parse", "HEAD").strip()[:12]
    assert f"from {head} with uncommitted changes to docs/hub.md;" in out
    assert "left out of the wheel (not tracked by git): " in out


# -- item 9: the card the Hub reads ---------------------------------------------------------


def _results(tmp_path: Path) -> Path:
    root = write_synthetic_results(tmp_path / "results", n_models=1, seed=5)
    folder = next(root.iterdir()) / ("0" * 40)
    keep = {"ChemNQRetrieval.json", "SDSGlovesClassification.json", "model_meta.json"}
    for path in folder.iterdir():
        if path.name not in keep:
            path.unlink()
    return folder


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory) -> list:
    from chemteb_eval.hub.model_card import eval_results, find_task_results

    _, found = find_task_results(_results(tmp_path_factory.mktemp("r")), log=lambda _: None)
    return eval_results(found)


def _read_like_a_client(card: str, tmp_path: Path) -> dict:
    """What huggingface_hub's own readers see: metadata_load on the file, and ModelCard."""
    from huggingface_hub import ModelCard
    from huggingface_hub.repocard import metadata_load

    path = tmp_path / "README.md"
    path.write_text(card, encoding="utf-8", newline="")
    data = metadata_load(path)
    assert data is not None
    parsed = ModelCard.load(path)  # as from the Hub: the file read as utf-8-sig
    assert parsed.data.to_dict().get("license") == data.get("license")
    assert {r.dataset_type for r in parsed.data.eval_results or []} >= {
        "BASF-AI/ChemNQRetrieval",
        "BASF-AI/SDSGlovesClassification",
    }
    return data


LICENSED = "license: apache-2.0\ntags:\n- chemistry\n- embeddings\ncustom: keep me\n"


@pytest.mark.parametrize(
    "card",
    [
        f"---\n{LICENSED}...\n\n# me/model\n",  # YAML's document end marker as the closing line
        f"---\n{LICENSED}...\n# only a comment\n---\n\n# me/model\n",  # the Hub reads up to ---
        f"--- \n{LICENSED}---\n\n# me/model\n",  # an opening line the Hub's pattern refuses
        f"\n\n---\n{LICENSED}---\n\n# me/model\n",  # blank lines first: the Hub reads it
        f"\ufeff---\n{LICENSED}---\n\n# me/model\n",
        "---\r\n" + LICENSED.replace("\n", "\r\n") + "---\r\n\r\n# me/model\r\n",
    ],
)
def test_item9_the_merged_card_reads_back_in_huggingface_hub(
    card: str, ours: list, tmp_path: Path
) -> None:
    merged = card_with_results(card, "me/model", ours)
    assert merged is not None
    data = _read_like_a_client(merged, tmp_path)
    assert data["license"] == "apache-2.0" and data["tags"] == ["chemistry", "embeddings"]
    assert data["custom"] == "keep me" and data["model-index"][0]["name"] == "me/model"
    assert merged.rstrip().endswith("# me/model")
    assert card_with_results(merged, "me/model", ours) is None  # a second push is a no-op


@pytest.mark.parametrize(
    ("card", "key", "lines"),
    [
        (
            "---\nlicense: mit\nmodel-index:\n- name: a/b\n  results: []\n"
            "model-index:\n- name: me/model\n  results: []\n---\n",
            "model-index",
            "lines 3 and 6",
        ),
        ("---\nlicense: mit\ntags: [x]\nlicense: apache-2.0\n---\n", "license", "lines 2 and 4"),
        (
            "---\nmodel-index:\n- name: me/model\n  results: []\n  results: []\n---\n",
            "results",
            "lines 4 and 5",
        ),
    ],
)
def test_item9_a_repeated_key_is_refused_by_name(
    card: str, key: str, lines: str, ours: list
) -> None:
    with pytest.raises(CardMergeError, match=f"the key '{key}' twice \\({lines}\\)"):
        card_with_results(card, "me/model", ours)


def test_item9_metadata_that_goes_on_after_the_end_marker_is_refused(ours: list) -> None:
    card = "---\nlicense: mit\n...\nnot a comment\n---\n\n# T\n"
    with pytest.raises(CardMergeError, match=r"after YAML's end marker '\.\.\.' \(line 3\)"):
        card_with_results(card, "me/model", ours)


# -- items 9 and 21 through the CLI, against the loopback Hub -------------------------------


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    server = FakeHub()
    server.add_token(TOKEN, "alice", orgs=("chemteb",))
    yield server
    server.close()


def _env(tmp_path: Path, endpoint: str, offline: bool = False) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(
        HF_ENDPOINT=endpoint,
        HF_HOME=str(tmp_path / "hf-home"),
        HF_HUB_DISABLE_XET="1",
        HF_HUB_DISABLE_TELEMETRY="1",
        HF_TOKEN=TOKEN,
    )
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    return env


def _run(
    tmp_path: Path, endpoint: str, *args: str, offline: bool = False
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        env=_env(tmp_path, endpoint, offline),
        timeout=300,
        cwd=tmp_path,
    )


def test_item9_a_dot_closed_card_pushed_and_read_by_a_real_client(
    hub: FakeHub, tmp_path: Path
) -> None:
    hub.add_commit(
        "alice/model", {"README.md": f"---\n{LICENSED}...\n\n# T\n".encode()}, repo_type="model"
    )
    results = str(_results(tmp_path))
    push = ("-m", "chemteb_eval.cli", "push-results", results, "--repo-id", "alice/model")
    done = _run(tmp_path, hub.url, *push)
    assert done.returncode == 0, done.stderr
    code = (
        "import json; from huggingface_hub import ModelCard\n"
        "c = ModelCard.load('alice/model')\n"
        "print(json.dumps({'license': c.data.license, 'tags': c.data.tags, "
        "'custom': c.data.to_dict().get('custom'), "
        "'datasets': sorted({r.dataset_type for r in c.data.eval_results})}))"
    )
    read = _run(tmp_path, hub.url, "-c", code)
    assert read.returncode == 0, read.stderr
    assert json.loads(read.stdout.strip().splitlines()[-1]) == {
        "license": "apache-2.0",
        "tags": ["chemistry", "embeddings"],
        "custom": "keep me",
        "datasets": ["BASF-AI/ChemNQRetrieval", "BASF-AI/SDSGlovesClassification"],
    }
    sha = hub.repos[("model", "alice/model")].refs["main"]
    again = _run(tmp_path, hub.url, *push)
    assert again.returncode == 0 and "nothing to commit" in again.stdout, again.stderr
    assert hub.repos[("model", "alice/model")].refs["main"] == sha


def test_issue25_a_card_that_is_not_utf8_is_named(hub: FakeHub, tmp_path: Path) -> None:
    card = b"---\nlicense: mit\n---\n\n# caf\xe9\n"
    hub.add_commit("alice/model", {"README.md": card}, repo_type="model")
    done = _run(
        tmp_path,
        hub.url,
        *("-m", "chemteb_eval.cli", "push-results", str(_results(tmp_path))),
        *("--repo-id", "alice/model", "--dry-run"),
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "alice/model/README.md is not UTF-8 text (byte 27, line 5)" in done.stderr


def test_item21_dry_run_offline_prints_the_card(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    results = str(_results(tmp_path))
    args = ["push-results", results, "--repo-id", "alice/model", "--dry-run"]
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert "HF_HUB_OFFLINE is set" in out and "what a repo without a card would get" in out
    assert "+model-index:" in out and "(not read: Hub unreachable)" in out
    assert "Traceback" not in err
    assert main(args[:-1]) == 1  # a real push stops, in one line
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "HF_HUB_OFFLINE is set" in err


def test_item21_dry_run_offline_through_the_command(tmp_path: Path) -> None:
    results = str(_results(tmp_path))
    push = ("-m", "chemteb_eval.cli", "push-results", results, "--repo-id", "alice/model")
    dry = _run(tmp_path, "http://127.0.0.1:9", *push, "--dry-run", offline=True)
    assert dry.returncode == 0 and "Traceback" not in dry.stderr, dry.stderr
    assert "+model-index:" in dry.stdout and "[dry run] would change: README.md" in dry.stdout
    real = _run(tmp_path, "http://127.0.0.1:9", *push, offline=True)
    assert real.returncode == 1 and "Traceback" not in real.stderr
    assert real.stderr.startswith("chemteb: read the card of alice/model: HF_HUB_OFFLINE is set")


@pytest.mark.slow  # huggingface_hub retries a refused connection five times (~25 s)
def test_item21_dry_run_with_the_hub_unreachable(tmp_path: Path) -> None:
    results = str(_results(tmp_path))
    push = ("-m", "chemteb_eval.cli", "push-results", results, "--repo-id", "alice/model")
    dry = _run(tmp_path, "http://127.0.0.1:9", *push, "--dry-run")
    assert dry.returncode == 0 and "Traceback" not in dry.stderr, dry.stderr
    assert "cannot reach http://127.0.0.1:9 and no copy is cached" in dry.stdout
    assert "+model-index:" in dry.stdout and "[dry run] would change: README.md" in dry.stdout


# -- other hostile inputs -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["publish-metrics", "--namespace", "..", "--dry-run"], "namespace: '..'"),
        (["publish-metrics", "--namespace", "a b", "--dry-run"], "namespace: 'a b'"),
        (
            ["publish-dataset", "--namespace", "..", "--dry-run", "--scale", "small"],
            "namespace: '..'",
        ),
        (
            ["submit", "-m", "alice/model", "--flavor", "cpu-basic", "--namespace", "../x"],
            "--namespace: '../x'",
        ),
        (["submit", "-m", "alice/model", "--flavor", "cpu-basic", "--timeout", "abc"], "timeout"),
        (["submit", "-m", "alice/model", "--flavor", "cpu-basic", "--timeout", "0m"], "timeout"),
        (["submit", "-m", "alice/model", "--flavor", "cpu-basic", "--image", ""], "image: ''"),
    ],
)
def test_issue25_hostile_arguments_are_one_line(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


@pytest.mark.parametrize(
    ("meta", "message"),
    [
        ("[1, 2]", None),  # not an object: no name, the repo id is used
        ('{"name": "a/b\\n# injected"}', "not a model id on one line"),
        ('{"name": 5}', "not a model id on one line"),
        ("[" * 100_000, "is not valid JSON"),
    ],
)
def test_issue25_hostile_model_meta_is_named(
    tmp_path: Path, meta: str, message: str | None
) -> None:
    from chemteb_eval.hub.model_card import find_task_results

    folder = _results(tmp_path)
    (folder / "model_meta.json").write_text(meta)
    if message is None:
        model, found = find_task_results(folder, log=lambda _: None)
        assert model is None and found
        return
    with pytest.raises(ValueError, match=f"model_meta.json.*{message}"):
        find_task_results(folder, log=lambda _: None)


def test_issue25_a_metric_folder_without_its_space_files_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "sts").mkdir()
    (tmp_path / "sts" / "sts.py").write_text("# a module alone\n")
    args = ["publish-metrics", "--namespace", "chemteb", "--metric", "sts", "--dry-run"]
    assert main([*args, "--metrics-dir", str(tmp_path)]) == 2
    assert "has no README.md, app.py, requirements.txt." in capsys.readouterr().err


def test_issue25_publishing_leaves_hidden_and_stray_files_out(hub: FakeHub, tmp_path: Path) -> None:
    import shutil

    metrics = tmp_path / "metrics"
    shutil.copytree(REPO_ROOT / "metrics" / "sts", metrics / "sts")
    (metrics / "sts" / ".env").write_text("HF_TOKEN=hf_planted\n")
    (metrics / "sts" / "notes_token.txt").write_text("hf_planted\n")
    dataset = tmp_path / "ds"
    (dataset / "data").mkdir(parents=True)
    (dataset / "README.md").write_text("---\nconfigs: []\n---\n")
    (dataset / "data" / "test.parquet").write_bytes(b"PAR1")
    (dataset / ".env").write_text("HF_TOKEN=hf_planted\n")
    (dataset / "data" / ".netrc").write_text("machine x\n")
    cli = ("-m", "chemteb_eval.cli")
    space = ("publish-metrics", "--namespace", "chemteb", "--metric", "sts")
    done = _run(tmp_path, hub.url, *cli, *space, "--metrics-dir", str(metrics))
    assert done.returncode == 0, done.stderr
    from chemteb_eval.hub.bundle import bundle_space

    published = set(hub.files("chemteb/sts", repo_type="space")) - {".gitattributes"}
    # exactly the self-contained Space generated from the folder's four files (and tests.py)
    assert published == set(bundle_space(REPO_ROOT / "metrics" / "sts", "sts").files)
    assert {"README.md", "app.py", "requirements.txt", "sts.py"} <= published
    assert not published & {".env", "notes_token.txt"}
    data = ("publish-dataset", "--folder", str(dataset), "--repo-id", "chemteb/ds")
    dry = _run(tmp_path, hub.url, *cli, *data, "--dry-run")
    assert dry.returncode == 0 and "would upload README.md, data/test.parquet\n" in dry.stdout
    done = _run(tmp_path, hub.url, *cli, *data)
    assert done.returncode == 0, done.stderr
    uploaded = hub.files("chemteb/ds", repo_type="dataset")
    assert sorted(set(uploaded) - {".gitattributes"}) == ["README.md", "data/test.parquet"]
    assert yaml.safe_load(uploaded["README.md"].split(b"---")[1]) == {"configs": []}
