"""A persistent embedding cache: one folder per model, keyed by prompt and text, each block of
vectors one immutable file published by a link to its number.

Why files published by a link, not SQLite rows: a put is one sequential write of the block (its
header, keys, costs and vectors) to a private ``.part`` file, then one ``os.link`` to the next
free block number, which either takes the whole finished file or fails because another writer
took that number first. A block is therefore committed by construction: it is there whole or
not at all, and two writers sharing a cache never overwrite one another; the numbers order the
blocks, so a reader settles a key written twice the same way in every process (the first write
wins; a replacing write, a damaged vector's new one, wins over earlier ones). Vectors stored as
SQLite BLOB rows put and got 200k x 384 at 0.04x np.save / 0.03x np.load here (WAL, overflow
pages: every byte copied twice); these files run at memory speed (``benchmarks/bench_cache.py``).

What a killed writer leaves is its one ``.part`` file: it holds an exclusive lock on it while
writing, and the next writer that opens the cache deletes every part file whose lock is free.
Caches written before (an SQLite index ``<model>-<digest>.sqlite``, its vectors as rows of table
``emb`` or in array files) are read once and converted into blocks.

A model without a pinned revision (a local folder, or a Hub id loaded at whatever ``main`` was)
is keyed on what was loaded: a fingerprint of its files, or the commit its Hub cache holds, so a
model trained further and saved to the same folder never reuses the old vectors. Every block
names the cache it belongs to: a block from another model's cache is refused, never served.

Damage never ends a run in a traceback: a cache that cannot be written and holds nothing to read
is one ``ChemtebError`` line with the next step; a damaged block or vector (cut off, NaN, inf, all
zeros, another width) is dropped with a warning and encoded again; a cache that cannot be written
is read as it is.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import secrets
import stat as stat_module
import threading
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from io import FileIO
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from chemteb_eval.errors import ChemtebError
from chemteb_eval.models.fingerprint import model_fingerprint

from ._legacy import read_legacy

__all__ = ["EmbeddingCache", "model_fingerprint", "sound_rows", "text_key"]

MAGIC = b"chemteb-block-v2"  # a block file's first 16 bytes; the header's length follows (u64)
MAX_SECONDS_PER_TEXT = 3600.0  # an hour for one text: no encoder is that slow
_MAX_DIM, _MAX_COUNT = 1 << 16, 1 << 31  # a hostile header must not make a read allocate TBs


def text_key(prompt: str, text: str) -> str:
    """The cache key of one (prompt, text): a SHA-256 of both, never the text itself."""
    # surrogatepass: a text read with errors="surrogateescape" is a key too, not a crash (no
    # other text's key changes: strict UTF-8 and surrogatepass agree on every valid string)
    return hashlib.sha256(f"{prompt}\x00{text}".encode("utf-8", "surrogatepass")).hexdigest()


def sound_rows(
    matrix: NDArray[np.float32], nan_rows: bool, among: NDArray[np.bool_] | None = None
) -> NDArray[np.bool_]:
    """Which rows are vectors: finite and not all zero (an all-NaN row too where ``nan_rows``:
    a word-vector model's "no vector"); only the rows ``among`` are asked (others may be False).

    One pass over the matrix: a row's sum of squares is finite and positive for nearly every
    vector; only rows where it is not (also rows whose squares overflow or underflow) are checked
    value by value. 16 ms for 200k x 384 here, where the exact checks on every row took 77 ms.
    """
    ok = np.einsum("ij,ij->i", matrix, matrix)
    ok = np.isfinite(ok) & (ok > 0)
    odd = np.flatnonzero(~ok if among is None else ~ok & among)
    rows = matrix[odd]
    finite = np.isfinite(rows).all(axis=1)
    ok[odd] = np.where(finite, rows.any(axis=1), nan_rows & np.isnan(rows).all(axis=1))
    return np.asarray(ok, dtype=bool)


@dataclass(frozen=True)
class _Block:
    """One committed block as read at refresh: where its vectors start, their costs, and the
    file's identity then (a file swapped after it was read is damage, not this block)."""

    path: Path | None
    dim: int
    count: int
    at: int
    seconds: NDArray[np.float64]
    stat: tuple[int, int, int] = (0, 0, 0)
    data: NDArray[np.float32] | None = None  # an old read-only cache's rows, held in memory


def _damaged(path: Path, exc: object) -> ChemtebError:
    return ChemtebError(
        f"embedding cache {path} is damaged or not a cache ({exc}); delete it (`rm -r '{path}'`) "
        "and rerun, or run with --no-cache, or set CHEMTEB_CACHE to another folder."
    )


def _lock(file: object) -> bool:
    """Take an exclusive lock on an open file without waiting (True: taken). On Windows, where
    ``fcntl`` is missing, an open file cannot be deleted: that is the lock there."""
    try:
        import fcntl
    except ImportError:
        return True
    try:
        fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # type: ignore[attr-defined]
    except OSError:
        return False
    return True


def _open_regular(path: Path) -> FileIO:
    """A block file opened for reading, never waiting (a FIFO put in its place would block an
    open for ever): OSError where it is not a regular file."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    if not stat_module.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    return os.fdopen(fd, "rb", buffering=0)


class EmbeddingCache:
    """Embeddings of one model (id + revision, else its fingerprint) on disk.

    Args:
        root: the cache folder (one ``.vectors`` folder per model).
        model: the model id.
        revision: the model revision (``None`` when unknown: a fingerprint of the weights then
            stands in, see ``model_fingerprint``).
        source: where the weights were loaded from.
        fingerprint: what identifies the weights when ``revision`` is ``None``; default
            ``model_fingerprint(source)``, else the source path itself.
        variant: what else sets the vectors (backend and precision), ``None`` for
            sentence-transformers' torch in float32.
        nan_rows: an all-NaN row is a vector ("no vector": a word-vector model's text with no
            known word), not damage.

    Raises:
        ChemtebError: the folder cannot be created or written and holds no cache to read, or
            the path is not a cache.
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
        self.nan_rows = nan_rows
        if revision is None and fingerprint is None:
            fingerprint = model_fingerprint(source)
        self.path, self.ident = self.path_for(root, model, revision, source, fingerprint, variant)
        self._blocks: list[_Block] = []
        self._index: dict[str, int] = {}  # key -> block number << 32 | row
        self._seen = -1  # the highest block number read
        self._closed = False
        # the engine's writer thread puts while the main thread reads: one at a time
        self._lock = threading.RLock()
        if self.path.exists() and not self.path.is_dir():
            raise _damaged(self.path, "a file where the cache's folder should be")
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            if not self.path.is_dir() and not self.path.with_suffix(".sqlite").is_file():
                raise ChemtebError(
                    f"embedding cache folder {root} cannot be written ({exc.strerror or exc}); "
                    "run with --no-cache, or set CHEMTEB_CACHE to a folder you can write to."
                ) from None
        self.read_only = not self._writable()
        self._adopted = self._read_adopted()
        if self.read_only:
            warnings.warn(
                f"embedding cache {self.path} is read-only: its vectors are used, new ones are "
                "kept for this run only.",
                stacklevel=2,
            )
        else:
            self._reclaim()
        self._convert_legacy()

    @staticmethod
    def path_for(
        root: Path,
        model: str,
        revision: str | None,
        source: str,
        fingerprint: str | None,
        variant: str | None = None,
    ) -> tuple[Path, str]:
        """The cache folder of a model's vectors, and the identity it is keyed by."""
        key = [model, revision, None if revision else (fingerprint or source)]
        # Vectors of another backend or precision (ONNX Runtime, int8, fp16) never share a cache
        # with torch float32's: they differ by 1e-7 (ONNX) to 1e-1 (int8), and which one a cached
        # score came from must be knowable. float32 torch keeps the key it always had.
        ident = json.dumps([*key, variant] if variant else key)
        digest = hashlib.sha256(ident.encode()).hexdigest()[:16]
        safe = "".join(c if c.isalnum() or c in "-." else "_" for c in model)[-60:]
        return Path(root) / f"{safe}-{digest}.vectors", ident

    @staticmethod
    def files(path: Path) -> list[Path]:
        """Every file of the cache at ``path`` (its blocks, what it adopted, and a cache of the
        layout before still to convert): what moving a cache moves."""
        found = sorted(path.glob("*")) if path.is_dir() else []
        old = path.with_suffix(".sqlite")
        legacy = [Path(f"{old}{s}") for s in ("", "-wal", "-shm")]
        legacy += sorted(path.parent.glob(f"{old.stem}.*d.f32"))
        return found + [f for f in legacy if f.exists()]

    @staticmethod
    def adopt(old: Path, new: Path, ident: str) -> bool:
        """Move the cache at ``old`` to ``new`` (an API model's cache from before it had a label,
        ``ident`` the label's identity): its blocks, written under ``old``'s identity, are served
        there. False when there is nothing to move or ``new`` exists."""
        if new.exists() or new.with_suffix(".sqlite").exists():
            return False
        if not old.is_dir():  # a cache of the layout before: moved as it is, converted later
            legacy = [f for f in EmbeddingCache.files(old) if f.parent != old]
            for file in legacy:
                os.replace(file, new.parent / f"{new.stem}{file.name[len(old.stem) :]}")
            return bool(legacy)
        adopted = old / "adopted.json"  # written before the move: a kill between leaves both
        names = json.loads(adopted.read_text()) if adopted.is_file() else []
        for found in sorted(old.glob("*.block"))[:1]:  # the identity its blocks were written under
            try:
                with _open_regular(found) as handle:
                    size = int.from_bytes(handle.read(24)[16:], "little")
                    names.append(json.loads(handle.read(min(size, 1 << 20)))["cache"])
            except (OSError, ValueError, KeyError, TypeError):
                pass  # a damaged block: nothing to serve
        part = old / f"adopted.{secrets.token_hex(4)}.part"
        part.write_text(json.dumps([*names, ident]))
        os.replace(part, adopted)
        os.replace(old, new)
        return True

    def _read_adopted(self) -> set[str]:
        """The identities whose blocks this cache serves: its own, and any it was moved to."""
        try:
            names = json.loads((self.path / "adopted.json").read_text())
        except (OSError, ValueError):
            names = []
        return (
            {self.ident, *(n for n in names if isinstance(n, str))}
            if isinstance(names, list)
            else {self.ident}
        )

    def _writable(self) -> bool:
        """Whether blocks can be written here (root ignores chmod: a real write is the test)."""
        try:
            probe = self.path / f"probe.{os.getpid()}.{secrets.token_hex(4)}.part"
            probe.open("xb").close()
            probe.unlink(missing_ok=True)  # another opener may have reclaimed it
        except OSError:
            return False
        return True

    def _reclaim(self) -> None:
        """Delete the part files of writers that died mid-block (their lock is free)."""
        for part in self.path.glob("*.part"):
            try:
                with part.open("rb") as file:
                    if not _lock(file):
                        continue  # a writer still at work
                part.unlink()
            except OSError:
                continue  # gone already, or held open (Windows)

    def close(self) -> None:
        with self._lock:
            self._closed = True

    def _check_open(self) -> None:
        if self._closed:
            raise ChemtebError(f"embedding cache {self.path} is closed.")

    # -- the index ---------------------------------------------------------------------------

    def _refresh(self, own: tuple[int, _Block, list[str], bool] | None = None) -> None:
        """Read the blocks committed since the last look into the index, in number order
        (``own``: the block this process just published, known without reading it back)."""
        self._check_open()
        try:
            stems = [e.name[:-6] for e in os.scandir(self.path) if e.name.endswith(".block")]
        except OSError:
            stems = []
        found = sorted((int(s), s) for s in stems if s.isascii() and s.isdigit())
        damaged = 0
        for number, stem in (n for n in found if n[0] > self._seen):
            self._seen = number
            read = own[1:] if own and own[0] == number else self._header(f"{stem}.block")
            if read is None:
                damaged += 1
                continue
            self._add(*read)
        if damaged:
            warnings.warn(
                f"embedding cache {self.path}: {damaged} stored block(s) were damaged or from "
                "another cache; their vectors are encoded again.",
                stacklevel=3,
            )

    def _add(self, block: _Block, keys: list[str], replace: bool) -> None:
        """Index a block: a replacing one wins over what came before, any other only adds."""
        base = len(self._blocks) << 32
        self._blocks.append(block)
        slots = zip(keys, range(base, base + len(keys)), strict=True)
        if replace:
            self._index.update(slots)
        elif self._index.keys().isdisjoint(keys):  # reversed: a key twice keeps its first
            self._index.update(reversed(list(slots)) if len(set(keys)) < len(keys) else slots)
        else:
            for key, slot in slots:
                self._index.setdefault(key, slot)

    def _header(self, name: str) -> tuple[_Block, list[str], bool] | None:
        """A block file's header, checked against its size and this cache (None: damaged)."""
        path = self.path / name
        try:
            with _open_regular(path) as file:
                stat = os.fstat(file.fileno())
                head = file.read(24)
                size = int.from_bytes(head[16:24], "little")
                if head[:16] != MAGIC or not 0 < size <= stat.st_size:
                    return None
                meta = json.loads(file.read(size))
                dim, count, lines = meta["dim"], meta["count"], meta["lines"]
                ok = meta["cache"] in self._adopted and isinstance(meta["replace"], bool)
                ok = ok and {type(dim), type(count), type(lines)} == {int}
                if not ok or not (0 < dim <= _MAX_DIM and 0 < count <= _MAX_COUNT):
                    return None
                at = -(-(24 + size + lines) // 8) * 8  # the costs start 8-byte aligned
                if stat.st_size != at + count * (8 + 4 * dim):
                    return None
                keys = file.read(lines).decode("utf-8", "surrogatepass").split("\n")
                keys = meta["keys"] if meta.get("keys") is not None else keys
                if len(keys) != count or set(map(type, keys)) != {str}:
                    return None
                file.seek(at)
                seconds = np.frombuffer(file.read(8 * count), dtype="<f8").astype(np.float64)
        except (OSError, ValueError, KeyError, TypeError):
            return None
        ident = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
        return _Block(path, dim, count, at + 8 * count, seconds, ident), keys, meta["replace"]

    def _slots(self, keys: Sequence[str]) -> NDArray[np.int64]:
        """Each key's slot (-1: not stored), the index brought up to date first."""
        with self._lock:
            self._refresh()
            get = self._index.get
            return np.fromiter((get(k, -1) for k in keys), dtype=np.int64, count=len(keys))

    def missing(self, keys: Sequence[str]) -> list[str]:
        """The keys not in the cache, in the given order."""
        slots = self._slots(keys)
        return [keys[i] for i in np.flatnonzero(slots < 0).tolist()]

    def __len__(self) -> int:
        with self._lock:
            self._refresh()
            return len(self._index)

    def keys(self) -> Iterable[str]:
        """Every stored key, once each (a damaged block's are not stored)."""
        with self._lock:
            self._refresh()
            return iter(list(self._index))

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

        ``seconds``: what encoding each vector cost. ``replace``: these vectors win over those
        already there (a damaged vector's new one); by default the first write wins. Returns
        False (nothing stored) when the cache is read-only.
        """
        matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        if len(keys) and matrix.ndim != 2:
            raise ValueError(f"put: vectors of shape {matrix.shape}; one row a key (2-D).")
        if len(matrix) != len(keys):
            raise ValueError(f"put: {len(keys)} keys for {len(matrix)} vectors.")
        if seconds is not None and len(seconds) != len(keys):
            raise ValueError(f"put: {len(keys)} keys for {len(seconds)} costs.")
        if len(keys) and not 0 < matrix.shape[1] <= _MAX_DIM:
            raise ValueError(f"put: vectors of {matrix.shape[1]} dimensions; 1 to {_MAX_DIM}.")
        costs = np.full(len(keys), np.nan) if seconds is None else np.asarray(seconds, "<f8")
        with self._lock:
            self._check_open()
            if self.read_only:
                return False
            keep = self._to_write(keys, replace)
            if keep is None:
                return True
            if len(keep) < len(keys):
                keys, matrix, costs = [keys[i] for i in keep], matrix[keep], costs[keep]
            return self._publish(list(keys), matrix, costs.astype("<f8"), replace)

    def _to_write(self, keys: Sequence[str], replace: bool) -> list[int] | None:
        """The positions of ``keys`` to write (None: none): a key's first place in the batch,
        and unless ``replace`` only keys not stored yet."""
        self._refresh()
        if len(set(keys)) == len(keys) and (replace or self._index.keys().isdisjoint(keys)):
            return list(range(len(keys))) or None  # the engine's every put: 10 ms, not 150
        # a key twice in one batch: its first row, or replacing, its last
        place = dict(zip(keys, range(len(keys)), strict=True)) if replace else {}
        place = place or {k: i for i, k in reversed(list(enumerate(keys)))}
        return sorted(i for k, i in place.items() if replace or k not in self._index) or None

    def _publish(
        self,
        keys: list[str],
        matrix: NDArray[np.float32],
        costs: NDArray[np.float64],
        replace: bool,
    ) -> bool:
        """Write a block to a part file of its own, then link it to the next free number."""
        lines = "\n".join(keys).encode("utf-8", "surrogatepass")
        # keys as lines (a quarter of JSON's time), as JSON where a key holds a line break
        listed = keys if lines.count(b"\n") != len(keys) - 1 else None
        lines = b"" if listed is not None else lines
        meta = {"cache": self.ident, "dim": int(matrix.shape[1]), "count": len(keys)}
        head = json.dumps({**meta, "replace": replace, "lines": len(lines), "keys": listed})
        head_bytes = MAGIC + len(head).to_bytes(8, "little") + head.encode() + lines
        part = self.path / f"{os.getpid()}.{secrets.token_hex(8)}.part"
        try:
            with part.open("xb") as file:
                _lock(file)  # held until closed: the mark of a writer still alive
                file.write(head_bytes + b"\0" * (-len(head_bytes) % 8) + costs.tobytes())
                file.write(matrix.data)
                file.flush()  # its size and time as a reader will see them
                stat = os.fstat(file.fileno())
            number = self._link(part)
        except OSError as exc:
            part.unlink(missing_ok=True)
            return self._write_failed(exc)
        except BaseException:  # Ctrl-C mid-write: nothing named, nothing left
            part.unlink(missing_ok=True)
            raise
        part.unlink()
        at = len(head_bytes) + (-len(head_bytes) % 8) + 8 * len(keys)
        ident = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
        block = _Block(
            self.path / f"{number:012d}.block", matrix.shape[1], len(keys), at, costs, ident
        )
        self._refresh((number, block, keys, replace))
        return True

    def _link(self, part: Path) -> int:
        """Publish a finished part file under the next free block number; that number."""
        number = max(self._seen + 1, 1)
        while True:
            try:
                os.link(part, self.path / f"{number:012d}.block")
                return number
            except FileExistsError:  # another writer took it: the next one
                number += 1

    def _write_failed(self, exc: OSError) -> bool:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise ChemtebError(
                f"embedding cache {self.path}: the disk is full ({exc}); what was committed "
                "is kept: free some space, or set CHEMTEB_CACHE to a folder on another disk, "
                "or run with --no-cache."
            ) from None
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            self.read_only = True  # keep going in memory
            return False
        raise ChemtebError(
            f"embedding cache {self.path}: its vectors cannot be written ({exc}); run with "
            "--no-cache, or set CHEMTEB_CACHE to a folder on a local disk."
        ) from None

    # -- reading -------------------------------------------------------------------------------

    def _read(
        self,
        block: _Block,
        rows: NDArray[np.int64],
        out: NDArray[np.float32],
        at: NDArray[np.int64],
    ) -> None:
        """Read a block's vectors at ``rows`` into ``out[at]`` (left zeros, damage encoded again,
        where its file no longer holds them): straight into ``out`` where both run in order (a
        task's gather), else one read of a dense span or one read a row."""
        if block.data is not None:
            out[at] = block.data[rows]
            return
        lo, hi = int(rows[0]), int(rows[-1]) + 1
        if hi - lo == len(rows) == at[-1] - at[0] + 1 and (np.diff(rows) == 1).all():
            if (np.diff(at) == 1).all():
                self._pread(block, [(lo, out[at[0] : at[0] + len(rows)])])
                return
        lo, hi = int(rows.min()), int(rows.max()) + 1
        if hi - lo <= 4 * len(rows) + 64:
            span = np.zeros((hi - lo, block.dim), dtype=np.float32)
            self._pread(block, [(lo, span)])
            out[at] = span[rows - lo]
        else:
            self._pread(
                block, [(r, out[a]) for r, a in zip(rows.tolist(), at.tolist(), strict=True)]
            )

    @staticmethod
    def _pread(block: _Block, reads: list[tuple[int, NDArray[np.float32]]]) -> None:
        """Fill each array from the block's vectors at its first row, if the file is still the
        one its header was read from (a file swapped since is damage: nothing is read)."""
        assert block.path is not None
        try:
            with _open_regular(block.path) as file:
                stat = os.fstat(file.fileno())
                if (stat.st_ino, stat.st_size, stat.st_mtime_ns) != block.stat:
                    return
                for row, into in reads:
                    file.seek(block.at + row * 4 * block.dim)
                    file.readinto(into.data)
        except OSError:
            return

    def _fetch(
        self, keys: Sequence[str], dim: int | None
    ) -> tuple[NDArray[np.float32] | None, NDArray[np.bool_], int, set[int]]:
        """The stored vectors of ``keys`` (a key may repeat) of width ``dim`` (default: the
        first stored key's) in one matrix (None: none stored), which rows are found and sound,
        how many distinct keys of that width were damaged, and every stored key's width."""
        slots = self._slots(keys)
        present = np.flatnonzero(slots >= 0)
        number, row = slots[present] >> 32, slots[present] & 0xFFFFFFFF
        width = dim or next((self._blocks[n].dim for n in np.unique(number).tolist()), 0)
        out = np.zeros((len(keys), width), dtype=np.float32) if width else None
        found = np.zeros(len(keys), dtype=bool)
        order = np.argsort(number, kind="stable")  # grouped by block, each group in key order
        numbers, starts = np.unique(number[order], return_index=True)
        widths: set[int] = set()
        for n, group in zip(
            numbers.tolist(), np.split(order, starts[1:]) if len(order) else [], strict=True
        ):
            widths.add(self._blocks[n].dim)
            if out is not None and self._blocks[n].dim == width:
                self._read(self._blocks[n], row[group], out, present[group])
                found[present[group]] = True
        if out is not None and len(present):
            found &= sound_rows(out, self.nan_rows, among=found)
        bad = len(np.unique(slots[present][~found[present]]))  # another width is damage too
        return out, found, bad, widths

    def _warn_damaged(self, damaged: int) -> None:
        if damaged:
            warnings.warn(
                f"embedding cache {self.path}: {damaged} stored vector(s) were damaged (wrong "
                "length, inf, NaN or all zeros); they are encoded again.",
                stacklevel=3,
            )

    def rows(self, keys: Sequence[str], dim: int) -> tuple[NDArray[np.float32], NDArray[np.bool_]]:
        """The vectors of ``keys`` in order, one row a key (a key may repeat), and which rows
        were found and sound (the others are zeros, to encode; damaged ones are said as in
        ``lookup``). What a task's gather reads: one matrix, no dict of rows."""
        out, found, damaged, _ = self._fetch(keys, dim)
        self._warn_damaged(damaged)
        assert out is not None
        out[~found] = 0
        return out, found

    def lookup(self, keys: Sequence[str], dim: int | None = None) -> dict[str, NDArray[np.float32]]:
        """The stored vectors of those ``keys`` that are present and sound (of width ``dim``,
        else of the first stored key's); damaged ones are left out, with a warning."""
        unique = list(dict.fromkeys(keys))
        if dim is None:  # each key at its own width
            slots = self._slots(unique)
            dims = [self._blocks[n].dim if n >= 0 else 0 for n in (slots >> 32).tolist()]
            groups = {w: [k for k, d in zip(unique, dims, strict=True) if d == w] for w in dims}
        else:
            groups = {dim: unique}
        have: dict[str, NDArray[np.float32]] = {}
        damaged = 0
        for width, group in groups.items():
            out, found, bad, _ = self._fetch(group, width or None)
            damaged += bad
            if out is not None and width:
                have.update((group[i], out[i]) for i in np.flatnonzero(found).tolist())
        self._warn_damaged(damaged)
        return have

    def get(self, keys: Sequence[str]) -> NDArray[np.float32]:
        """The vectors of ``keys``, in order; every key must be present and sound."""
        if not keys:
            return np.zeros((0, 0), np.float32)
        out, found, damaged, widths = self._fetch(keys, None)
        if len(widths) > 1:
            raise ValueError(f"get: the vectors of these keys differ in width ({self.path}).")
        self._warn_damaged(damaged)
        if out is None or not found.all():
            absent = {keys[i] for i in np.flatnonzero(~found).tolist()}
            raise KeyError(f"{len(absent)} embedding(s) are not in the cache {self.path}")
        return out

    def costs(self, keys: Sequence[str]) -> dict[str, float]:
        """The recorded encoding seconds of those ``keys`` that have one (vectors stored before
        costs were recorded have none, nor do implausible ones: 1e308 s would make a time inf)."""
        unique = list(dict.fromkeys(keys))
        slots = self._slots(unique)
        out: dict[str, float] = {}
        for i in np.flatnonzero(slots >= 0).tolist():
            cost = float(self._blocks[slots[i] >> 32].seconds[slots[i] & 0xFFFFFFFF])
            if 0 <= cost < MAX_SECONDS_PER_TEXT:
                out[unique[i]] = cost
        return out

    # -- caches written before -----------------------------------------------------------------

    def _convert_legacy(self) -> None:
        """Read a cache of the layout before once: into blocks, its files then deleted (kept and
        held in memory where this cache cannot be written)."""
        old = self.path.with_suffix(".sqlite")
        if not old.is_file():
            return
        with self._lock:
            self._refresh()
            try:
                groups = read_legacy(old)
            except ValueError as exc:
                raise _damaged(old, exc) from None
            for keys, matrix, costs in groups:
                fresh = self._to_write(keys, False)
                if fresh is None:
                    continue
                keys, matrix, costs = [keys[i] for i in fresh], matrix[fresh], costs[fresh]
                if self.read_only or not self._publish(keys, matrix, costs, False):
                    block = _Block(None, matrix.shape[1], len(keys), 0, costs, data=matrix)
                    self._add(block, keys, False)
            if not self.read_only:  # converted: the old files go
                for file in self.files(self.path):
                    if file.parent != self.path:
                        file.unlink(missing_ok=True)
