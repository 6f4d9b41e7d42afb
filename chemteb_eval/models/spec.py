"""One parser for model specs: ``[backend:]name``, for the embedding runner, ChemBench's
generators and the Hub Jobs alike."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, get_args

from chemteb_eval.errors import require_extras

from .backends import BACKEND_TABLE, Backend, BackendRole, ModelBackend, backend_record

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

# How a plain (sentence-transformers) model name runs: ``auto`` = ONNX Runtime on a CPU-only
# float32 run, torch otherwise (CUDA, fp16/bf16); ``torch`` always torch; ``onnx``/``onnx-int8``
# as the ``onnx:``/``onnx-int8:`` prefixes.
RuntimeChoice = Literal["auto", "torch", "onnx", "onnx-int8"]
RUNTIMES: tuple[str, ...] = get_args(RuntimeChoice)
DEFAULT_RUNTIME: RuntimeChoice = "torch"


# Views of the backend table (``backends.py``), for the code and tests that read them by name.
# Written as a prefix (``transformers:ID``); a name without one is sentence-transformers'.
BACKENDS: tuple[Backend, ...] = tuple(
    b.name for b in BACKEND_TABLE.values() if b.name != "sentence-transformers"
)
# The pyproject extra each encoder backend needs (``pip install "chemteb-eval[run]"``) and the
# modules that tell it is installed; ``None``: the core install (httpx) is enough.
BACKEND_NEEDS: dict[Backend, tuple[str, tuple[str, ...]] | None] = {
    b.name: (b.encoder.extra, b.encoder.modules) if b.encoder.extra else None
    for b in BACKEND_TABLE.values()
    if b.encoder is not None
}
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
    def record(self) -> ModelBackend:
        """The backend's record in the table (``backends.py``)."""
        return backend_record(self.backend)

    @property
    def hub_id(self) -> str | None:
        """The Hub repository the model loads from, if it is one (``org/name``)."""
        if self.record.hub_ids and _HUB_ID.fullmatch(self.name):
            return self.name
        return None

    @property
    def extra(self) -> str | None:
        """The extra that installs this backend's encoder (``None``: the core install is
        enough, or it embeds nothing)."""
        install = self.record.encoder
        return install.extra if install else None

    @property
    def needs(self) -> list[tuple[str, tuple[str, ...], str]]:
        """What ``require_extras`` checks before this backend's encoder loads (empty:
        nothing)."""
        return self.needs_for("encoder")

    def needs_for(self, role: BackendRole) -> list[tuple[str, tuple[str, ...], str]]:
        """What ``require_extras`` checks before the backend embeds (``encoder``) or generates
        (``generator``) text; empty when it needs nothing or has no such role."""
        install = self.record.install(role)
        if install is None or install.extra is None:
            return []
        what = f"a {self.backend} model" if role == "encoder" else f"a {self.backend}: generator"
        return [(install.extra, install.modules, what)]

    def require(self, role: BackendRole = "encoder") -> None:
        """Stop with ``pip install "chemteb-eval[EXTRA]"`` unless the backend is installed."""
        require_extras(self.needs_for(role))

    def __str__(self) -> str:
        return f"{self.record.prefix}{self.name}"


def parse_model_spec(spec: str | ModelSpec) -> ModelSpec:
    """``openai:text-embedding-3-large`` -> (openai, text-embedding-3-large); ``org/model`` or a
    folder -> (sentence-transformers, ...). ``ValueError`` for an empty name. A ``ModelSpec``
    (parsed once already) is returned as it is."""
    if isinstance(spec, ModelSpec):
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"model: {spec!r} is empty; pass a Hub id, a folder or backend:name.")
    # " org/model" or "transformers: x" (a shell quoting slip): the spaces are no part of a name
    prefix, sep, rest = spec.strip().partition(":")
    rest = rest.strip()
    if sep and prefix in BACKENDS:
        if not rest:
            raise ValueError(f"model: {spec!r} names no model after {prefix}:.")
        return ModelSpec(prefix, rest)  # `in BACKENDS` narrows prefix to a Backend
    return ModelSpec("sentence-transformers", spec.strip())
