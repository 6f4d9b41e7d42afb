"""A persistent embedding cache: one SQLite file per model, keyed by prompt and text.

SQLite commits are atomic and its write-ahead log lets several processes read and write one
file: a run killed mid-encoding keeps every committed batch, and two runs sharing a cache leave
it consistent (a key written twice holds the same vector; the first write wins).

A model without a pinned revision (a local folder, or a Hub id loaded at whatever ``main`` was)
is keyed on what was loaded: a fingerprint of its files, or the commit its Hub cache holds, so
a model trained further and saved to the same folder never reuses the old vectors.

Damage never ends a run in a traceback: a file that is not a database (or a cache folder that
cannot be written) is one ``ChemtebError`` line with the next step; a damaged vector (wrong
length, NaN) is dropped with a warning and encoded again; a read-only cache that holds the
vectors is read as it is.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from chemteb_eval.errors import ChemtebError
from chemteb_eval.models.fingerprint import model_fingerprint

__all__ = ["EmbeddingCache", "model_fingerprint", "text_key"]


def text_key(prompt: str, text: str) -> str:
    """The cache key of one (prompt, text): a SHA-256 of both, never the text itself."""
    return hashlib.sha256(f"{prompt}\x00{text}".encode()).hexdigest()


# The cache's tables and their columns, in order: a file with another layout (another tool's
# SQLite file, an older or hand-edited cache) is refused at open, not a traceback at first use.
_LAYOUT = {"emb": ("key", "dim", "vec"), "meta": ("k", "v"), "cost": ("key", "seconds")}


class _LayoutError(Exception):
    pass


def _check_layout(db: sqlite3.Connection, tables: Sequence[str] = tuple(_LAYOUT)) -> None:
    for table in tables:
        columns = tuple(r[1] for r in db.execute(f"PRAGMA table_info({table})").fetchall())
        if columns != _LAYOUT[table]:
            raise _LayoutError(
                f"its table {table} has columns {list(columns)}, not {list(_LAYOUT[table])}"
            )


MAX_SECONDS_PER_TEXT = 3600.0  # an hour for one text: no encoder is that slow


def _damaged(path: Path, exc: BaseException) -> ChemtebError:
    return ChemtebError(
        f"embedding cache {path} is damaged or not a cache ({exc}); delete it (`rm '{path}'`) "
        "and rerun, or run with --no-cache, or set CHEMTEB_CACHE to another folder."
    )


class EmbeddingCache:
    """Embeddings of one model (id + revision, else its fingerprint) on disk.

    Args:
        root: the cache folder (one ``.sqlite`` file per model).
        model: the model id.
        revision: the model revision (``None`` when unknown: a fingerprint of the weights then
            stands in, see ``model_fingerprint``).
        source: where the weights were loaded from.
        fingerprint: what identifies the weights when ``revision`` is ``None``; default
            ``model_fingerprint(source)``, else the source path itself.
        variant: what else sets the vectors (backend and precision), ``None`` for
            sentence-transformers' torch in float32.

    Raises:
        ChemtebError: the folder cannot be created or written and holds no cache to read, or
            the file is not an SQLite database.
    """

    def __init__(
        self,
        root: Path,
        model: str,
        revision: str | None,
        source: str,
        *,
        fingerprint: str | None = None,
        variant: str | None = None,
        nan_rows: bool = False,
    ) -> None:
        # Whether an all-NaN row is a vector ("no vector": a word-vector model's text with no
        # known word) or damage (any other model never returns one: it would reach the
        # scorer as "embeddings contain NaN", blaming the encoder for the cache's row).
        self.nan_rows = nan_rows
        if revision is None and fingerprint is None:
            fingerprint = model_fingerprint(source)
        self.path, ident = self.path_for(root, model, revision, source, fingerprint, variant)
        self.read_only = False
        # one statement at a time on the connection: the engine's writer thread commits while
        # the main thread may read or close (SQLite's connection is not to be shared unlocked)
        self._lock = threading.RLock()
        try:
            Path(root).mkdir(parents=True, exist_ok=True)
            self._db = self._open_writable_when_free(ident)
        except _LayoutError as exc:
            raise _damaged(self.path, exc) from None
        except (OSError, sqlite3.OperationalError) as exc:
            if not self.path.is_file() or not os.access(self.path, os.R_OK):
                raise ChemtebError(
                    f"embedding cache folder {root} cannot be written "
                    f"({getattr(exc, 'strerror', None) or exc}); run with --no-cache, or set "
                    "CHEMTEB_CACHE to a folder you can write to."
                ) from None
            self._db = self._open_read_only()
        except sqlite3.DatabaseError as exc:
            raise _damaged(self.path, exc) from None

    @staticmethod
    def path_for(
        root: Path,
        model: str,
        revision: str | None,
        source: str,
        fingerprint: str | None,
        variant: str | None = None,
    ) -> tuple[Path, str]:
        """The cache file of a model's vectors, and the identity it is keyed by."""
        key = [model, revision, None if revision else (fingerprint or source)]
        # Vectors of another backend or precision (ONNX Runtime, int8, fp16) never share a file
        # with torch float32's: they differ by 1e-7 (ONNX) to 1e-1 (int8), and which one a cached
        # score came from must be knowable. float32 torch keeps the key it always had.
        ident = json.dumps([*key, variant] if variant else key)
        digest = hashlib.sha256(ident.encode()).hexdigest()[:16]
        safe = "".join(c if c.isalnum() or c in "-." else "_" for c in model)[-60:]
        return Path(root) / f"{safe}-{digest}.sqlite", ident

    def _open_writable_when_free(self, ident: str, wait: float = 60.0) -> sqlite3.Connection:
        """``_open_writable``, waiting while another process holds the file: two runs starting
        on one new cache race to set WAL mode and create the tables, and SQLite answers the
        loser "database is locked" at once (changing the journal mode does not wait on the busy
        timeout). Only a lock is waited on; any other error is raised as it is."""
        deadline = time.monotonic() + wait
        while True:
            try:
                return self._open_writable(ident)
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def _open_writable(self, ident: str) -> sqlite3.Connection:
        # the engine commits from one writer thread, never two threads at once
        db = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
        try:
            # 16 KiB pages hold a 384-d row (1.5 KiB) without overflow pages; set before the
            # first table, so only a new file takes it (an old one keeps its page size).
            db.execute("PRAGMA page_size=16384")
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            # A rowid table with a unique key: vectors append in rowid order and only the
            # 64-byte keys go into a B-tree, where a WITHOUT ROWID table kept whole 1.5 KiB rows
            # in key order (random inserts: 3x slower to write, 4x to read, measured in
            # benchmarks/bench_pipeline.py). Files made before keep their table and still work:
            # the columns and every statement are the same.
            db.execute("CREATE TABLE IF NOT EXISTS emb (key TEXT UNIQUE, dim INTEGER, vec BLOB)")
            db.execute("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT)")
            # What encoding each vector cost (seconds), so a cache hit still knows it; a table
            # of its own, so caches written before it need no migration (their rows have none).
            db.execute(
                "CREATE TABLE IF NOT EXISTS cost (key TEXT PRIMARY KEY, seconds REAL) WITHOUT ROWID"
            )
            _check_layout(db)
            db.execute("INSERT OR IGNORE INTO meta VALUES ('model', ?)", (ident,))
        except BaseException:
            db.close()
            raise
        return db

    def _open_read_only(self) -> sqlite3.Connection:
        # immutable=1: no lock and no -shm file, which a read-only folder cannot hold; nobody
        # can be writing to a file in a folder that cannot be written.
        # A write-ahead log left by a killed writer holds committed rows that immutable=1 would
        # not see: read-only mode reads it (when its index file can be had), else immutable.
        base = self.path.resolve().as_uri()
        modes = ["mode=ro", "immutable=1"] if Path(f"{self.path}-wal").exists() else []
        modes = modes or ["immutable=1"]
        for i, mode in enumerate(modes):
            db = None
            try:
                db = sqlite3.connect(
                    f"{base}?{mode}", uri=True, isolation_level=None, check_same_thread=False
                )
                _check_layout(db, tables=("emb",))
                break
            except (sqlite3.DatabaseError, _LayoutError) as exc:
                if db is not None:
                    db.close()
                if i + 1 == len(modes):
                    raise _damaged(self.path, exc) from None
        assert db is not None
        self.read_only = True
        warnings.warn(
            f"embedding cache {self.path} is read-only: its vectors are used, new ones are "
            "kept for this run only.",
            stacklevel=3,
        )
        return db

    def _query(self, sql: str, params: Sequence[object] = ()) -> list[tuple[object, ...]]:
        try:
            with self._lock:
                return self._db.execute(sql, params).fetchall()
        except sqlite3.ProgrammingError as exc:  # used after close(): the caller's slip
            raise ChemtebError(f"embedding cache {self.path} is closed ({exc}).") from None
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
                raise
            raise _damaged(self.path, exc) from None

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def missing(self, keys: Sequence[str]) -> list[str]:
        """The keys not in the cache, in the given order."""
        have: set[object] = set()
        for start in range(0, len(keys), 900):  # SQLite's bound-parameter limit
            chunk = keys[start : start + 900]
            marks = ",".join("?" * len(chunk))
            have.update(
                r[0] for r in self._query(f"SELECT key FROM emb WHERE key IN ({marks})", chunk)
            )
        return [k for k in keys if k not in have]

    def put(
        self,
        keys: Sequence[str],
        vectors: NDArray[np.float32],
        *,
        seconds: Sequence[float] | None = None,
        replace: bool = False,
    ) -> bool:
        """Store a batch in one transaction (all of it or none of it survives a kill).

        ``seconds``: what encoding each vector cost. ``replace``: overwrite rows already there
        (a damaged row's new vector); by default the first write wins. Returns False (nothing
        stored) when the cache is read-only.
        """
        if self.read_only:
            return False
        matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        if len(keys) and matrix.ndim != 2:
            raise ValueError(f"put: vectors of shape {matrix.shape}; one row a key (2-D).")
        if len(matrix) != len(keys):
            raise ValueError(f"put: {len(keys)} keys for {len(matrix)} vectors.")
        dim = int(matrix.shape[1]) if matrix.ndim == 2 else 0
        raw, width = matrix.tobytes(), 4 * dim  # one copy, sliced per row (not a call per row)
        # in key order: the unique index takes its entries in sequence, not at random
        order = sorted(range(len(keys)), key=keys.__getitem__)
        rows = [(keys[i], dim, raw[i * width : (i + 1) * width]) for i in order]
        verb = "REPLACE" if replace else "IGNORE"
        with self._lock:
            return self._put_rows(rows, keys, order, seconds, verb)

    def _put_rows(
        self,
        rows: list[tuple[str, int, bytes]],
        keys: Sequence[str],
        order: list[int],
        seconds: Sequence[float] | None,
        verb: str,
    ) -> bool:
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany(f"INSERT OR {verb} INTO emb VALUES (?, ?, ?)", rows)
                if seconds is not None:
                    if len(seconds) != len(keys):
                        raise ValueError(f"put: {len(keys)} keys for {len(seconds)} costs.")
                    self._db.executemany(
                        f"INSERT OR {verb} INTO cost VALUES (?, ?)",
                        [(keys[i], float(seconds[i])) for i in order],
                    )
                self._db.execute("COMMIT")
            except BaseException:
                # SQLite undoes a transaction itself on some errors (a full disk): a second
                # ROLLBACK would fail and hide the first error
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc):
                raise
            if "full" in str(exc):
                raise ChemtebError(
                    f"embedding cache {self.path}: the disk is full ({exc}); what was committed "
                    "is kept: free some space, or set CHEMTEB_CACHE to a folder on another disk, "
                    "or run with --no-cache."
                ) from None
            if "readonly" not in str(exc) and "read-only" not in str(exc):
                raise _damaged(self.path, exc) from None
            self.read_only = True  # e.g. the file itself is read-only: keep going in memory
            return False
        except sqlite3.ProgrammingError as exc:
            raise ChemtebError(f"embedding cache {self.path} is closed ({exc}).") from None
        except sqlite3.DatabaseError as exc:
            raise _damaged(self.path, exc) from None
        return True

    def lookup(self, keys: Sequence[str], dim: int | None = None) -> dict[str, NDArray[np.float32]]:
        """The stored vectors of those ``keys`` that are present and sound.

        A row whose bytes are not ``dim`` float32 values (``dim`` from the row, or the given
        one) or that holds NaN/inf is damaged: it is left out (so the caller encodes it again),
        with a warning naming how many.
        """
        found: dict[str, NDArray[np.float32]] = {}
        damaged = 0
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), 900):
            chunk = unique[start : start + 900]
            marks = ",".join("?" * len(chunk))
            rows = self._query(f"SELECT key, dim, vec FROM emb WHERE key IN ({marks})", chunk)
            damaged += self._decode(rows, dim, found)
        if damaged:
            warnings.warn(
                f"embedding cache {self.path}: {damaged} stored vector(s) were damaged (wrong "
                "length, inf, NaN or all zeros); they are encoded again.",
                stacklevel=2,
            )
        return found

    def _decode(
        self,
        rows: list[tuple[object, ...]],
        dim: int | None,
        found: dict[str, NDArray[np.float32]],
    ) -> int:
        """Rows into ``found``, sound ones only, checked a whole matrix at a time (one NumPy
        call per check for all rows of one width, not four per row); the count of damaged."""
        by_dim: dict[int, list[tuple[str, bytes]]] = {}
        damaged = 0
        for key, row_dim, blob in rows:
            want = dim if dim is not None else row_dim
            if (
                not isinstance(blob, bytes)
                or not isinstance(row_dim, int)
                or row_dim != want
                or row_dim < 1
                or len(blob) != 4 * row_dim
            ):
                damaged += 1
                continue
            by_dim.setdefault(row_dim, []).append((str(key), blob))
        for width, group in by_dim.items():
            matrix = np.frombuffer(b"".join(b for _, b in group), dtype=np.float32)
            matrix = matrix.reshape(len(group), width)
            nan = np.isnan(matrix)
            # A row all NaN is a word-vector model's "no vector" (out of vocabulary), kept as
            # is for such a model only; an all-zero row is no embedding (scoring refuses it,
            # blaming the encoder).
            stray = nan.any(axis=1) & ~(nan.all(axis=1) & self.nan_rows)
            zero = ~(matrix != 0).any(axis=1)
            bad = np.isinf(matrix).any(axis=1) | stray | zero
            damaged += int(bad.sum())
            for (key, _), row, is_bad in zip(group, matrix, bad, strict=True):
                if not is_bad:
                    found[key] = row
        return damaged

    def costs(self, keys: Sequence[str]) -> dict[str, float]:
        """The recorded encoding seconds of those ``keys`` that have one (rows written before
        costs were recorded, or by a read-only cache's owner without them, have none)."""
        found: dict[str, float] = {}
        unique = list(dict.fromkeys(keys))
        try:
            for start in range(0, len(unique), 900):
                chunk = unique[start : start + 900]
                marks = ",".join("?" * len(chunk))
                for key, seconds in self._query(
                    f"SELECT key, seconds FROM cost WHERE key IN ({marks})", chunk
                ):
                    # a plausible cost only: 1e308 s would make evaluation_time inf
                    if isinstance(seconds, float) and 0 <= seconds < MAX_SECONDS_PER_TEXT:
                        found[str(key)] = seconds
        except ChemtebError:
            return found  # a read-only cache from before costs were recorded: no cost table
        return found

    def get(self, keys: Sequence[str]) -> NDArray[np.float32]:
        """The vectors of ``keys``, in order; every key must be present and sound."""
        found = self.lookup(keys)
        absent = [k for k in dict.fromkeys(keys) if k not in found]
        if absent:
            raise KeyError(f"{len(absent)} embedding(s) are not in the cache {self.path}")
        return np.stack([found[k] for k in keys]) if keys else np.zeros((0, 0), np.float32)

    def __len__(self) -> int:
        count = self._query("SELECT COUNT(*) FROM emb")[0][0]
        assert isinstance(count, int)
        return count

    def keys(self) -> Iterable[str]:
        return (str(r[0]) for r in self._query("SELECT key FROM emb"))
