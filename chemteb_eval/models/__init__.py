"""Encoder backends. ``load_encoder`` picks one from a model name."""

from __future__ import annotations

from .base import Encoder, ModelMeta, Role
from .prompts import convention_prompt
from .sentence_transformers import DEFAULT_MODEL, SentenceTransformerEncoder


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
    if name.startswith("openai:"):
        from .http import HTTPEmbeddingEncoder

        return HTTPEmbeddingEncoder(name.split(":", 1)[1], base_url=api_base)
    if name.startswith("model2vec:"):
        from .static import Model2VecEncoder

        return Model2VecEncoder(name.split(":", 1)[1])
    if name.startswith(("word2vec:", "fasttext:")):
        from .static import WordVectorEncoder

        kind, path = name.split(":", 1)
        return WordVectorEncoder.load(path, kind=kind)
    if name.startswith(("transformers:", "transformers-cls:")):
        from .transformers_pooling import TransformersEncoder

        kind, model = name.split(":", 1)
        return TransformersEncoder(
            model, pooling="cls" if kind == "transformers-cls" else "mean", device=device
        )
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
