"""The cache's vectors at memory speed: float32 rows appended to one file per dimension, and an
in-memory index from key digests to rows (issue 39).

Vectors as SQLite rows cost about 25 us each to write and 16 us to read back (39k and 61k
vectors/s: 0.032x ``np.save`` and 0.037x ``np.load`` on 20k x 384, ``benchmarks/bench_cache.py``):
one B-tree insert per key and a Python tuple per row. Here a block of vectors is one ``pwrite``
and its keys one SQLite row (a blob of 32-byte digests), and a lookup is a ``searchsorted`` over
the digests of every block: NumPy calls per block, never per vector.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["HEADER", "KeyIndex", "VectorFile", "digests", "sound_rows"]

HEADER = 64  # bytes before row 0: a magic and the dimension
_FIRST_ID = -(1 << 63)  # below any block id (a hand-edited index may hold 0 or less)
_MAGIC = b"chemteb-vectors1"  # 16 bytes
_HEX = frozenset("0123456789abcdef")
# Rows read in one pread when the gap between two wanted rows is at most this many rows: a
# task's vectors were written together but in length order, so they are dense, not contiguous.
_GAP = 64


def digests(keys: Sequence[str]) -> tuple[NDArray[np.uint8], dict[int, str]]:
    """The 32-byte digest of each key, ``(n, 32)``, and the keys the digests do not spell.

    A text key (64 lowercase hex digits: a SHA-256) is its own bytes, so its digest's hex gives
    it back; any other string is hashed, after a byte no UTF-8 text holds (so never onto a
    text key), and returned in the second value ``{position: key}`` (empty for the engine's).
    """
    if keys and set(map(len, keys)) == {64}:
        joined = "".join(keys)
        # one C call for the whole batch; uppercase hex would alias its lowercase twin
        if joined == joined.lower():
            try:
                raw = bytes.fromhex(joined)
            except ValueError:
                raw = b""
            # fromhex skips whitespace: a key with a space in it is no text key
            if len(raw) == 32 * len(keys):
                return np.frombuffer(raw, dtype=np.uint8).reshape(len(keys), 32), {}
    out = np.empty((len(keys), 32), dtype=np.uint8)
    odd: dict[int, str] = {}
    for i, key in enumerate(keys):
        if len(key) == 64 and set(key) <= _HEX:
            out[i] = np.frombuffer(bytes.fromhex(key), dtype=np.uint8)
        else:
            # b"\xff" starts no UTF-8 text, so no text key (a SHA-256 of "prompt\0text" in
            # UTF-8) is the digest of another key
            digest = hashlib.sha256(b"\xff" + key.encode("utf-8", "surrogatepass"))
            out[i] = np.frombuffer(digest.digest(), dtype=np.uint8)
            odd[i] = key
    return out, odd


def sound_rows(matrix: NDArray[np.float32], nan_rows: bool) -> NDArray[np.bool_]:
    """Which rows are vectors: finite and not all zero (an all-NaN row too where ``nan_rows``:
    a word-vector model's "no vector").

    One pass over the matrix: a row's sum of squares is finite and positive for nearly every
    vector (NaN and inf carry through, an all-zero row gives 0); only rows where it is not (also
    a row so large its squares overflow, or so small they underflow) are checked value by
    value. 16 ms for 200k x 384 here, where the exact checks on every row took 77 ms.
    """
    ok = np.einsum("ij,ij->i", matrix, matrix)
    ok = np.isfinite(ok) & (ok > 0)
    for i in np.flatnonzero(~ok):
        row = matrix[i]
        finite = np.isfinite(row)
        if finite.all():
            ok[i] = bool(row.any())
        elif nan_rows:
            ok[i] = bool(np.isnan(row).all())
    return np.asarray(ok, dtype=bool)


class VectorFile:
    """The float32 rows of one dimension of one cache, after a 64-byte header naming the
    format and the dimension (not the model: a cache renamed to its model's new label, as an
    API model's is, keeps its files).

    Rows are written with ``pwrite`` (in the kernel's page cache before the index that points
    to them commits: a killed process loses nothing committed) and read with ``preadv``; a row
    past the end of the file reads as zeros, which ``sound_rows`` calls damaged.
    """

    def __init__(self, path: Path, dim: int, *, writable: bool) -> None:
        self.path, self.dim, self.width = path, dim, 4 * dim
        self._header = _MAGIC + dim.to_bytes(4, "little") + bytes(HEADER - 20)
        flags = (os.O_RDWR | os.O_CREAT) if writable else os.O_RDONLY
        # O_BINARY: Windows would otherwise translate line ends in the vectors' bytes;
        # O_NONBLOCK: a FIFO in the file's place must not hang the open (refused below)
        extra = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
        self.fd = os.open(path, flags | extra | getattr(os, "O_NONBLOCK", 0), 0o644)
        try:
            if not stat.S_ISREG(os.fstat(self.fd).st_mode):
                raise ValueError(f"{path.name} is not a regular file")
            self.check()
        except BaseException:
            os.close(self.fd)
            raise

    def check(self) -> None:
        """Raise ``ValueError`` when the file holds a header that is not this cache's."""
        head = _pread_bytes(self.fd, HEADER, 0)
        if len(head) == HEADER and head != self._header:
            what = "vectors of another width" if head[:16] == _MAGIC else "not a vector file"
            raise ValueError(f"{self.path.name} holds {what} (its header differs)")

    def rows(self) -> int:
        """The rows the file's size leaves room for (a partial row, left by a kill, counts)."""
        size = os.fstat(self.fd).st_size - HEADER
        return max(0, -(-size // self.width))

    def write(self, matrix: NDArray[np.float32], start: int) -> None:
        """Write ``matrix`` at row ``start`` (the header first, into a new file)."""
        if os.fstat(self.fd).st_size < HEADER:
            _pwrite_all(self.fd, self._header, 0)
        _pwrite_all(self.fd, matrix.data.cast("B"), HEADER + start * self.width)

    def truncate(self, start: int) -> None:
        """Undo a write that was not committed (best effort: a failing disk may refuse)."""
        try:
            if os.fstat(self.fd).st_size > HEADER + start * self.width:
                os.ftruncate(self.fd, HEADER + start * self.width)
        except OSError:
            pass

    def read(self, rows: NDArray[np.int64]) -> NDArray[np.float32]:
        """The vectors at ``rows`` (any order, repeats allowed), one pread per dense run; a
        row the file does not hold whole (its tail lost) reads as zeros."""
        out = self._read(rows)
        whole = (os.fstat(self.fd).st_size - HEADER) // self.width
        out[rows >= whole] = 0
        return out

    def _read(self, rows: NDArray[np.int64]) -> NDArray[np.float32]:
        out = np.empty((len(rows), self.dim), dtype=np.float32)
        if not len(rows):
            return out
        order = np.argsort(rows, kind="stable")
        ordered = rows[order]
        if np.array_equal(ordered, np.arange(ordered[0], ordered[0] + len(ordered))):
            if np.array_equal(order, np.arange(len(order))):  # in file order: no copy at all
                self._pread(out, int(ordered[0]))
                return out
        cuts = np.flatnonzero(np.diff(ordered) > _GAP) + 1
        for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, len(ordered)], strict=True):
            first, last = int(ordered[lo]), int(ordered[hi - 1])
            span = np.empty((last - first + 1, self.dim), dtype=np.float32)
            self._pread(span, first)
            out[order[lo:hi]] = span[ordered[lo:hi] - first]
        return out

    def _pread(self, into: NDArray[np.float32], first: int) -> None:
        view, offset = into.data.cast("B"), HEADER + first * self.width
        while len(view):
            got = _preadinto(self.fd, view, offset)
            if got <= 0:  # past the end: the rest reads as zeros (damaged)
                view[:] = bytes(len(view))
                return
            view, offset = view[got:], offset + got

    def close(self) -> None:
        os.close(self.fd)


def _pwrite_all(fd: int, data: bytes | memoryview, offset: int) -> None:
    view = memoryview(data)
    while len(view):
        done = _pwrite(fd, view, offset)
        view, offset = view[done:], offset + done


# Positioned reads and writes: one system call each where the OS has them (Linux, BSDs, macOS);
# elsewhere (Windows) a seek then a read or write, safe because every call on a cache's files
# runs under the cache's lock and each process has its own descriptors.


def _pwrite(fd: int, view: memoryview, offset: int) -> int:
    if hasattr(os, "pwrite"):
        return os.pwrite(fd, view, offset)
    os.lseek(fd, offset, os.SEEK_SET)
    return os.write(fd, view)


def _preadinto(fd: int, view: memoryview, offset: int) -> int:
    if hasattr(os, "preadv"):
        return os.preadv(fd, [view], offset)
    data = _pread_bytes(fd, len(view), offset)
    view[: len(data)] = data
    return len(data)


def _pread_bytes(fd: int, size: int, offset: int) -> bytes:
    if hasattr(os, "pread"):
        return os.pread(fd, size, offset)
    os.lseek(fd, offset, os.SEEK_SET)
    return os.read(fd, size)


class KeyIndex:
    """Key digests to (dimension, row, seconds), over every block committed so far.

    The winner of a key written more than once is the last write that replaced (a damaged
    row's new vector), else the first write (two runs encoding one text: the first wins), as
    SQLite's ``INSERT OR REPLACE`` / ``OR IGNORE`` had it.
    """

    def __init__(self) -> None:
        empty = np.zeros(0, dtype=np.int64)
        # One tuple, swapped in whole: an interrupt (Ctrl-C in a notebook) mid-update leaves the
        # index as it was, never arrays of two lengths. (last block id, digests, heads sorted,
        # rank (3, n): kind, id, position; dim, row, seconds)
        self._state: tuple[Any, ...] = (
            _FIRST_ID,
            np.zeros((0, 32), dtype=np.uint8),
            np.zeros(0, dtype=np.uint64),
            np.zeros((3, 0), dtype=np.int64),
            empty,
            empty,
            np.zeros(0, dtype=np.float64),
        )

    @property
    def last_block(self) -> int:
        return int(self._state[0])

    @last_block.setter
    def last_block(self, value: int) -> None:
        self._state = (value, *self._state[1:])

    @property
    def dim(self) -> NDArray[np.int64]:
        return self._state[4]  # type: ignore[no-any-return]

    @property
    def row(self) -> NDArray[np.int64]:
        return self._state[5]  # type: ignore[no-any-return]

    @property
    def seconds(self) -> NDArray[np.float64]:
        return self._state[6]  # type: ignore[no-any-return]

    def __len__(self) -> int:
        return len(self._state[2])

    def add(
        self,
        blocks: Sequence[tuple[int, int, int, int, bool, NDArray[np.uint8], NDArray[np.float64]]],
    ) -> None:
        """Blocks ``(id, dim, start, count, replace, digests, seconds)``, in id order."""
        if not blocks:
            return
        # (digests, rank, dim, row, seconds) of the new blocks' entries
        # The lowest rank wins: a write that does not replace ranks by (id, position), the
        # earliest first; a replacing one below them all, the latest first (a key twice in one
        # block: its first row, or replacing, its last, as SQLite had it). ~id reverses the
        # order of any int64 id without overflow.
        new = (
            np.concatenate([b[5] for b in blocks]),
            np.concatenate([_rank(b[0], b[3], b[4]) for b in blocks], axis=1),
            np.concatenate([np.full(b[3], b[1], dtype=np.int64) for b in blocks]),
            np.concatenate([np.arange(b[2], b[2] + b[3], dtype=np.int64) for b in blocks]),
            np.concatenate([b[6] for b in blocks]),
        )
        last = max(self.last_block, blocks[-1][0])
        if 8 * len(new[0]) < len(self):
            self._state = (last, *self._merged(*new))  # a few new keys: no sort of them all
            return
        old = self._state
        every, rank = np.concatenate([old[1], new[0]]), np.concatenate([old[3], new[1]], axis=1)
        head, keep = _winners(every, rank)
        dim, row = np.concatenate([old[4], new[2]]), np.concatenate([old[5], new[3]])
        seconds = np.concatenate([old[6], new[4]])
        self._state = (last, every[keep], head, rank[:, keep], dim[keep], row[keep], seconds[keep])

    def _merged(
        self,
        found: NDArray[np.uint8],
        rank: NDArray[np.int64],
        dim: NDArray[np.int64],
        row: NDArray[np.int64],
        seconds: NDArray[np.float64],
    ) -> tuple[Any, ...]:
        """The index with a few new entries merged in: a known key's entry replaced where the
        new one wins, the others inserted at their place (one pass over the arrays, where a
        full sort of a 1M-key index took 250 ms at every refresh)."""
        head, keep = _winners(found, rank)
        found, rank, dim, row, seconds = (
            found[keep],
            rank[:, keep],
            dim[keep],
            row[keep],
            seconds[keep],
        )
        where = self.find(found)
        _, old_found, old_head, old_rank, old_dim, old_row, old_seconds = self._state
        at = np.flatnonzero(where >= 0)
        mine, theirs = rank[:, at], old_rank[:, where[at]]
        wins = (mine[0] < theirs[0]) | (
            (mine[0] == theirs[0])
            & ((mine[1] < theirs[1]) | ((mine[1] == theirs[1]) & (mine[2] < theirs[2])))
        )
        slots, won = where[at[wins]], at[wins]
        old_rank, old_dim, old_row, old_seconds = (
            old_rank.copy(),
            old_dim.copy(),
            old_row.copy(),
            old_seconds.copy(),
        )
        old_rank[:, slots], old_dim[slots], old_row[slots] = rank[:, won], dim[won], row[won]
        old_seconds[slots] = seconds[won]
        fresh = np.flatnonzero(where < 0)
        places = np.searchsorted(old_head, head[fresh])
        return (
            np.insert(old_found, places, found[fresh], axis=0),
            np.insert(old_head, places, head[fresh]),
            np.insert(old_rank, places, rank[:, fresh], axis=1),
            np.insert(old_dim, places, dim[fresh]),
            np.insert(old_row, places, row[fresh]),
            np.insert(old_seconds, places, seconds[fresh]),
        )

    def find(self, wanted: NDArray[np.uint8]) -> NDArray[np.int64]:
        """The index position of each digest, -1 where absent."""
        _, digests_, sorted_head = self._state[:3]
        head = _head(wanted)
        # searched in sorted order (7x faster than at random here), compared as 4 words
        order = np.argsort(head)
        left = np.empty(len(head), dtype=np.int64)
        left[order] = np.searchsorted(sorted_head, head[order], side="left")
        where = np.full(len(wanted), -1, dtype=np.int64)
        inside = np.flatnonzero(left < len(sorted_head))
        stored, asked = _words(digests_), _words(wanted)
        hit = inside[(stored[left[inside]] == asked[inside]).all(axis=1)]
        where[hit] = left[hit]
        # two stored keys sharing a head number (only crafted keys do that): the one wanted
        # may be further along the run
        runs = inside[sorted_head[left[inside]] == head[inside]]
        for i in runs[where[runs] < 0]:
            j = int(left[i]) + 1
            while j < len(sorted_head) and sorted_head[j] == head[i]:
                if (stored[j] == asked[i]).all():
                    where[i] = j
                    break
                j += 1
        return where


def _winners(
    every: NDArray[np.uint8], rank: NDArray[np.int64]
) -> tuple[NDArray[np.uint64], NDArray[np.int64]]:
    """The head numbers, sorted, of each distinct digest's winning entry, and those entries'
    positions in ``every``: one key written twice sits in one run of its head, winner first."""
    head = _head(every)
    order = np.lexsort((rank[2], rank[1], rank[0], head))
    head = head[order]
    first = np.ones(len(order), dtype=bool)
    same_head = np.flatnonzero(head[1:] == head[:-1]) + 1
    words = _words(every)
    first[same_head] = (words[order[same_head]] != words[order[same_head - 1]]).any(axis=1)
    # Keys sharing a head number (only crafted ones do) may stand between two copies of a key:
    # a key in a run of three or more is compared with every earlier key of its run.
    longer = same_head[same_head >= 2]
    for i in longer[first[longer] & (head[longer - 2] == head[longer])]:
        j = i - 1
        while j >= 0 and head[j] == head[i]:
            if (words[order[j]] == words[order[i]]).all():
                first[i] = False
                break
            j -= 1
    return head[first], order[first]


def _words(found: NDArray[np.uint8]) -> NDArray[np.uint64]:
    return np.ascontiguousarray(found).view(np.uint64)


def _rank(block_id: int, count: int, replace: bool) -> NDArray[np.int64]:
    """(3, count): kind (0 replacing, 1 not), id, position; each ascending = winning first."""
    position = np.arange(count, dtype=np.int64)
    if replace:
        return np.stack([np.zeros(count, np.int64), np.full(count, ~block_id), -position])
    return np.stack([np.ones(count, np.int64), np.full(count, block_id), position])


# Odd 64-bit multipliers drawn afresh in each process: the index number is never stored, and
# keys crafted to share it (as they could share any fixed mix's) cannot be aimed at numbers no
# one can see.
_MIX = tuple(int.from_bytes(os.urandom(8), "little") | 1 for _ in range(4))


def _head(found: NDArray[np.uint8]) -> NDArray[np.uint64]:
    """A 64-bit number from all 32 bytes of each digest, sorted and searched in place of the
    digest. Not its first 8 bytes: keys that share them (counters written as 64 hex digits,
    say) would make runs walked in Python, 50 s for 4,000 such keys; and not a fixed mix, which
    crafted keys could all share (21 s for 4,000)."""
    words = np.ascontiguousarray(found).view("<u8")  # (n, 4), the same on every machine
    mixed: NDArray[np.uint64] = words[:, 0].astype(np.uint64)
    for column, factor in zip(range(1, 4), _MIX, strict=False):
        mixed ^= words[:, column] * np.uint64(factor)
    mixed ^= mixed >> np.uint64(31)
    mixed *= np.uint64(_MIX[3])
    mixed ^= mixed >> np.uint64(29)
    return mixed
