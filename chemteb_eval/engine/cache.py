"""A persistent embedding cache: one SQLite file per model, keyed by prompt and text.

SQLite commits are atomic and its write-ahead log lets several processes read and write one
file: a run killed mid-encoding keeps every committed batch, and two runs sharing a cache leave
it consistent (a key written twice holds the same vector; the first write wins).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

__all__ = ["EmbeddingCache", "text_key"]


def text_key(prompt: str, text: str) -> str:
    """The cache key of one (prompt, text): a SHA-256 of both, never the text itself."""
    return hashlib.sha256(f"{prompt}\x00{text}".encode()).hexdigest()


class EmbeddingCache:
    """Embeddings of one model (id + revision) on disk.

    Args:
        root: the cache folder (one ``.sqlite`` file per model).
        model: the model id.
        revision: the model revision (``None`` when unknown: the weights' source path then
            stands in, so two different local copies never share vectors).
        source: where the weights were loaded from.
    """

    def __init__(self, root: Path, model: str, revision: str | None, source: str) -> None:
        ident = json.dumps([model, revision, None if revision else source])
        digest = hashlib.sha256(ident.encode()).hexdigest()[:16]
        safe = "".join(c if c.isalnum() or c in "-." else "_" for c in model)[-60:]
        root.mkdir(parents=True, exist_ok=True)
        self.path = root / f"{safe}-{digest}.sqlite"
        self._db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS emb (key TEXT PRIMARY KEY, dim INTEGER, vec BLOB) WITHOUT ROWID"
        )
        self._db.execute("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT)")
        self._db.execute("INSERT OR IGNORE INTO meta VALUES ('model', ?)", (ident,))

    def close(self) -> None:
        self._db.close()

    def missing(self, keys: Sequence[str]) -> list[str]:
        """The keys not in the cache, in the given order."""
        have: set[str] = set()
        for start in range(0, len(keys), 900):  # SQLite's bound-parameter limit
            chunk = keys[start : start + 900]
            marks = ",".join("?" * len(chunk))
            have.update(
                r[0] for r in self._db.execute(f"SELECT key FROM emb WHERE key IN ({marks})", chunk)
            )
        return [k for k in keys if k not in have]

    def put(self, keys: Sequence[str], vectors: NDArray[np.float32]) -> None:
        """Store a batch in one transaction (all of it or none of it survives a kill)."""
        rows = [
            (k, int(v.shape[0]), np.asarray(v, dtype=np.float32).tobytes())
            for k, v in zip(keys, vectors, strict=True)
        ]
        self._db.execute("BEGIN IMMEDIATE")
        try:
            self._db.executemany("INSERT OR IGNORE INTO emb VALUES (?, ?, ?)", rows)
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def get(self, keys: Sequence[str]) -> NDArray[np.float32]:
        """The vectors of ``keys``, in order; every key must be present."""
        found: dict[str, NDArray[np.float32]] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), 900):
            chunk = unique[start : start + 900]
            marks = ",".join("?" * len(chunk))
            for key, _dim, blob in self._db.execute(
                f"SELECT key, dim, vec FROM emb WHERE key IN ({marks})", chunk
            ):
                found[key] = np.frombuffer(blob, dtype=np.float32)
        absent = [k for k in unique if k not in found]
        if absent:
            raise KeyError(f"{len(absent)} embedding(s) are not in the cache {self.path}")
        return np.stack([found[k] for k in keys]) if keys else np.zeros((0, 0), np.float32)

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM emb").fetchone()[0])

    def keys(self) -> Iterable[str]:
        return (r[0] for r in self._db.execute("SELECT key FROM emb"))
