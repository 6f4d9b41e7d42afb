"""A persistent embedding cache: one SQLite index per model, keyed by prompt and text, and its
vectors in one array file per dimension beside it.

A block of vectors is written to the array file first, then one SQLite row names its keys and
rows and commits them: SQLite commits are atomic and its write-ahead log lets several processes
read and write one index, and its write lock hands out the array's rows, so a run killed
mid-encoding keeps every committed block (bytes written but never committed are never read), and
two runs sharing a cache leave it consistent (a key written twice holds the same vector; the first
write wins). Caches written before (vectors as SQLite rows, table ``emb``) are still read.

A model without a pinned revision (a local folder, or a Hub id loaded at whatever ``main`` was)
is keyed on what was loaded: a fingerprint of its files, or the commit its Hub cache holds, so
a model trained further and saved to the same folder never reuses the old vectors.

Damage never ends a run in a traceback: a file that is not a database (or a cache folder that
cannot be written) is one ``ChemtebError`` line with the next step; a damaged vector (wrong
length, NaN) is dropped with a warning and encoded again; a read-only cache that holds the
vectors is read as it is.
"""

from __future__ import annotations

import errno
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

from ._vectors import _FIRST_ID, KeyIndex, VectorFile, digests, sound_rows

__all__ = ["EmbeddingCache", "model_fingerprint", "text_key"]


def text_key(prompt: str, text: str) -> str:
    """The cache key of one (prompt, text): a SHA-256 of both, never the text itself."""
    # surrogatepass: a text read with errors="surrogateescape" is a key too, not a crash (no
    # other text's key changes: strict UTF-8 and surrogatepass agree on every valid string)
    return hashlib.sha256(f"{prompt}\x00{text}".encode("utf-8", "surrogatepass")).hexdigest()


# The cache's tables and their columns, in order: a file with another layout (another tool's
# SQLite file, an older or hand-edited cache) is refused at open, not a traceback at first use.
_LAYOUT = {
    "emb": ("key", "dim", "vec"),
    "meta": ("k", "v"),
    "cost": ("key", "seconds"),
    "blocks": ("id", "dim", "start", "count", "replace", "digests", "seconds", "keys"),
}
# The most rows a block may claim and the widest vector: a hand-edited index must not make a
# read allocate terabytes or a write seek past any disk.
_MAX_ROW, _MAX_DIM = 1 << 40, 1 << 16
# The most rows a write may leave unwritten between the end of the array file and its start
# (rows the index names but the file lost, never reused): 64M rows, 100 GB at 384 dimensions.
# Past it the index is not this file's: said, instead of a sparse file of terabytes.
_MAX_GAP = 1 << 26


def _sound_block(dim: object, start: object, count: object, digests_size: object) -> bool:
    """Whether a ``blocks`` row's numbers describe a block: one check for the readers (its
    vectors) and the writers (the rows it holds, never handed out again)."""
    return (
        isinstance(dim, int)
        and isinstance(start, int)
        and isinstance(count, int)
        and 0 < dim <= _MAX_DIM
        and 0 <= start
        and 0 <= count
        and start + count <= _MAX_ROW
        and digests_size == 32 * count
    )


def _bindable(keys: list[str]) -> list[str]:
    """The keys SQLite can bind (a lone surrogate cannot be; no old row has such a key)."""
    out = []
    for key in keys:
        try:
            key.encode()
        except UnicodeEncodeError:
            continue
        out.append(key)
    return out


class _LayoutError(Exception):
    pass


def _check_layout(
    db: sqlite3.Connection, tables: Sequence[str] = tuple(_LAYOUT), optional: Sequence[str] = ()
) -> None:
    # a trigger or view could rewrite what a block says after it is written (its start onto
    # another key's rows): an index holds tables and their own indexes only
    extra = db.execute(
        "SELECT type, name FROM sqlite_master WHERE type NOT IN ('table', 'index')"
    ).fetchall()
    if extra:
        raise _LayoutError(f"it holds a {extra[0][0]} ({extra[0][1]}), which no cache has")
    for table in (*tables, *optional):
        columns = tuple(r[1] for r in db.execute(f"PRAGMA table_info({table})").fetchall())
        if not columns and table in optional:
            continue
        if columns != _LAYOUT[table]:
            raise _LayoutError(
                f"its table {table} has columns {list(columns)}, not {list(_LAYOUT[table])}"
            )


def _held(path: Path) -> ChemtebError:
    return ChemtebError(
        f"embedding cache {path}: another process has held its write lock for 60 s (a run "
        "paused or stuck mid-write?); let it finish or stop it, then rerun, or set "
        "CHEMTEB_CACHE to another folder."
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
        self._files: dict[int, VectorFile] = {}
        self._index = KeyIndex()
        self._own: dict[
            int, tuple[int, int, int, bool, NDArray[np.uint8], NDArray[np.float64]]
        ] = {}
        self._ends: dict[int, int] = {}  # per width, the rows committed blocks hold
        self._ends_seen = _FIRST_ID
        self._has_blocks = True
        # one statement at a time on the connection: the engine's writer thread commits while
        # the main thread may read or close (SQLite's connection is not to be shared unlocked)
        self._lock = threading.RLock()
        try:
            Path(root).mkdir(parents=True, exist_ok=True)
            self._db = self._open_writable_when_free(ident)
        except _LayoutError as exc:
            raise _damaged(self.path, exc) from None
        except (OSError, sqlite3.OperationalError) as exc:
            if "locked" in str(exc):  # a writable cache another process holds: not read-only
                raise _held(self.path) from None
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

    @staticmethod
    def files(path: Path) -> list[Path]:
        """Every file of the cache whose index is ``path`` (the index, SQLite's write-ahead log
        and its shared memory, one array file per dimension): what moving a cache moves."""
        found = [Path(f"{path}{suffix}") for suffix in ("", "-wal", "-shm")]
        found = [f for f in found if f.exists()]
        return found + sorted(path.parent.glob(f"{path.stem}.*d.f32"))

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
            # One row a committed block: its rows in the array file of its dimension (from
            # `start`, `count` of them), its keys' 32-byte digests and costs as blobs, and the
            # keys the digests do not spell (JSON). Blobs last: a scan of the numbers never
            # reads them.
            db.execute(
                "CREATE TABLE IF NOT EXISTS blocks (id INTEGER PRIMARY KEY, dim INTEGER, "
                "start INTEGER, count INTEGER, replace INTEGER, digests BLOB, seconds BLOB, "
                "keys TEXT)"
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
                _check_layout(db, tables=("emb",), optional=("blocks",))
                break
            except (sqlite3.DatabaseError, _LayoutError) as exc:
                if db is not None:
                    db.close()
                if i + 1 == len(modes):
                    raise _damaged(self.path, exc) from None
        assert db is not None
        self.read_only = True
        self._has_blocks = bool(db.execute("PRAGMA table_info(blocks)").fetchall())
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
                raise _held(self.path) from None
            raise _damaged(self.path, exc) from None

    def close(self) -> None:
        with self._lock:
            self._db.close()
            for file in self._files.values():
                file.close()
            self._files.clear()

    # -- the index ---------------------------------------------------------------------------

    def _refresh(self) -> None:
        """Bring the in-memory index up to every committed block: this run's own (kept since
        their put, never read back) and other processes' (read from the index file)."""
        if not self._has_blocks:
            return
        heads = self._query(
            "SELECT id, dim, start, count, replace, length(digests), typeof(digests) "
            "FROM blocks WHERE id > ? ORDER BY id",
            (self._index.last_block,),
        )
        blocks, damaged = [], 0
        for block_id, dim, start, count, replace, size, kind in heads:
            assert isinstance(block_id, int)
            own = self._own.pop(block_id, None)
            if own is not None:
                blocks.append((block_id, *own))
            elif kind != "blob" or not _sound_block(dim, start, count, size):
                damaged += 1
            else:
                assert isinstance(dim, int) and isinstance(start, int) and isinstance(count, int)
                blocks.append(self._read_block(block_id, dim, start, count, bool(replace)))
        self._own.clear()
        self._index.add(blocks)
        if heads:
            self._index.last_block = max(self._index.last_block, int(heads[-1][0]))  # type: ignore[call-overload]
        if damaged:
            warnings.warn(
                f"embedding cache {self.path}: {damaged} stored block(s) were damaged; their "
                "vectors are encoded again.",
                stacklevel=3,
            )

    def _read_block(
        self, block_id: int, dim: int, start: int, count: int, replace: bool
    ) -> tuple[int, int, int, int, bool, NDArray[np.uint8], NDArray[np.float64]]:
        """Another process's block (its numbers checked by ``_sound_block``): its digests and
        costs (NaN where its cost blob is not one float a key)."""
        (row,) = self._query("SELECT digests, seconds FROM blocks WHERE id = ?", (block_id,))
        keys, seconds = row
        assert isinstance(keys, bytes)
        if isinstance(seconds, bytes) and len(seconds) == 8 * count:
            costs = np.frombuffer(seconds, dtype="<f8").astype(np.float64)
        else:
            costs = np.full(count, np.nan)
        found = np.frombuffer(keys, dtype=np.uint8).reshape(count, 32)
        return block_id, dim, start, count, replace, found, costs

    def _end(self, dim: int) -> int:
        """The row after every row of width ``dim`` a sound block names (inside the write
        lock: what no later write may take). Counted from the blocks not seen before."""
        for block_id, width, start, count, size in self._db.execute(
            "SELECT id, dim, start, count, length(digests) FROM blocks WHERE id > ?",
            (self._ends_seen,),
        ).fetchall():
            self._ends_seen = max(self._ends_seen, int(block_id))
            if _sound_block(width, start, count, size):
                self._ends[width] = max(self._ends.get(width, 0), start + count)
        return self._ends.get(dim, 0)

    def _file(self, dim: int) -> VectorFile | None:
        """The array file of ``dim``-wide vectors (None: a read-only cache without one)."""
        file = self._files.get(dim)
        if file is None:
            path = self.path.with_suffix(f".{dim}d.f32")
            try:
                file = VectorFile(path, dim, writable=not self.read_only)
            except FileNotFoundError:
                if self.read_only:
                    return None  # a read-only cache without vectors of this width
                raise ChemtebError(
                    f"embedding cache {path} cannot be created (a link to a folder that does "
                    f"not exist?); remove it (`rm '{path}'`) and rerun, or run with --no-cache."
                ) from None
            except ValueError as exc:
                raise _damaged(path, exc) from None
            except OSError as exc:
                if self.read_only or not path.is_file():
                    raise ChemtebError(
                        f"embedding cache {path} cannot be opened ({exc.strerror or exc}); run "
                        "with --no-cache, or set CHEMTEB_CACHE to a folder you can write to."
                    ) from None
                self.read_only = True  # the array file itself is read-only: read it as it is
                return self._file(dim)
            self._files[dim] = file
        return file

    def _legacy(self) -> bool:
        """Whether the file holds vectors in the layout caches had before (table ``emb``)."""
        return bool(self._query("SELECT EXISTS (SELECT 1 FROM emb)")[0][0])

    def _where(self, keys: Sequence[str]) -> NDArray[np.int64]:
        """Each key's position in the index (-1: not there)."""
        self._refresh()
        if not len(self._index):
            return np.full(len(keys), -1, dtype=np.int64)
        return self._index.find(digests(keys)[0])

    def missing(self, keys: Sequence[str]) -> list[str]:
        """The keys not in the cache, in the given order."""
        with self._lock:
            where = self._where(keys)
        absent = [keys[i] for i in np.flatnonzero(where < 0).tolist()]
        if not absent or not self._legacy():
            return absent
        return self._missing_old(absent)

    def _missing_old(self, keys: list[str]) -> list[str]:
        """Those of ``keys`` no row of the layout before holds."""
        have: set[object] = set()
        bindable = _bindable(keys)
        for start in range(0, len(bindable), 900):  # SQLite's bound-parameter limit
            chunk = bindable[start : start + 900]
            marks = ",".join("?" * len(chunk))
            have.update(
                r[0] for r in self._query(f"SELECT key FROM emb WHERE key IN ({marks})", chunk)
            )
        return [k for k in keys if k not in have]

    # -- writing -------------------------------------------------------------------------------

    def put(
        self,
        keys: Sequence[str],
        vectors: NDArray[np.float32],
        *,
        seconds: Sequence[float] | None = None,
        replace: bool = False,
    ) -> bool:
        """Store a batch as one block (all of it or none of it survives a kill).

        ``seconds``: what encoding each vector cost. ``replace``: these vectors win over rows
        already there (a damaged row's new vector); by default the first write wins. Returns
        False (nothing stored) when the cache is read-only.
        """
        if self.read_only:
            return False
        matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        if len(keys) and matrix.ndim != 2:
            raise ValueError(f"put: vectors of shape {matrix.shape}; one row a key (2-D).")
        if len(matrix) != len(keys):
            raise ValueError(f"put: {len(keys)} keys for {len(matrix)} vectors.")
        if seconds is not None and len(seconds) != len(keys):
            raise ValueError(f"put: {len(keys)} keys for {len(seconds)} costs.")
        if not len(keys):
            return True
        dim = int(matrix.shape[1])
        if not 0 < dim <= _MAX_DIM:
            raise ValueError(f"put: vectors of {dim} dimensions; 1 to {_MAX_DIM} are stored.")
        costs = np.full(len(keys), np.nan) if seconds is None else np.asarray(seconds, "<f8")
        if not replace and self._legacy():  # the first write wins over old rows too
            fresh = set(self._missing_old(list(keys)))
            keep = [i for i, k in enumerate(keys) if k in fresh]
            if len(keep) < len(keys):
                keys, matrix, costs = [keys[i] for i in keep], matrix[keep], costs[keep]
                if not keys:
                    return True
        found, odd = digests(keys)
        with self._lock:
            return self._put_block(odd, matrix, found, costs.astype("<f8"), replace)

    def _put_block(
        self,
        odd: dict[int, str],
        matrix: NDArray[np.float32],
        found: NDArray[np.uint8],
        costs: NDArray[np.float64],
        replace: bool,
    ) -> bool:
        try:
            file = self._file(int(matrix.shape[1]))
            if file is None or self.read_only:
                return False
            block_id, start = self._commit(file, odd, matrix, found, costs, replace)
        except OSError as exc:  # the array file (SQLite's own errors are not OSError)
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                raise self._full(exc) from None
            if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
                self.read_only = True  # keep going in memory
                return False
            raise ChemtebError(
                f"embedding cache {self.path}: its vectors cannot be written ({exc}); "
                "run with --no-cache, or set CHEMTEB_CACHE to another folder."
            ) from None
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc):
                raise _held(self.path) from None
            if "full" in str(exc):
                raise self._full(exc) from None
            if "readonly" not in str(exc) and "read-only" not in str(exc):
                raise _damaged(self.path, exc) from None
            self.read_only = True  # e.g. the file itself is read-only: keep going in memory
            return False
        except sqlite3.ProgrammingError as exc:
            raise ChemtebError(f"embedding cache {self.path} is closed ({exc}).") from None
        except sqlite3.DatabaseError as exc:
            raise _damaged(self.path, exc) from None
        self._own[block_id] = (file.dim, start, len(matrix), replace, found, costs)
        return True

    def _commit(
        self,
        file: VectorFile,
        odd: dict[int, str],
        matrix: NDArray[np.float32],
        found: NDArray[np.uint8],
        costs: NDArray[np.float64],
        replace: bool,
    ) -> tuple[int, int]:
        """Write the vectors, then commit the block that names them: (its id, its first row)."""
        start = -1
        if self._db.in_transaction:  # a put interrupted (Ctrl-C) between BEGIN and its end
            self._db.execute("ROLLBACK")
        try:
            self._db.execute("BEGIN IMMEDIATE")  # the write lock: the rows handed out are ours
            on_disk = file.rows()
            # after every row a block names (even one the file lost: a reader holding that
            # block must read zeros, never another key's vector) and after any bytes a killed
            # writer left
            start = max(self._end(file.dim), on_disk)
            if start - on_disk > _MAX_GAP:
                raise ChemtebError(
                    f"embedding cache {self.path}: its index names rows {start - on_disk:,} "
                    f"past the end of {file.path.name}, which is not this index's (damaged); "
                    f"delete the cache's files (`rm '{self.path.parent / self.path.stem}'.*`) "
                    "and rerun, or run with --no-cache."
                )
            file.write(matrix, start)  # in the page cache before the index names it
            # the keys the digests do not spell (none of the engine's): JSON {position: key}
            blobs = (found.tobytes(), costs.tobytes(), json.dumps(odd) if odd else None)
            cursor = self._db.execute(
                "INSERT INTO blocks VALUES (NULL, ?, ?, ?, ?, ?, ?, ?)",
                (file.dim, start, len(matrix), int(replace), *blobs),
            )
            self._db.execute("COMMIT")
        except BaseException:
            # Still in the transaction, the write lock is ours: the bytes written are cut off
            # before ROLLBACK releases it (after it, another writer may append past them and
            # commit). Outside it (committed, then an interrupt; or undone by SQLite itself, as
            # on a full disk) they stay: named, or never read (the next write starts after).
            if self._db.in_transaction:
                if start >= 0:
                    file.truncate(start)
                self._db.execute("ROLLBACK")
            raise
        assert cursor.lastrowid is not None
        return cursor.lastrowid, start

    def _full(self, exc: BaseException) -> ChemtebError:
        return ChemtebError(
            f"embedding cache {self.path}: the disk is full ({exc}); what was committed "
            "is kept: free some space, or set CHEMTEB_CACHE to a folder on another disk, "
            "or run with --no-cache."
        )

    # -- reading -------------------------------------------------------------------------------

    def _fetch(
        self, unique: list[str], dim: int | None
    ) -> tuple[list[tuple[NDArray[np.int64], NDArray[np.float32]]], int]:
        """The sound stored vectors of the keys ``unique`` (a key may repeat): groups of
        (positions in ``unique``, their vectors), one group per width and one per row of the
        layout before, and how many rows were damaged."""
        groups: list[tuple[NDArray[np.int64], NDArray[np.float32]]] = []
        damaged = 0
        with self._lock:
            where = self._where(unique)
            present = np.flatnonzero(where >= 0)
            widths = self._index.dim[where[present]]
            for width in np.unique(widths):
                at = present[widths == width]
                file = self._file(int(width)) if dim in (None, width) else None
                if file is None:  # another width than the model's, or its file is gone
                    damaged += len(np.unique(where[at]))  # a key asked twice counts once
                    continue
                matrix = file.read(self._index.row[where[at]])
                ok = sound_rows(matrix, self.nan_rows)
                damaged += len(np.unique(where[at[~ok]]))
                groups.append((at, matrix) if ok.all() else (at[ok], matrix[ok]))
        absent = np.flatnonzero(where < 0)
        if len(absent) and self._legacy():
            old: dict[str, NDArray[np.float32]] = {}
            rest = _bindable(list(dict.fromkeys(unique[i] for i in absent)))
            for start in range(0, len(rest), 900):
                chunk = rest[start : start + 900]
                marks = ",".join("?" * len(chunk))
                rows = self._query(f"SELECT key, dim, vec FROM emb WHERE key IN ({marks})", chunk)
                damaged += self._decode(rows, dim, old)
            by_width: dict[int, tuple[list[int], list[NDArray[np.float32]]]] = {}
            for i in absent.tolist():
                vector = old.get(unique[i])
                if vector is not None:
                    at_width, rows_of_width = by_width.setdefault(len(vector), ([], []))
                    at_width.append(i)
                    rows_of_width.append(vector)
            for at_width, rows_of_width in by_width.values():
                groups.append((np.array(at_width, dtype=np.int64), np.stack(rows_of_width)))
        return groups, damaged

    def _warn_damaged(self, damaged: int) -> None:
        if damaged:
            warnings.warn(
                f"embedding cache {self.path}: {damaged} stored vector(s) were damaged (wrong "
                "length, inf, NaN or all zeros); they are encoded again.",
                stacklevel=3,
            )

    def lookup(self, keys: Sequence[str], dim: int | None = None) -> dict[str, NDArray[np.float32]]:
        """The stored vectors of those ``keys`` that are present and sound.

        A row whose bytes are not ``dim`` float32 values (``dim`` from the row, or the given
        one) or that holds NaN/inf is damaged: it is left out (so the caller encodes it again),
        with a warning naming how many.
        """
        unique = list(dict.fromkeys(keys))
        groups, damaged = self._fetch(unique, dim)
        self._warn_damaged(damaged)
        rows: list[NDArray[np.float32] | None] = [None] * len(unique)
        for at, matrix in groups:
            for i, row in zip(at.tolist(), matrix, strict=True):
                rows[i] = row
        return {k: row for k, row in zip(unique, rows, strict=True) if row is not None}

    def _decode(
        self,
        rows: list[tuple[object, ...]],
        dim: int | None,
        found: dict[str, NDArray[np.float32]],
    ) -> int:
        """Rows of the layout before (table ``emb``) into ``found``, sound ones only, checked a
        whole matrix at a time; the count of damaged."""
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
            ok = sound_rows(matrix, self.nan_rows)
            damaged += len(group) - int(ok.sum())
            for (key, _), row, good in zip(group, matrix, ok, strict=True):
                if good:
                    found[key] = row
        return damaged

    def costs(self, keys: Sequence[str]) -> dict[str, float]:
        """The recorded encoding seconds of those ``keys`` that have one (rows written before
        costs were recorded, or by a read-only cache's owner without them, have none)."""
        unique = list(dict.fromkeys(keys))
        with self._lock:
            where = self._where(unique)
            seconds = np.full(len(unique), np.nan)
            seconds[where >= 0] = self._index.seconds[where[where >= 0]]
        # a plausible cost only: 1e308 s would make evaluation_time inf
        fine = (seconds >= 0) & (seconds < MAX_SECONDS_PER_TEXT)
        found = {unique[i]: float(seconds[i]) for i in np.flatnonzero(fine)}
        rest = _bindable([unique[i] for i in np.flatnonzero(where < 0)])
        if not rest or not self._legacy():
            return found
        try:
            for start in range(0, len(rest), 900):
                chunk = rest[start : start + 900]
                marks = ",".join("?" * len(chunk))
                for key, cost in self._query(
                    f"SELECT key, seconds FROM cost WHERE key IN ({marks})", chunk
                ):
                    if isinstance(cost, float) and 0 <= cost < MAX_SECONDS_PER_TEXT:
                        found[str(key)] = cost
        except ChemtebError:
            return found  # a read-only cache from before costs were recorded: no cost table
        return found

    def rows(self, keys: Sequence[str], dim: int) -> tuple[NDArray[np.float32], NDArray[np.bool_]]:
        """The vectors of ``keys`` in order, one row a key (a key may repeat), and which rows
        were found and sound (the others are zeros, to encode; damaged ones are said as in
        ``lookup``). What a task's gather reads: one matrix, no dict of rows."""
        groups, damaged = self._fetch(list(keys), dim)
        self._warn_damaged(damaged)
        if len(groups) == 1 and len(groups[0][0]) == len(keys):
            return groups[0][1], np.ones(len(keys), dtype=bool)  # positions 0..n-1, in order
        out = np.zeros((len(keys), dim), dtype=np.float32)
        found = np.zeros(len(keys), dtype=bool)
        for at, matrix in groups:
            out[at], found[at] = matrix, True
        return out, found

    def get(self, keys: Sequence[str]) -> NDArray[np.float32]:
        """The vectors of ``keys``, in order; every key must be present and sound."""
        if not keys:
            return np.zeros((0, 0), np.float32)
        # a key asked twice is found twice (its row read twice), not deduplicated by string:
        # hashing 200k strings cost 48 ms, a sixth of the whole read
        groups, damaged = self._fetch(list(keys), None)
        self._warn_damaged(damaged)
        if sum(len(at) for at, _ in groups) < len(keys):
            have = {int(i) for at, _ in groups for i in at}
            absent = {k for i, k in enumerate(keys) if i not in have}
            raise KeyError(f"{len(absent)} embedding(s) are not in the cache {self.path}")
        if len({matrix.shape[1] for _, matrix in groups}) > 1:
            raise ValueError(f"get: the vectors of these keys differ in width ({self.path}).")
        if len(groups) == 1 and np.array_equal(groups[0][0], np.arange(len(keys))):
            return groups[0][1]  # every key from one read, in order: no copy
        out = np.empty((len(keys), groups[0][1].shape[1]), dtype=np.float32)
        for at, matrix in groups:
            out[at] = matrix
        return out

    def __len__(self) -> int:
        with self._lock:
            self._refresh()
            count = len(self._index)
            if self._legacy():  # rows of the layout before that no block holds again
                old = [str(r[0]) for r in self._query("SELECT key FROM emb")]
                count += int((self._where(old) < 0).sum())
        return count

    def keys(self) -> Iterable[str]:
        """Every stored key, once each."""
        seen: dict[str, None] = {}
        if self._has_blocks:
            for dim, start, count, found, odd in self._query(
                "SELECT dim, start, count, digests, keys FROM blocks ORDER BY id"
            ):
                size = len(found) if isinstance(found, bytes) else None
                if not _sound_block(dim, start, count, size):
                    continue  # a damaged block: its keys are not in the cache
                assert isinstance(found, bytes)
                listed = [found[i : i + 32].hex() for i in range(0, len(found), 32)]
                try:
                    named = json.loads(odd) if isinstance(odd, str) else {}
                    for at, key in named.items() if isinstance(named, dict) else ():
                        if isinstance(key, str) and 0 <= int(at) < len(listed):
                            listed[int(at)] = key
                except ValueError:
                    pass
                seen.update((k, None) for k in listed)
        seen.update((str(r[0]), None) for r in self._query("SELECT key FROM emb"))
        return iter(seen)
