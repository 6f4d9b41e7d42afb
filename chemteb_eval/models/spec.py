"""One parser for model specs: ``[backend:]name``, for the embedding runner, ChemBench's
generators and the Hub Jobs alike."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, get_args

from chemteb_eval.errors import require_extras

__all__ = [
    "BACKENDS",
    "BACKEND_NEEDS",
    "DEFAULT_RUNTIME",
    "RUNTIMES",
    "Backend",
    "ModelSpec",
    "RuntimeChoice",
    "parse_model_spec",
]

Backend = Literal[
    "sentence-transformers",
    "transformers",
    "transformers-cls",
    "model2vec",
    "word2vec",
    "fasttext",
    "openai",
    "onnx",
    "onnx-int8",
]
# How a plain (sentence-transformers) model name runs: ``auto`` = ONNX Runtime on a CPU-only
# float32 run, torch otherwise (CUDA, fp16/bf16); ``torch`` always torch; ``onnx``/``onnx-int8``
# as the ``onnx:``/``onnx-int8:`` prefixes.
RuntimeChoice = Literal["auto", "torch", "onnx", "onnx-int8"]
RUNTIMES: tuple[str, ...] = get_args(RuntimeChoice)
DEFAULT_RUNTIME: RuntimeChoice = "torch"


# Written as a prefix (``transformers:ID``); a name without one is sentence-transformers'.
BACKENDS: tuple[Backend, ...] = tuple(b for b in get_args(Backend) if b != "sentence-transformers")
# The pyproject extra each backend needs (``pip install "chemteb-eval[run]"``) and the modules
# that tell it is installed; the API backend needs only the core install (httpx).
BACKEND_NEEDS: dict[Backend, tuple[str, tuple[str, ...]] | None] = {
    "sentence-transformers": ("run", ("torch", "sentence_transformers")),
    "transformers": ("run", ("torch", "transformers")),
    "transformers-cls": ("run", ("torch", "transformers")),
    "model2vec": ("static", ("model2vec",)),
    "word2vec": ("static", ("gensim",)),
    "fasttext": ("static", ("gensim",)),
    "openai": None,
    # export needs torch; running needs onnxruntime (in the run extra: it is the fast CPU path)
    "onnx": ("run", ("torch", "sentence_transformers", "onnxruntime", "onnx")),
    "onnx-int8": ("run", ("torch", "sentence_transformers", "onnxruntime", "onnx")),
}
# Backends whose name is a Hub model id (or a local folder); word vectors are files and API
# models live behind their API.
_HUB_BACKENDS = (
    "sentence-transformers",
    "transformers",
    "transformers-cls",
    "model2vec",
    "onnx",
    "onnx-int8",
)
# org/name as the Hub spells them; "./my-model" or "C:/models/x" are folders, not ids.
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model spec.

    Args:
        backend: what runs the model.
        name: the rest: a Hub id, a folder, a file (word vectors) or an API model name.
    """

    backend: Backend
    name: str

    @property
    def hub_id(self) -> str | None:
        """The Hub repository the model loads from, if it is one (``org/name``)."""
        if self.backend in _HUB_BACKENDS and _HUB_ID.fullmatch(self.name):
            return self.name
        return None

    @property
    def extra(self) -> str | None:
        """The extra that installs this backend (``None``: the core install is enough)."""
        need = BACKEND_NEEDS[self.backend]
        return need[0] if need else None

    @property
    def needs(self) -> list[tuple[str, tuple[str, ...], str]]:
        """What ``require_extras`` checks before this backend loads (empty: nothing)."""
        need = BACKEND_NEEDS[self.backend]
        return [(need[0], need[1], f"a {self.backend} model")] if need else []

    def require(self) -> None:
        """Stop with ``pip install "chemteb-eval[EXTRA]"`` unless the backend is installed."""
        require_extras(self.needs)

    def __str__(self) -> str:
        return (
            self.name if self.backend == "sentence-transformers" else f"{self.backend}:{self.name}"
        )


def parse_model_spec(spec: str) -> ModelSpec:
    """``openai:text-embedding-3-large`` -> (openai, text-embedding-3-large); ``org/model`` or a
    folder -> (sentence-transformers, ...). ``ValueError`` for an empty name."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"model: {spec!r} is empty; pass a Hub id, a folder or backend:name.")
    prefix, sep, rest = spec.partition(":")
    if sep and prefix in BACKENDS:
        if not rest:
            raise ValueError(f"model: {spec!r} names no model after {prefix}:.")
        return ModelSpec(prefix, rest)  # `in BACKENDS` narrows prefix to a Backend
    return ModelSpec("sentence-transformers", spec)
