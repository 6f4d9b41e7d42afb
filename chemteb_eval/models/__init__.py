"""Encoder backends. ``load_encoder`` picks one from a model name."""

from __future__ import annotations

from .base import Encoder, ModelMeta, Role
from .prompts import convention_prompt
from .sentence_transformers import DEFAULT_MODEL, SentenceTransformerEncoder


def load_encoder(
    name: str = DEFAULT_MODEL, *, device: str | None = None, precision: str = "float32"
) -> Encoder:
    """The encoder for a model name (sentence-transformers for now)."""
    return SentenceTransformerEncoder(name, device=device, precision=precision)


__all__ = [
    "DEFAULT_MODEL",
    "Encoder",
    "ModelMeta",
    "Role",
    "SentenceTransformerEncoder",
    "convention_prompt",
    "load_encoder",
]
