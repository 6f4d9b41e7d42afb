"""Encoder backends. ``load_encoder`` picks one from a model name."""

from __future__ import annotations

from .base import Encoder, ModelMeta, Role
from .prompts import convention_prompt
from .sentence_transformers import DEFAULT_MODEL, SentenceTransformerEncoder
from .spec import ModelSpec, parse_model_spec


def load_encoder(
    name: str = DEFAULT_MODEL,
    *,
    device: str | None = None,
    precision: str = "float32",
    api_base: str | None = None,
) -> Encoder:
    """The encoder for a model name.

    Args:
        name: ``org/model`` or a folder (sentence-transformers); ``openai:MODEL`` for an
            OpenAI-compatible embeddings API (``api_base`` or ``$OPENAI_BASE_URL``);
            ``transformers:MODEL`` or ``transformers-cls:MODEL`` for a plain transformers model
            with mean or CLS pooling; ``model2vec:MODEL`` for a model2vec static model;
            ``word2vec:PATH`` (text/binary word2vec format or a gensim save) and
            ``fasttext:PATH`` (a Facebook ``.bin`` or gensim ``.model``) for word vectors.
        device: the torch device of local models.
        precision: float32, or float16/bfloat16 on CUDA (sentence-transformers).
        api_base: the API root for ``openai:`` models.

    Returns:
        An ``Encoder``.
    """
    spec = parse_model_spec(name)
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
    "Encoder",
    "ModelMeta",
    "ModelSpec",
    "Role",
    "SentenceTransformerEncoder",
    "convention_prompt",
    "load_encoder",
    "parse_model_spec",
]
