"""The embedding cache's files read and rewritten by hand, independently of ``engine/cache.py``:
tests that count committed vectors, compare two caches' vectors or damage one go through here.

The layout (issue 45): a model's cache is a folder ``<model>-<digest>.vectors`` of block files
``<number>.block``, each ``b"chemteb-block-v3"``, the JSON header's length (u64 little-endian),
the header (``cache``, ``dim``, ``count``, ``replace``, ``key_bytes``), the keys' UTF-8 bytes
(surrogates passed) joined by line breaks, zeros to a multiple of 8, ``count`` key lengths (u64, in
characters), ``count`` float64 costs, ``count`` x ``dim`` float32 vectors, then the CRC-32 of
all before it (u32) and 4 zero bytes. A key written twice:
the last replacing block's vector wins, else the first block's."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np


def blocks(path: Path) -> list[tuple[Path, dict[str, Any], list[str], int]]:
    """Every block file of the cache at ``path`` in number order: (file, header, keys, the
    byte where its vectors start)."""
    out = []
    for file in sorted(path.glob("*.block"), key=lambda f: int(f.stem)):
        data = file.read_bytes()
        assert data[:16] == b"chemteb-block-v3", file
        size = int.from_bytes(data[16:24], "little")
        head = json.loads(data[24 : 24 + size])
        start = 24 + size
        text = data[start : start + head["key_bytes"]].decode("utf-8", "surrogatepass")
        at = start + head["key_bytes"]
        at += -at % 8
        lengths = np.frombuffer(data[at : at + 8 * head["count"]], dtype="<u8").tolist()
        keys, pos = [], 0
        for n in lengths:  # each key then a line break (but the last)
            keys.append(text[pos : pos + n])
            pos += n + 1
        at += 16 * head["count"]
        out.append((file, head, keys, at))
    return out


def stored_vectors(path: Path) -> dict[str, bytes]:
    """Every key's stored vector (float32 bytes), the winner where one was written twice."""
    out: dict[str, bytes] = {}
    for file, head, keys, at in blocks(path):
        data, width = file.read_bytes(), 4 * head["dim"]
        for i, key in enumerate(keys):
            if head["replace"] or key not in out:
                out[key] = data[at + i * width : at + (i + 1) * width]
    return out


def committed(path: Path) -> int:
    """How many vectors the cache's blocks hold (a key written twice counted twice)."""
    return sum(head["count"] for _, head, _, _ in blocks(path))


def legacy(path: Path) -> Path:
    """The SQLite file a cache of the layout before issue 45 kept beside ``path``."""
    return path.with_suffix(".sqlite")


def to_old_layout(path: Path) -> Path:
    """Rewrite a cache as caches were before issue 39: one SQLite file of rows (every vector a
    row of ``emb``, its width in ``dim``, costs in ``cost``), its blocks removed; that file."""
    vectors = stored_vectors(path)
    dims = {k: h["dim"] for _, h, keys, _ in blocks(path) for k in keys}
    old = legacy(path)
    db = sqlite3.connect(old)
    try:
        with db:
            db.execute("CREATE TABLE IF NOT EXISTS emb (key TEXT UNIQUE, dim INTEGER, vec BLOB)")
            db.execute("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT)")
            db.execute("CREATE TABLE IF NOT EXISTS cost (key TEXT PRIMARY KEY, seconds REAL)")
            db.executemany(
                "INSERT OR REPLACE INTO emb VALUES (?, ?, ?)",
                [(k, dims[k], v) for k, v in vectors.items()],
            )
    finally:
        db.close()
    for file in path.iterdir():
        file.unlink()
    path.rmdir()
    return old


def vectors_of(path: Path, key: str) -> np.ndarray:
    """One key's stored vector, read by hand."""
    return np.frombuffer(stored_vectors(path)[key], dtype=np.float32)
