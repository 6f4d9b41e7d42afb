"""The backend table (``chemteb_eval/models/backends.py``): complete, the one thing ``load_encoder``
and the ``-m`` help read, the cache key of every backend pinned, one batch-size default and one
check, one OpenAI-style client for embeddings and generation."""

from __future__ import annotations

import argparse
import inspect
import re
import subprocess
import sys
from dataclasses import replace
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from types import MappingProxyType, SimpleNamespace
from typing import Any, ClassVar, get_args

import numpy as np
import pytest

import chemteb_eval.models
from chemteb_eval.errors import ChemtebError
from chemteb_eval.models import backends
from chemteb_eval.models.backends import BACKEND_TABLE, Backend, cache_variant, model_help
from chemteb_eval.models.base import DEFAULT_BATCH_SIZE, ModelMeta, check_batch_size
from chemteb_eval.models.spec import BACKEND_NEEDS, BACKENDS, ModelSpec, parse_model_spec

from .conftest import REPO_ROOT
from .helpers.loopback import chat_reply, read_json, reply_json, serving

ENCODERS = [b for b in BACKEND_TABLE.values() if b.encoder is not None]


# -- the table is complete --------------------------------------------------------------------


def test_every_backend_has_one_record_and_every_record_a_backend() -> None:
    assert tuple(BACKEND_TABLE) == get_args(Backend)
    for name, record in BACKEND_TABLE.items():
        assert record.name == name and record.roles, name
        # an encoder role comes with its loader and the framework its meta writes
        assert (record.encoder is None) == (record.load is None) == (record.framework is None)
    frameworks = [b.framework for b in ENCODERS]
    assert len(set(frameworks)) == len(frameworks)  # no two backends share a cache key by it
    # the views older code reads are the table's
    assert set(BACKENDS) == set(BACKEND_TABLE) - {"sentence-transformers"}
    assert set(BACKEND_NEEDS) == {b.name for b in ENCODERS}
    for b in ENCODERS:
        assert b.encoder is not None
        need = BACKEND_NEEDS[b.name]
        assert need == ((b.encoder.extra, b.encoder.modules) if b.encoder.extra else None)
    assert {b.name for b in BACKEND_TABLE.values() if b.generator} == {
        "openai",
        "transformers",
        "litellm",
    }


@pytest.mark.parametrize("name", list(BACKEND_TABLE))
def test_each_prefix_parses_to_its_record(name: str) -> None:
    record = BACKEND_TABLE[name]
    spec = parse_model_spec(f"{record.prefix}org/model")
    assert spec.backend == name and spec.name == "org/model" and spec.record is record
    assert str(spec) == f"{record.prefix}org/model"
    assert spec.hub_id == ("org/model" if record.hub_ids else None)
    assert parse_model_spec(spec) is spec  # a parsed spec is not parsed again


def test_an_unknown_backend_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"backend: 'tensorrt' is not a model backend; use one"):
        backends.backend_record("tensorrt")


def test_the_encoder_modules_take_their_framework_from_the_table() -> None:
    # a framework string written anywhere else would key a cache no record knows
    for path in (REPO_ROOT / "chemteb_eval" / "models").glob("*.py"):
        if path.name != "backends.py":
            assert not re.search(r"framework\s*=\s*f?[\"']", path.read_text()), path.name


def test_importing_the_table_stays_light() -> None:
    """The CLI builds its ``-m`` help from the table: no numpy, torch or httpx for that."""
    code = (
        "import sys, chemteb_eval.models, chemteb_eval.cli; "
        "print(sorted(m for m in ('numpy', 'torch', 'httpx', 'transformers') if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]"


# -- load is a lookup -------------------------------------------------------------------------


def _patched_table(monkeypatch: pytest.MonkeyPatch, **records: Any) -> None:
    table = {**BACKEND_TABLE, **records}
    monkeypatch.setattr(backends, "BACKEND_TABLE", MappingProxyType(table))


@pytest.mark.parametrize("record", ENCODERS, ids=lambda b: b.name)
def test_load_encoder_runs_the_records_loader(
    record: backends.ModelBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[ModelSpec, backends.LoadOptions]] = []
    sentinel: Any = object()

    def fake(spec: ModelSpec, options: backends.LoadOptions) -> Any:
        seen.append((spec, options))
        return sentinel

    # the table names its encoder class as "module:Class"; the class's from_spec loads it
    module = SimpleNamespace(Fake=SimpleNamespace(from_spec=fake))
    monkeypatch.setitem(sys.modules, "fake_encoders", module)  # type: ignore[arg-type]
    _patched_table(monkeypatch, **{record.name: replace(record, load="fake_encoders:Fake")})
    out = chemteb_eval.models.load_encoder(
        f"{record.prefix}org/model", device="cpu", api_base="http://x/v1"
    )
    assert out is sentinel
    ((spec, options),) = seen
    assert spec == ModelSpec(record.name, "org/model")
    assert options.device == "cpu" and options.api_base == "http://x/v1"
    # a spec parsed once already goes straight through
    assert chemteb_eval.models.load_encoder(spec, device="cpu") is sentinel


def test_load_encoder_has_no_branch_per_backend() -> None:
    source = inspect.getsource(chemteb_eval.models.load_encoder)
    named = [b for b in BACKEND_TABLE if f'"{b}"' in source]
    assert named == []


def test_a_generator_only_backend_embeds_nothing() -> None:
    with pytest.raises(ValueError, match=r"model: litellm:openai/x generates text .* embeds none"):
        chemteb_eval.models.load_encoder("litellm:openai/x")


# -- the -m help comes from the table ---------------------------------------------------------


def _option_help(command: str, option: str) -> str:
    from chemteb_eval.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    action = next(a for a in sub.choices[command]._actions if option in a.option_strings)
    return str(action.help)


def test_the_run_help_lists_every_embedding_backend() -> None:
    text = _option_help("run", "--model")
    assert text.startswith(model_help("encoder"))
    for record in BACKEND_TABLE.values():
        shown = f"{record.prefix}{record.takes} ({record.summary})"
        assert (shown in text) == (record.encoder is not None), record.name
    # and the generation backends, for ChemBench's -m
    for record in BACKEND_TABLE.values():
        assert (record.prefix + record.takes in model_help("generator")) == bool(record.generator)


# -- the cache key of every backend, pinned ---------------------------------------------------

# The embedding-cache variant each backend's vectors have always been keyed by (float32). These
# name existing cache files: a change here orphans users' caches.
TODAY = {
    "sentence-transformers": None,
    "transformers": "transformers (mean pooling)",
    "transformers-cls": "transformers (cls pooling)",
    "model2vec": None,
    "word2vec": None,
    "fasttext": None,
    "openai": None,
    "onnx": "onnxruntime",
    "onnx-int8": "onnxruntime-int8 (per text)",
}
# What each backend's encoder wrote as its framework (model_meta.json, runs.jsonl).
FRAMEWORKS = {
    "sentence-transformers": "sentence-transformers",
    "transformers": "transformers (mean pooling)",
    "transformers-cls": "transformers (cls pooling)",
    "model2vec": "model2vec",
    "word2vec": "word vectors (gensim)",
    "fasttext": "fasttext (gensim)",
    "openai": "openai-compatible-http",
    "onnx": "onnxruntime",
    "onnx-int8": "onnxruntime-int8 (per text)",
}


def _old_variant(framework: str, precision: str) -> str | None:
    """``runner.stages._identity``'s rule before the table (the string match), for comparison."""
    if precision != "float32":
        return f"{framework}/{precision}"
    if framework.startswith(("onnxruntime", "transformers (")):
        return framework
    return None


def test_every_backends_cache_identity_is_todays() -> None:
    from chemteb_eval.runner.stages import _identity

    # the keys caches were written with before the table: the backends of then keep theirs (a
    # backend added later has its own record, and no old cache to match)
    assert set(TODAY) == set(FRAMEWORKS) <= {b.name for b in ENCODERS}
    for name, variant in TODAY.items():
        record = BACKEND_TABLE[name]
        assert record.framework == FRAMEWORKS[name] and record.cache_variant == variant, name
        meta = ModelMeta("org/m", "a" * 40, 1, 3, 8, FRAMEWORKS[name], "org/m")
        for precision in ("float32", "float16", "bfloat16"):
            identity = _identity(SimpleNamespace(meta=meta), precision, None)  # type: ignore[arg-type]
            expected = variant if precision == "float32" else f"{FRAMEWORKS[name]}/{precision}"
            assert identity == {
                "model": "org/m",
                "revision": "a" * 40,
                "source": "org/m",
                "variant": expected,
                "nan_rows": False,
                "fingerprint": None,
            }, (name, precision)
            assert expected == _old_variant(FRAMEWORKS[name], precision)
    # encoders from outside the table keep the plain key; the retired batched int8 its own
    for framework in ("test", "custom", "onnxruntime-int8"):
        assert cache_variant(framework, "float32") == _old_variant(framework, "float32")


# -- one batch-size default, checked before the model loads -----------------------------------


@pytest.mark.parametrize("bad", [0, -1, True, 2.5, "8", None])
def test_a_bad_batch_size_stops_the_run_before_the_model_loads(
    bad: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from chemteb_eval.runner import run

    def never(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(chemteb_eval.models, "load_encoder", never)
    with pytest.raises(ValueError, match=r"^batch_size: "):
        run("org/model", batch_size=bad, output_dir=tmp_path / "out", log=lambda m: None)
    assert not (tmp_path / "out").exists()


def test_check_batch_size() -> None:
    assert check_batch_size(1) == 1 and check_batch_size(np.int64(64)) == 64
    with pytest.raises(ValueError, match=r"batch_size: must be positive, got 0\."):
        check_batch_size(0)
    with pytest.raises(ValueError, match=r"batch_size: must be a positive whole number, got True"):
        check_batch_size(True)
    from chemteb_eval.engine import EmbeddingEngine

    with pytest.raises(ValueError, match="batch_size: "):
        EmbeddingEngine(object(), None, batch_size=2.5)  # type: ignore[arg-type]


def test_one_batch_size_default() -> None:
    from chemteb_eval.engine import EmbeddingEngine
    from chemteb_eval.models.word_embeddings import word_embeddings
    from chemteb_eval.runner import run
    from chemteb_eval.runner.kinds import ScoreContext

    for function in (run, EmbeddingEngine.__init__, word_embeddings):
        default = inspect.signature(function).parameters["batch_size"].default
        assert default is DEFAULT_BATCH_SIZE, function
    assert ScoreContext().batch_size == DEFAULT_BATCH_SIZE
    assert f"(default: {DEFAULT_BATCH_SIZE})" in _option_help("run", "--batch-size")
    # the number is written once: other defaults are other quantities (a GPU Job's batch;
    # ChemBench's prompts per generation call; MTEB's k-means mini-batch)
    others = {"hub/jobs.py", "chembench/run.py", "chembench/cli.py", "scoring/clustering.py"}
    written = []
    for path in sorted((REPO_ROOT / "chemteb_eval").rglob("*.py")):
        rel = path.relative_to(REPO_ROOT / "chemteb_eval").as_posix()
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(
            r"\b(?:batch_size|[A-Z_]*BATCH_SIZE)\s*(?::\s*int\s*)?=\s*\d+", text
        ):
            written.append(f"{rel}: {match.group()}")
        if re.search(r'"--batch-size"[^)]*default=\d', text):
            written.append(f"{rel}: --batch-size default")
    assert [w for w in written if w.split(":")[0] not in others] == [
        "models/base.py: DEFAULT_BATCH_SIZE = 32"
    ]


# -- one OpenAI-style client ------------------------------------------------------------------


class _Api(BaseHTTPRequestHandler):
    seen: ClassVar[list[tuple[str, str | None]]] = []
    busy = 0

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = read_json(self)
        type(self).seen.append((self.path, self.headers.get("Authorization")))
        if type(self).busy:
            type(self).busy -= 1
            self.send_response(429)
            self.send_header("Retry-After", "0")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path.endswith("/embeddings"):
            reply_json(self, {"data": [{"index": 0, "embedding": [1.0, 0.0]}] * len(body["input"])})
        else:
            chat_reply(self, "[ANSWER]A[/ANSWER]")


def test_embeddings_and_generation_share_one_client(monkeypatch: pytest.MonkeyPatch) -> None:
    from chemteb_eval.chembench.generate import load_generator
    from chemteb_eval.models.http import HTTPEmbeddingEncoder

    monkeypatch.setenv("OPENAI_API_KEY", " sk-env ")  # read, and stripped, alike
    _Api.seen = []
    with serving(_Api) as base:
        monkeypatch.setenv("OPENAI_BASE_URL", base + "/")
        encoder = HTTPEmbeddingEncoder("m", backoff=0)
        _Api.busy = 1  # retried by the same loop
        generate = load_generator("openai:m", max_retries=1)
        assert generate(["Q?"]) == ["[ANSWER]A[/ANSWER]"]
    assert encoder.api_base == base and encoder.meta.framework == "openai-compatible-http"
    assert _Api.seen == [
        ("/v1/embeddings", "Bearer sk-env"),
        ("/v1/chat/completions", "Bearer sk-env"),
        ("/v1/chat/completions", "Bearer sk-env"),
    ]


def test_generation_without_a_key_for_openai_is_said_before_any_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from chemteb_eval.chembench.generate import load_generator

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ChemtebError, match=r"^model openai:gpt-x: no API key for https://api\."):
        load_generator("openai:gpt-x")
