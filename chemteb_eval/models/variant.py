"""The model's variant as one value: how it runs (backend, compute dtype), where an API model is
served, and which compressed copies of its vectors are scored too.

The CLI builds it once from ``--backend``, ``--dtype``, ``--api-base``, ``--dims`` and
``--precisions`` and hands it down; the runner reads every fact of the variant from it — the
encoder's load options, the dtype check, the embedding cache's key (``cache_variant``) and MTEB's
``experiment_kwargs`` — instead of passing the dtype through each stage. The backend that ran is
the encoder's (``ModelMeta.framework``, after any fallback), so the facts that depend on it take
it as an argument.

Imports nothing heavy: the CLI builds it before the runner's imports.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .backends import backend_of, cache_variant, check_precision, experiment_kwargs, framework_of
from .spec import DEFAULT_RUNTIME

__all__ = ["ModelVariant", "check_api_revision"]

_REVISION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def _frozen(value: Any) -> Any:
    """``--dims``/``--precisions`` as given (the runner checks them, where it always did), a
    list as a tuple so that the value stays frozen."""
    return tuple(value) if isinstance(value, (list, tuple)) else value


def check_api_revision(revision: str) -> str:
    """``--revision`` of an API model: a name of the user's for the model now served (it names a
    results folder too: letters, digits, ``.``, ``_``, ``-``; at most 100)."""
    if (
        not isinstance(revision, str)
        or not _REVISION.fullmatch(revision)
        or revision in {"no_revision_available", "experiments"}
    ):
        raise ValueError(
            f"--revision: {revision!r} is not a name for the model the API serves; use letters, "
            "digits, '.', '_' and '-' (at most 100; e.g. 2026-12-04 or v2)."
        )
    return revision


@dataclass(frozen=True)
class ModelVariant:
    """One variant of a model.

    Args:
        backend: how a plain model name runs (``models.spec.RUNTIMES``: ``torch``, ``onnx``,
            ``onnx-int8``, ``auto``).
        precision: the dtype the model computes in (float32; float16/bfloat16 where the backend
            computes in it).
        api_base: the API root of an ``openai:`` model (its name and this URL are what its
            probe identifies: ``models.identity``).
        dims: also score the vectors cut to these dimensions (``"256,128"`` or a sequence;
            checked by the runner: ``scoring.compression.check_dims``).
        precisions: also score them in these precisions (``"int8,binary"`` or a sequence).
        hybrid: also score each retrieval task as the fusion of the model's ranking with this
            lexical model's (``"bm25s"``), from the same vectors (checked by the runner).
        revision: an API model's name for the model served now (``--revision``): with its name
            and ``api_base``, what the model is (``models.identity.ApiIdentity``).
    """

    backend: str = DEFAULT_RUNTIME
    precision: str = "float32"
    api_base: str | None = None
    dims: Sequence[int] | str | None = None
    precisions: Sequence[str] | str | None = None
    hybrid: str | None = None
    revision: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "dims", _frozen(self.dims))
        if self.revision is not None:
            check_api_revision(self.revision)
        object.__setattr__(self, "precisions", _frozen(self.precisions))

    def load_options(self) -> dict[str, Any]:
        """``load_encoder``'s keywords this variant sets."""
        return {"precision": self.precision, "api_base": self.api_base, "backend": self.backend}

    def check(self, framework: str) -> None:
        """A dtype the backend that ran never computes in would label float32 vectors: refused
        (``models.backends.check_precision``)."""
        check_precision(backend_of(framework), self.precision)
        if self.revision is not None and framework != framework_of("openai"):
            raise ValueError(
                "--revision: names the model an API serves now (an openai: model); a Hub "
                "model's revision is its commit, a local model's its files: drop --revision."
            )

    def cache_variant(self, framework: str) -> str | None:
        """The ``variant`` of the embedding cache's key for the backend that ran."""
        return cache_variant(framework, self.precision)

    def experiment_kwargs(self, framework: str) -> dict[str, str]:
        """MTEB's ``experiment_kwargs`` of the variant (empty: the model as its authors run
        it)."""
        return experiment_kwargs(framework, self.precision)
