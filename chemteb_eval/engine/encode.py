"""Encode every unique (prompt, text) of a run once, length-sorted, through the cache."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass

import numpy as np
from numpy.typing import NDArray

from chemteb_eval.models.base import Encoder

from .cache import EmbeddingCache, text_key

__all__ = ["EmbeddingEngine", "EncodeStats"]


@dataclass
class EncodeStats:
    """What deduplication and the cache saved, and how fast encoding ran."""

    requested: int = 0  # (prompt, text) occurrences over all tasks
    unique: int = 0  # distinct (prompt, text)
    cache_hits: int = 0  # unique ones already on disk
    encoded: int = 0  # unique ones the model encoded in this run
    seconds: float = 0.0  # spent in the model

    def to_dict(self) -> dict[str, float]:
        out = asdict(self)
        out["texts_per_second"] = self.encoded / self.seconds if self.seconds else 0.0
        return out


class EmbeddingEngine:
    """Deduplicating, caching front of an encoder.

    Args:
        encoder: the model backend.
        cache: a persistent cache, or ``None`` to keep embeddings in memory for this run only.
        batch_size: texts per model call.
        progress: show a progress bar with throughput.
    """

    def __init__(
        self,
        encoder: Encoder,
        cache: EmbeddingCache | None,
        *,
        batch_size: int = 32,
        progress: bool = True,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size: must be positive, got {batch_size}.")
        self.encoder = encoder
        self.cache = cache
        self.batch_size = batch_size
        self.progress = progress
        self.stats = EncodeStats()
        self._memory: dict[str, NDArray[np.float32]] = {}

    def prefetch(self, requests: Iterable[tuple[str, str]]) -> EncodeStats:
        """Encode what ``embed`` will be asked for: each unique (prompt, text) once.

        Batches are length-sorted (longest first, so the slowest batches come early and padding
        is small) and each is committed to the cache as soon as it is encoded, so an interrupted
        run resumes where it stopped.
        """
        from tqdm.auto import tqdm

        unique: dict[str, tuple[str, str]] = {}
        for prompt, text in requests:
            self.stats.requested += 1
            unique.setdefault(text_key(prompt, text), (prompt, text))
        self.stats.unique += len(unique)
        keys = [k for k in unique if k not in self._memory]
        todo = self.cache.missing(keys) if self.cache is not None else keys
        self.stats.cache_hits += len(unique) - len(todo)
        by_prompt: dict[str, list[str]] = {}
        for key in todo:
            by_prompt.setdefault(unique[key][0], []).append(key)
        bar = tqdm(
            total=len(todo), desc="encoding", unit="text", disable=not self.progress or not todo
        )
        for prompt, group in by_prompt.items():
            group.sort(key=lambda k: -len(unique[k][1]))
            for start in range(0, len(group), self.batch_size):
                batch = group[start : start + self.batch_size]
                t0 = time.perf_counter()
                vectors = self.encoder.encode(
                    [unique[k][1] for k in batch], prompt=prompt, batch_size=self.batch_size
                )
                self.stats.seconds += time.perf_counter() - t0
                self.stats.encoded += len(batch)
                if self.cache is not None:
                    self.cache.put(batch, vectors)
                else:
                    self._memory.update(zip(batch, vectors, strict=True))
                bar.update(len(batch))
                bar.set_postfix(
                    texts_per_s=f"{self.stats.encoded / max(self.stats.seconds, 1e-9):.0f}"
                )
        bar.close()
        return self.stats

    def embed(self, texts: list[str], prompt: str) -> NDArray[np.float32]:
        """The embeddings of ``texts`` (after ``prefetch``), one row per text, in order."""
        keys = [text_key(prompt, t) for t in texts]
        if self.cache is None or all(k in self._memory for k in keys):
            return np.stack([self._memory[k] for k in keys])
        return self.cache.get(keys)
