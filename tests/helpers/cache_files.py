"""The embedding cache's files read and rewritten by hand, independently of ``engine/cache.py``
and ``engine/_vectors.py``: tests that count committed vectors, compare two caches' vectors or
damage one row go through here, so they hold for the layout of issue 39 (vectors in array
files, blocks in SQLite) and for the layout before it (vectors as rows of table ``emb``)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

HEADER = 64  # the array files' header: b"chemteb-vectors1", the dimension, zeros


def _blocks(db: sqlite3.Connection) -> list[tuple[int, int, int, int, int, bytes, str | None]]:
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "blocks" not in tables:
        return []
    return db.execute(
        "SELECT id, dim, start, count, replace, digests, keys FROM blocks ORDER BY id"
    ).fetchall()


def stored_vectors(path: Path) -> dict[str, bytes]:
    """Every key's stored vector (float32 bytes), the winner where one was written twice: the
    last replacing write, else the first; rows of the layout before where no block has it."""
    db = sqlite3.connect(path)
    try:
        out: dict[str, bytes] = {}
        for _, dim, start, count, replace, digests, odd in _blocks(db):
            names = json.loads(odd) if odd else {}
            data = path.with_suffix(f".{dim}d.f32").read_bytes()
            assert data[:16] == b"chemteb-vectors1"
            assert int.from_bytes(data[16:20], "little") == dim
            for i in range(count):
                key = names.get(str(i), digests[32 * i : 32 * i + 32].hex())
                offset = HEADER + (start + i) * 4 * dim
                if replace or key not in out:
                    out[key] = data[offset : offset + 4 * dim]
        for key, vec in db.execute("SELECT key, vec FROM emb"):
            out.setdefault(key, vec)
        return out
    finally:
        db.close()


def committed(path: Path) -> int:
    """How many vectors the cache's index has committed (blocks' counts and old rows)."""
    db = sqlite3.connect(path)
    try:
        n = db.execute("SELECT COUNT(*) FROM emb").fetchone()[0]
        return int(n) + sum(block[3] for block in _blocks(db))
    finally:
        db.close()


def to_old_layout(path: Path) -> None:
    """Rewrite a cache as caches were before issue 39: every vector a row of ``emb`` (its
    width in ``dim``), costs in ``cost``, no blocks and no array files."""
    vectors = stored_vectors(path)
    db = sqlite3.connect(path)
    try:
        dims = {}
        for _, dim, _, count, _, digests, odd in _blocks(db):
            names = json.loads(odd) if odd else {}
            for i in range(count):
                dims[names.get(str(i), digests[32 * i : 32 * i + 32].hex())] = dim
        with db:
            db.execute("DELETE FROM blocks")
            db.executemany(
                "INSERT OR REPLACE INTO emb VALUES (?, ?, ?)",
                [(k, dims.get(k, len(v) // 4), v) for k, v in vectors.items()],
            )
    finally:
        db.close()
    for file in path.parent.glob(f"{path.stem}.*d.f32"):
        file.unlink()


def text_digest(key: str) -> bytes:
    """The digest a block stores for ``key`` (a text key's own bytes, else a hash)."""
    if len(key) == 64 and set(key) <= set("0123456789abcdef"):
        return bytes.fromhex(key)
    return hashlib.sha256(b"chemteb-key\x00" + key.encode()).digest()
