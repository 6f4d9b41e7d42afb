"""Deduplication, the embedding cache, batching."""

from .cache import EmbeddingCache, text_key
from .encode import EmbeddingEngine, EncodeStats

__all__ = ["EmbeddingCache", "EmbeddingEngine", "EncodeStats", "text_key"]
