"""Encoder backends. ``load_encoder`` looks a model spec's backend up in the backend table
(``backends.py``) and runs its loader.

Importing this package loads no numpy, torch or httpx (the CLI reads the backend table for its
help); each encoder module is imported when its backend loads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .backends import (
    BACKEND_TABLE,
    DEFAULT_MODEL,
    LoadOptions,
    ModelBackend,
    backend_record,
    check_precision,
    model_help,
)
from .base import DEFAULT_BATCH_SIZE, Encoder, ModelMeta, Role, check_batch_size
from .prompts import convention_prompt
from .spec import DEFAULT_RUNTIME, RUNTIMES, ModelSpec, RuntimeChoice, parse_model_spec

if TYPE_CHECKING:
    from .sentence_transformers import SentenceTransformerEncoder


def __getattr__(name: str) -> Any:
    # the torch-backed class, imported on first use (``from chemteb_eval.models import ...``)
    if name == "SentenceTransformerEncoder":
        from .sentence_transformers import SentenceTransformerEncoder

        return SentenceTransformerEncoder
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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


def load_encoder(
    name: str | ModelSpec = DEFAULT_MODEL,
    *,
    device: str | None = None,
    precision: str = "float32",
    api_base: str | None = None,
    backend: str = DEFAULT_RUNTIME,
    log: Callable[[str], None] = print,
) -> Encoder:
    """The encoder for a model name.

    Args:
        name: a spec (or one ``parse_model_spec`` parsed already): ``org/model`` or a folder
            (sentence-transformers); ``openai:MODEL`` for an OpenAI-compatible embeddings API
            (``api_base`` or ``$OPENAI_BASE_URL``); ``transformers:MODEL`` or
            ``transformers-cls:MODEL`` for a plain transformers model with mean or CLS
            pooling; ``model2vec:MODEL`` for a model2vec static model; ``word2vec:PATH``
            (text/binary word2vec format or a gensim save) and ``fasttext:PATH`` (a Facebook
            ``.bin`` or gensim ``.model``) for word vectors; ``onnx:MODEL`` /
            ``onnx-int8:MODEL`` for a sentence-transformers model whose transformer runs in
            ONNX Runtime (CPU). ``backends.BACKEND_TABLE`` lists them all.
        device: the torch device of local models.
        precision: float32; float16/bfloat16 on CUDA, bfloat16 on a CPU with native bfloat16
            (sentence-transformers).
        api_base: the API root for ``openai:`` models.
        backend: how a plain model name runs: ``torch``, ``onnx``, ``onnx-int8`` or ``auto``
            (ONNX Runtime on a CPU float32 run, else torch). A model ONNX cannot export runs
            with torch, and ``log`` says why; the result files record what ran.
        log: where that line goes.

    Returns:
        An ``Encoder``.
    """
    spec = _runtime_spec(parse_model_spec(name), backend, device, precision)
    record = spec.record
    check_precision(record, precision)
    if record.load is None:
        embedders = [b.prefix or "ID" for b in BACKEND_TABLE.values() if b.load is not None]
        raise ValueError(
            f"model: {spec} generates text (chemteb chembench generate) and embeds none; "
            f"use one of {', '.join(embedders)}."
        )
    return record.loader()(
        spec, LoadOptions(device=device, precision=precision, api_base=api_base, log=log)
    )


__all__ = [
    "BACKEND_TABLE",
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_MODEL",
    "DEFAULT_RUNTIME",
    "RUNTIMES",
    "Encoder",
    "ModelBackend",
    "ModelMeta",
    "ModelSpec",
    "Role",
    "RuntimeChoice",
    "SentenceTransformerEncoder",
    "backend_record",
    "check_batch_size",
    "convention_prompt",
    "load_encoder",
    "model_help",
    "parse_model_spec",
]
