"""Encoder backends. ``load_encoder`` picks one from a model name."""

from __future__ import annotations

from collections.abc import Callable

from .base import Encoder, ModelMeta, Role
from .prompts import convention_prompt
from .sentence_transformers import DEFAULT_MODEL, SentenceTransformerEncoder
from .spec import DEFAULT_RUNTIME, RUNTIMES, ModelSpec, RuntimeChoice, parse_model_spec


def _on_cpu(device: str | None) -> bool:
    if device is not None:
        return device == "cpu"
    import torch

    return not torch.cuda.is_available()


def _runtime_spec(spec: ModelSpec, runtime: str, device: str | None, precision: str) -> ModelSpec:
    """The spec after ``runtime`` is applied to a plain model name."""
    if runtime not in RUNTIMES:
        raise ValueError(f"backend: {runtime!r}; use one of {list(RUNTIMES)}.")
    if spec.backend != "sentence-transformers" or runtime == "torch":
        return spec
    if runtime == "auto":
        use = precision == "float32" and _on_cpu(device)
        return ModelSpec("onnx", spec.name) if use else spec
    return ModelSpec("onnx" if runtime == "onnx" else "onnx-int8", spec.name)


def _onnx(
    spec: ModelSpec, device: str | None, precision: str, log: Callable[[str], None]
) -> Encoder:
    from chemteb_eval.errors import MissingExtraError

    if device not in (None, "cpu") or precision != "float32":
        raise ValueError(
            f"model: {spec} runs on CPU in float32; for {device or precision} use the torch "
            "backend (--backend torch)."
        )
    try:
        from .onnx import OnnxEncoder, OnnxUnsupported

        try:
            return OnnxEncoder(spec.name, quantize=spec.backend == "onnx-int8", log=log)
        except OnnxUnsupported as exc:
            reason = str(exc)
    except MissingExtraError as exc:
        reason = str(exc)
    log(f"onnx: {spec.name} runs with torch instead: {reason}")
    return SentenceTransformerEncoder(spec.name, device=device, precision=precision)


def load_encoder(
    name: str = DEFAULT_MODEL,
    *,
    device: str | None = None,
    precision: str = "float32",
    api_base: str | None = None,
    backend: str = DEFAULT_RUNTIME,
    log: Callable[[str], None] = print,
) -> Encoder:
    """The encoder for a model name.

    Args:
        name: ``org/model`` or a folder (sentence-transformers); ``openai:MODEL`` for an
            OpenAI-compatible embeddings API (``api_base`` or ``$OPENAI_BASE_URL``);
            ``transformers:MODEL`` or ``transformers-cls:MODEL`` for a plain transformers model
            with mean or CLS pooling; ``model2vec:MODEL`` for a model2vec static model;
            ``word2vec:PATH`` (text/binary word2vec format or a gensim save) and
            ``fasttext:PATH`` (a Facebook ``.bin`` or gensim ``.model``) for word vectors;
            ``onnx:MODEL`` / ``onnx-int8:MODEL`` for a sentence-transformers model whose
            transformer runs in ONNX Runtime (CPU).
        device: the torch device of local models.
        precision: float32, or float16/bfloat16 on CUDA (sentence-transformers).
        api_base: the API root for ``openai:`` models.
        backend: how a plain model name runs: ``torch``, ``onnx``, ``onnx-int8`` or ``auto``
            (ONNX Runtime on a CPU float32 run, else torch). A model ONNX cannot export runs
            with torch, and ``log`` says why; the result files record what ran.
        log: where that line goes.

    Returns:
        An ``Encoder``.
    """
    spec = _runtime_spec(parse_model_spec(name), backend, device, precision)
    if spec.backend in ("onnx", "onnx-int8"):
        return _onnx(spec, device, precision, log)
    if spec.backend == "openai":
        from .http import HTTPEmbeddingEncoder

        return HTTPEmbeddingEncoder(spec.name, api_base=api_base)
    if spec.backend == "model2vec":
        from .static import Model2VecEncoder

        return Model2VecEncoder(spec.name)
    if spec.backend in ("word2vec", "fasttext"):
        from .static import WordVectorEncoder

        return WordVectorEncoder.load(spec.name, kind=spec.backend)
    if spec.backend in ("transformers", "transformers-cls"):
        from .transformers_pooling import TransformersEncoder

        cls = spec.backend == "transformers-cls"
        return TransformersEncoder(spec.name, pooling="cls" if cls else "mean", device=device)
    return SentenceTransformerEncoder(spec.name, device=device, precision=precision)


__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_RUNTIME",
    "RUNTIMES",
    "Encoder",
    "ModelMeta",
    "ModelSpec",
    "Role",
    "RuntimeChoice",
    "SentenceTransformerEncoder",
    "convention_prompt",
    "load_encoder",
    "parse_model_spec",
]
