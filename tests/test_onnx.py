"""The ONNX Runtime backend and token-budget batches (issue 16).

Fast: the batching rule (hypothesis), the backend choice, the fallbacks (monkeypatched export
failures, a missing onnxruntime). Slow: the bundled all-MiniLM-L6-v2 exported once per test
session (~2 s) and compared with the torch backend — vectors, truncation, prompts, int8 — and a
run through the cache with both backends.
"""

from __future__ import annotations

import importlib.util
import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chemteb_eval.engine.encode import EmbeddingEngine, token_budget_batches
from chemteb_eval.errors import MissingExtraError
from chemteb_eval.models import DEFAULT_RUNTIME, RUNTIMES, load_encoder
from chemteb_eval.models.base import ModelMeta
from chemteb_eval.results.runs import run_record

TEXTS = [
    "CC(=O)OC1=CC=CC=C1C(=O)O",
    "benzene",
    "Acetylsalicylic acid is a nonsteroidal anti-inflammatory drug used to reduce pain and fever.",
    "  leading and trailing spaces  ",
    "C" * 40 + "(=O)O",
    "water",
    "Ethanol is a volatile, flammable, colourless liquid with a characteristic odour.",
    "sodium chloride " * 200,  # far past the model's 256 tokens: truncated
]


# -- token-budget batches ---------------------------------------------------------------------


def test_token_budget_batches_by_hand() -> None:
    # median length 10, batch_size 2: budget 20 padded tokens
    lengths = [40, 30, 12, 10, 10, 10, 8, 2, 2, 2]
    batches = token_budget_batches(lengths, 2)
    assert [list(b) for b in batches] == [[0], [1], [2], [3, 4], [5, 6], [7, 8, 9]]
    assert token_budget_batches([], 4) == []
    # the cap: 16 x batch_size texts at most, however short
    # (median 20, budget 40: the 1-token texts would fit 40 to a batch)
    sizes = [len(b) for b in token_budget_batches([20] * 60 + [1] * 50, 2)]
    assert sizes == [2] * 30 + [32, 18]


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    lengths=st.lists(st.integers(0, 600), min_size=1, max_size=300),
    batch_size=st.integers(1, 64),
)
def test_token_budget_batches_properties(lengths: list[int], batch_size: int) -> None:
    lengths = sorted(lengths, reverse=True)
    batches = token_budget_batches(lengths, batch_size)
    assert [i for b in batches for i in b] == list(range(len(lengths)))  # all, once, in order
    budget = batch_size * max(int(np.median(lengths)), 1)
    for b in batches:
        assert 1 <= len(b) <= 16 * batch_size
        padded = len(b) * max(lengths[b.start], 1)
        assert len(b) == 1 or padded <= budget  # over budget only when one text is alone


class _Recorder:
    """An encoder that records its calls; with token lengths or without (as an API)."""

    def __init__(self, counts_tokens: bool) -> None:
        self.meta = ModelMeta("rec", None, None, 3, None, "test", "rec")
        self.calls: list[int] = []
        if counts_tokens:
            self.token_lengths = lambda texts, prompt: [len(t.split()) for t in texts]

    def prompt(self, task_type: str, role: Any) -> str:
        return ""

    def encode(self, texts: list[str], *, prompt: str, batch_size: int) -> np.ndarray:
        assert batch_size == len(texts)  # one model call per engine batch
        self.calls.append(len(texts))
        return np.array([[len(t), t.count(" "), 1.0] for t in texts], np.float32)


def test_engine_uses_budgets_for_local_models_and_counts_for_apis() -> None:
    texts = ["w " * n for n in (1, 1, 1, 1, 1, 1, 1, 1, 30, 1)]
    local, api = _Recorder(counts_tokens=True), _Recorder(counts_tokens=False)
    tokens = {}
    for name, encoder in (("local", local), ("api", api)):
        engine = EmbeddingEngine(encoder, None, batch_size=4, progress=False)  # type: ignore[arg-type]
        engine.prefetch(("", t) for t in texts)
        got = engine.embed(texts, "")
        assert np.array_equal(got[:, 0], [len(t) for t in texts])  # rows back in order
        tokens[name] = engine.stats.tokens
    # distinct texts only: "w " once and "w " * 30 once; the API in one batch, the local model
    # in one call per token length (issue 35: no padding), each filled to 64 positions (the
    # 30-token text runs as 3 rows, the 1-token one as 64)
    assert api.calls == [2] and local.calls == [3, 64]
    assert tokens == {"local": 31, "api": None}  # token statistics from the same lengths


def test_engine_keeps_fixed_batches_where_the_backend_says_so() -> None:
    texts = [f"t{i} " + "w " * (40 if i < 3 else 1) for i in range(20)]
    gpu_like = _Recorder(counts_tokens=True)
    gpu_like.token_budget = False  # type: ignore[attr-defined]
    engine = EmbeddingEngine(gpu_like, None, batch_size=4, progress=False)  # type: ignore[arg-type]
    engine.prefetch(("", t) for t in texts)
    assert gpu_like.calls == [4] * 5  # batch_size texts a call, longest (by tokens) first
    assert engine.stats.tokens == 3 * 41 + 17 * 2


def test_engine_budget_batches_many_texts() -> None:
    texts = [f"t{i} " + "w " * (40 if i < 3 else 1) for i in range(60)]
    local = _Recorder(counts_tokens=True)
    engine = EmbeddingEngine(local, None, batch_size=4, progress=False)  # type: ignore[arg-type]
    engine.prefetch(("", t) for t in texts)
    # one call per token length (issue 35): the three 41-token texts together (filled to 64
    # positions: 2 rows would do, 3 are there), then the 57 two-token texts in one call
    assert local.calls == [3, 57]
    assert np.array_equal(engine.embed(texts, "")[:, 0], [len(t) for t in texts])


# -- the backend choice and the fallbacks ----------------------------------------------------


def test_cli_runtime_choices_agree_with_the_models_room() -> None:
    from chemteb_eval.cli import run as evaluate

    assert evaluate._RUNTIMES == RUNTIMES and evaluate._DEFAULT_RUNTIME == DEFAULT_RUNTIME


def test_onnx_refuses_cuda_and_half_precision() -> None:
    with pytest.raises(ValueError, match="--backend torch"):
        load_encoder("onnx:org/model", device="cuda")
    with pytest.raises(ValueError, match="float32"):
        load_encoder("org/model", backend="onnx", precision="float16")
    with pytest.raises(ValueError, match="backend: 'tensorrt'"):
        load_encoder("org/model", backend="tensorrt")


def test_auto_is_onnx_only_on_a_cpu_float32_run() -> None:
    from chemteb_eval.models import _runtime_spec, parse_model_spec

    plain = parse_model_spec("org/model")
    assert _runtime_spec(plain, "auto", "cpu", "float32").backend == "onnx"
    assert _runtime_spec(plain, "auto", "cuda:0", "float32").backend == "sentence-transformers"
    assert _runtime_spec(plain, "auto", None, "bfloat16").backend == "sentence-transformers"
    assert _runtime_spec(plain, "torch", "cpu", "float32").backend == "sentence-transformers"
    assert _runtime_spec(plain, "onnx-int8", None, "float32").backend == "onnx-int8"
    other = parse_model_spec("openai:text-embedding-3-small")
    assert _runtime_spec(other, "onnx", None, "float32") == other  # only plain names change


@pytest.mark.slow
@pytest.mark.parametrize("failure", ["export", "structure", "onnxruntime"])
def test_fallback_to_torch_says_why(
    failure: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import chemteb_eval.models.onnx as onnx_module

    monkeypatch.setenv("CHEMTEB_ONNX_DIR", str(tmp_path))  # nothing exported yet
    if failure == "export":

        def broken(*args: Any, **kwargs: Any) -> None:
            raise RuntimeError("unsupported operator aten::magic")

        monkeypatch.setattr("torch.onnx.export", broken)
    elif failure == "structure":

        def unsupported(st: Any) -> Any:
            raise onnx_module.OnnxUnsupported("its first module is CLIPModel, not a Transformer")

        monkeypatch.setattr(onnx_module, "_check_structure", unsupported)
    else:
        real = importlib.util.find_spec
        monkeypatch.setattr(
            importlib.util,
            "find_spec",
            lambda name, *a, **k: None if name == "onnxruntime" else real(name, *a, **k),
        )
    said: list[str] = []
    encoder = load_encoder(
        "sentence-transformers/all-MiniLM-L6-v2", backend="onnx", log=said.append
    )
    assert encoder.meta.framework == "sentence-transformers"  # what ran, as the files will say
    (line,) = [s for s in said if s.startswith("onnx:")]
    expected = {
        "export": "export failed",
        "structure": "CLIPModel",
        "onnxruntime": 'pip install "chemteb-eval[run]"',
    }[failure]
    assert "runs with torch instead" in line and expected in line, line
    assert not [p for p in tmp_path.iterdir()]  # a failed export leaves nothing behind


# -- MiniLM: ONNX against torch (slow) -------------------------------------------------------


@pytest.fixture(scope="module")
def minilm() -> tuple[Any, Any]:
    torch_encoder = load_encoder("sentence-transformers/all-MiniLM-L6-v2", backend="torch")
    onnx_encoder = load_encoder("sentence-transformers/all-MiniLM-L6-v2", backend="onnx")
    assert onnx_encoder.meta.framework == "onnxruntime"
    return torch_encoder, onnx_encoder


@pytest.mark.slow
def test_onnx_matches_torch_with_prompts_and_truncation(minilm: tuple[Any, Any]) -> None:
    torch_encoder, onnx_encoder = minilm
    for prompt in ("", "query: "):
        a = torch_encoder.encode(TEXTS, prompt=prompt, batch_size=4)
        b = onnx_encoder.encode(TEXTS, prompt=prompt, batch_size=4)
        assert a.shape == b.shape == (len(TEXTS), 384)
        assert float(np.max(np.abs(a - b))) < 1e-5
    # the long text is cut where torch cuts it: 256 tokens, so its vector equals the 256-token
    # prefix's, not the whole text's
    lengths = onnx_encoder.token_lengths(TEXTS, prompt="")
    assert max(lengths) == 256 == onnx_encoder.meta.max_tokens
    meta = onnx_encoder.meta.to_dict()
    assert {k: v for k, v in meta.items() if k != "framework"} == {
        k: v for k, v in torch_encoder.meta.to_dict().items() if k != "framework"
    }


@pytest.mark.slow
def test_export_is_reused_and_atomic(minilm: tuple[Any, Any]) -> None:
    _, onnx_encoder = minilm
    folder: Path = onnx_encoder.export
    facts = json.loads((folder / "export.json").read_text())
    assert facts["max_abs_diff"] < 1e-4 and facts["inputs"][:2] == ["input_ids", "attention_mask"]
    said: list[str] = []
    again: Any = load_encoder(
        "sentence-transformers/all-MiniLM-L6-v2", backend="onnx", log=said.append
    )
    assert again.export == folder and said == []  # found, not exported again
    assert not [p for p in folder.parent.iterdir() if p.name.startswith(".")]  # no leftovers


@pytest.mark.slow
def test_int8_is_close_but_not_equal(minilm: tuple[Any, Any]) -> None:
    torch_encoder, _ = minilm
    int8 = load_encoder("onnx-int8:sentence-transformers/all-MiniLM-L6-v2")
    assert int8.meta.framework == "onnxruntime-int8 (per text)"
    a = torch_encoder.encode(TEXTS, prompt="", batch_size=8)
    b = int8.encode(TEXTS, prompt="", batch_size=8)
    cosine = np.sum(a * b, axis=1) / np.linalg.norm(b, axis=1)
    assert cosine.min() > 0.97 and float(np.max(np.abs(a - b))) > 1e-4


@pytest.mark.slow
def test_budget_batches_give_the_same_vectors(minilm: tuple[Any, Any]) -> None:
    torch_encoder, _ = minilm
    texts = [t * k for t in TEXTS[:7] for k in (1, 2, 3)]
    engine = EmbeddingEngine(torch_encoder, None, batch_size=4, progress=False)
    engine.prefetch(("", t) for t in texts)
    fixed = torch_encoder.encode(texts, prompt="", batch_size=4)
    assert float(np.max(np.abs(engine.embed(texts, "") - fixed))) < 1e-5


@pytest.mark.slow
def test_backends_never_share_a_cache_file(tmp_path: Path) -> None:
    from dataclasses import replace
    from types import SimpleNamespace

    from chemteb_eval.engine.cache import EmbeddingCache
    from chemteb_eval.runner.stages import _identity

    torch_like = ModelMeta("m", "a" * 40, 1, 3, 8, "sentence-transformers", "m")
    paths = set()
    for framework, precision in (
        ("sentence-transformers", "float32"),
        ("sentence-transformers", "float16"),
        ("onnxruntime", "float32"),
        ("onnxruntime-int8", "float32"),  # batched int8 (before item 8): not reused
        ("onnxruntime-int8 (per text)", "float32"),
    ):
        encoder: Any = SimpleNamespace(meta=replace(torch_like, framework=framework))
        cache = EmbeddingCache(tmp_path, **_identity(encoder, precision))
        paths.add(cache.path)
        cache.close()
    assert len(paths) == 5
    # torch float32 keeps the file name it always had (old caches stay valid)
    plain = EmbeddingCache(tmp_path, "m", "a" * 40, "m")
    assert plain.path in paths
    plain.close()


def test_missing_onnx_packages_name_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from chemteb_eval.models.onnx import OnnxEncoder

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a, **k: None if name == "onnxruntime" else real(name, *a, **k),
    )
    with pytest.raises(MissingExtraError, match=r"chemteb-eval\[run\]"):
        OnnxEncoder("org/model")


@pytest.mark.slow
def test_a_run_records_the_backend_that_ran(small_suite: Path, tmp_path: Path) -> None:
    from chemteb_eval.runner import run
    from chemteb_eval.tasks import get_task

    task = get_task("PipChemSMILESFormulaBM")
    scores = {}
    for backend in ("torch", "onnx"):
        report = run(
            "sentence-transformers/all-MiniLM-L6-v2",
            tasks=[task],
            output_dir=tmp_path / backend,
            backend=backend,
            cache_dir=tmp_path / "cache",  # one cache folder: the two backends keep apart
            progress=False,
            log=lambda _: None,
        )
        meta = json.loads((report.results_dir / "model_meta.json").read_text())
        run_meta = run_record(report.results_dir)
        framework = "onnxruntime" if backend == "onnx" else "sentence-transformers"
        assert meta["framework"] == framework == run_meta["settings"]["backend"]
        assert run_meta["settings"]["requested_backend"] == backend
        assert report.encoding["cache_hits"] == 0  # the onnx run did not reuse torch's vectors
        scores[backend] = report.main_scores[task.name]
    assert abs(scores["onnx"] - scores["torch"]) < 1e-4
    assert len(list((tmp_path / "cache").glob("*.vectors"))) == 2


@pytest.mark.slow
def test_float32_means_float32_for_a_half_precision_checkpoint(
    minilm: tuple[Any, Any], tmp_path: Path
) -> None:
    """transformers 5 loads a checkpoint in the dtype it was saved in: a "float32" run of an fp16
    checkpoint must still compute in float32 (found on the GPU check)."""
    import copy

    from chemteb_eval.models.sentence_transformers import SentenceTransformerEncoder

    torch_encoder, _ = minilm
    copy.deepcopy(torch_encoder.model).half().save(str(tmp_path / "half"))
    encoder = SentenceTransformerEncoder(str(tmp_path / "half"))
    assert {str(p.dtype) for p in encoder.model.parameters()} == {"torch.float32"}
    a = torch_encoder.encode(TEXTS, prompt="", batch_size=8)
    b = encoder.encode(TEXTS, prompt="", batch_size=8)
    assert b.dtype == np.float32 and float(np.max(np.abs(a - b))) < 5e-3  # fp16-rounded weights


# -- issue 25: int8 vectors independent of the batch; the export cache checked, not trusted --

# 64 texts of many lengths (1 to ~150 tokens), so that batches of 8 and 64 pad a lot.
BATCH_TEXTS = [" ".join([TEXTS[i % 7]] * (1 + i % 5)) + f" sample {i}" for i in range(64)]


@pytest.mark.slow
def test_item8_int8_vectors_do_not_depend_on_the_batch(minilm: tuple[Any, Any]) -> None:
    """Dynamic quantisation's activation scales are per call: batched, a text's int8 vector
    moved with its batch-mates (0.026 max abs diff between batch sizes 1 and 8 on these texts).
    Each text runs alone now. ~3 s after the module's export."""
    int8 = load_encoder("onnx-int8:sentence-transformers/all-MiniLM-L6-v2")
    alone = int8.encode(BATCH_TEXTS, prompt="", batch_size=1)
    for batch_size in (8, 64):
        batched = int8.encode(BATCH_TEXTS, prompt="", batch_size=batch_size)
        assert float(np.max(np.abs(batched - alone))) <= 1e-6, batch_size
    # and the same text among other texts, in another order
    mixed = int8.encode([*BATCH_TEXTS[::-1], "water"], prompt="", batch_size=16)
    assert float(np.max(np.abs(mixed[:64][::-1] - alone))) <= 1e-6


def _exported(tmp_path: Path, log: list[str], quantize: bool = False) -> Any:
    from chemteb_eval.models.onnx import OnnxEncoder

    return OnnxEncoder(
        "sentence-transformers/all-MiniLM-L6-v2", quantize=quantize, folder=tmp_path, log=log.append
    )


@pytest.mark.slow
def test_item15_a_truncated_export_is_made_again(minilm: tuple[Any, Any], tmp_path: Path) -> None:
    """A truncated model.onnx (or model.int8.onnx) failed every later run until deleted by hand;
    it is found (sizes recorded in export.json, or ONNX Runtime failing to load it) and made
    again. ~10 s (two exports, two quantisations)."""
    import shutil

    _, onnx_encoder = minilm
    shutil.copytree(onnx_encoder.export, tmp_path / onnx_encoder.export.name)
    said: list[str] = []
    first = _exported(tmp_path, said)
    assert first.export == tmp_path / onnx_encoder.export.name and said == []  # the copy is used
    want = first.encode(TEXTS[:3], prompt="", batch_size=4)
    model = first.export / "model.onnx"
    size = model.stat().st_size
    with model.open("r+b") as f:
        f.truncate(size // 2)
    said.clear()
    again = _exported(tmp_path, said)
    assert again.export == first.export and model.stat().st_size == size
    assert any("is broken (model.onnx has" in s for s in said), said
    assert float(np.max(np.abs(again.encode(TEXTS[:3], prompt="", batch_size=4) - want))) < 1e-6
    # an export from before the sizes were recorded: ONNX Runtime's load failure tells
    facts_path = again.export / "export.json"
    facts = json.loads(facts_path.read_text())
    del facts["files"]
    facts_path.write_text(json.dumps(facts))
    with model.open("r+b") as f:
        f.truncate(size // 3)
    said.clear()
    _exported(tmp_path, said)
    assert any("ONNX Runtime cannot load model.onnx" in s for s in said), said
    assert model.stat().st_size == size
    # the int8 file
    int8 = _exported(tmp_path, said, quantize=True)
    quantized = int8.export / "model.int8.onnx"
    q_size = quantized.stat().st_size
    with quantized.open("r+b") as f:
        f.truncate(q_size // 2)
    said.clear()
    _exported(tmp_path, said, quantize=True)
    assert any("model.int8.onnx cannot be loaded" in s for s in said), said
    assert quantized.stat().st_size == q_size
    assert sorted(p.name for p in tmp_path.iterdir()) == [first.export.name]  # nothing left over
    assert sorted(p.name for p in first.export.iterdir()) == [
        "export.json",
        "model.int8.onnx",
        "model.onnx",
    ]


@pytest.mark.slow
def test_item15_an_unwritable_export_folder_is_one_line_and_a_temporary_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An export folder that is a file, or read-only, was a traceback. ~7 s (two exports, a
    quantisation)."""
    not_a_folder = tmp_path / "exports"
    not_a_folder.write_text("a file where the folder should be")
    said: list[str] = []
    encoder = _exported(not_a_folder, said)
    (line,) = [s for s in said if "cannot write" in s]
    assert f"cannot write into the export folder {not_a_folder}" in line
    assert "CHEMTEB_ONNX_DIR" in line and not encoder.export.is_relative_to(not_a_folder)
    assert encoder.encode(["water"], prompt="", batch_size=1).shape == (1, 384)
    # read-only (root ignores permissions, so the refusal is simulated where the OS gives it)
    read_only = tmp_path / "read-only"
    fp32 = _exported(read_only, said)  # written before the folder became read-only
    real = tempfile.mkdtemp

    def refuse(suffix: Any = None, prefix: Any = None, dir: Any = None) -> str:
        if dir is not None and Path(dir).is_relative_to(read_only):
            raise PermissionError(13, "Permission denied", str(dir))
        return real(suffix, prefix, dir)

    monkeypatch.setattr(tempfile, "mkdtemp", refuse)  # (onnx.py's scratch folders use it)
    said.clear()
    int8 = _exported(read_only, said, quantize=True)
    (line,) = [s for s in said if "cannot write" in s]  # the int8 file goes elsewhere
    assert f"{fp32.export} (Permission denied)" in line and int8.export == fp32.export
    assert int8.encode(["water"], prompt="", batch_size=1).shape == (1, 384)
    assert sorted(p.name for p in fp32.export.iterdir()) == ["export.json", "model.onnx"]


@pytest.mark.slow
def test_item15_quantisation_writes_no_shared_intermediate(minilm: tuple[Any, Any]) -> None:
    """Two onnx-int8 runs at once crashed: ONNX Runtime's quantize_dynamic writes its
    shape-inferred copy to model-inferred.onnx beside the input, and each run deleted it under
    the other. A folder of that name (another run's file in the way) must not matter. ~3 s."""
    from chemteb_eval.models.onnx import _quantize

    _, onnx_encoder = minilm
    folder = Path(tempfile.mkdtemp(dir=onnx_encoder.export.parent))
    (folder / "model.onnx").symlink_to(onnx_encoder.export / "model.onnx")
    (folder / "model-inferred.onnx").mkdir()  # what the other run has there
    _quantize(folder / "model.onnx", folder / "out.onnx")
    assert (folder / "out.onnx").stat().st_size > 1_000_000
    assert sorted(p.name for p in folder.iterdir()) == [
        "model-inferred.onnx",
        "model.onnx",
        "out.onnx",
    ]
