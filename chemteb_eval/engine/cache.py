"""A persistent embedding cache: a folder per model, keyed by prompt and text, each put one
immutable block file that one ``os.link`` publishes under the next free number.

Why files published by a link, not SQLite rows: a put writes its block (header, keys, costs,
vectors) to a private ``.part`` file in one sequential write, then links it to the next number;
the link takes the whole finished file or fails because another writer took that number. A block
is thus committed by construction, and two writers never overwrite each other. The numbers order
the blocks, so every process settles a key written twice alike: the first write wins, a replacing
write (a damaged vector's new one) wins over earlier ones. As SQLite BLOB rows the same 200k x
384 puts and gets ran at 0.04x np.save / 0.03x np.load here (WAL: every byte copied twice);
blocks run at memory speed (``benchmarks/bench_cache.py``). A killed writer leaves its one part
file, locked while it wrote; the next writer to open the cache deletes the part files whose lock
is free. A cache of the layout before (``<model>-<digest>.sqlite``) under this very key (an API
model's: its key holds no versions) is converted once; a local model's older caches, made under
other library versions or kernels, are named in one line with how to delete them (``_folder``).

Each block names its cache: another model's block is refused, never served. Damage never ends a
run in a traceback: a damaged block or vector (cut off, NaN, inf, all zeros, another width) is
dropped with a warning and encoded again; a cache that cannot be written is read as it is.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import itertools
import json
import os
import secrets
import threading
import time
import warnings
import zlib
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from chemteb_eval._files import open_regular
from chemteb_eval.errors import ChemtebError
from chemteb_eval.models.fingerprint import model_fingerprint

from ._blocks import (
    LOCKS,
    MAX_DIM,
    Block,
    block_head,
    identity,
    lock,
    read_header,
    sound_rows,
    write_block,
)
from ._folder import adopted_from, damaged_cache, file_stat, private_names, say_stale
from ._legacy import read_legacy

__all__ = ["EmbeddingCache", "model_fingerprint", "sound_rows", "text_key"]

MAX_SECONDS_PER_TEXT = 3600.0  # an hour for one text: no encoder is that slow
Rows = NDArray[np.float32]


def text_key(prompt: str, text: str) -> str:
    """The cache key of one (prompt, text): a SHA-256 of both, never the text itself."""
    # surrogatepass: a text read with errors="surrogateescape" is a key too, not a crash. A
    # prompt holding NUL would make ("a\0b", "c") and ("a", "b\0c") one key: such pairs are
    # hashed after a 0xFF byte, which no UTF-8 text holds (every other key stays as it was).
    data = f"{prompt}\x00{text}".encode("utf-8", "surrogatepass")
    if "\x00" in prompt:
        data = b"\xff" + json.dumps([prompt, text]).encode()
    return hashlib.sha256(data).hexdigest()


# The highest number a block is published under (its 12-digit name): one beyond never steers
_MOST_NUMBER = 10**12 - 1


def _first_block(folder: Path) -> Path | None:
    return min(folder.glob("*.block"), default=None)


class EmbeddingCache:
    """Embeddings of one model on disk: ``root/<model>-<digest>.vectors/``.

    The model is its id and ``revision``, else ``fingerprint`` (default
    ``model_fingerprint(source)``: a hash of a local folder's files, or a Hub cache's commit, so
    a model trained further never reuses old vectors), plus ``variant`` (backend and precision;
    ``None`` for sentence-transformers' torch float32). ``nan_rows``: an all-NaN row is a
    vector ("no vector"), not damage. Raises ``ChemtebError`` when the folder cannot be made and
    holds nothing to read, or the path is not a cache.
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
        software: Mapping[str, str] | None = None,
    ) -> None:
        if revision is None and fingerprint is None:
            fingerprint = model_fingerprint(source)
        self.path, self.ident = self.path_for(
            root, model, revision, source, fingerprint, variant, software
        )
        self.nan_rows, self._closed = nan_rows, False
        self._blocks: list[Block] = []
        self._index: dict[str, int] = {}  # key -> block number << 32 | row
        self._seen: set[str] = set()  # the block files read
        self._damaged: dict[str, tuple[int, int, int] | None] = {}  # stem -> the file judged
        self._next = 1  # the number after every sound block's
        self._verified: set[int] = set()  # the blocks whose checksum a whole read confirmed
        self._lock = threading.RLock()  # the engine's writer thread puts while others read
        if self.path.exists() and not self.path.is_dir():
            raise damaged_cache(self.path, "a file where the cache's folder should be")
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            refused = exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS)  # nothing to read
            if (
                not refused
                and not self.path.is_dir()
                and not self.path.with_suffix(".sqlite").is_file()
            ):
                raise ChemtebError(
                    f"embedding cache folder {root} cannot be written ({exc.strerror or exc}); "
                    "run with --no-cache, or set CHEMTEB_CACHE to a folder you can write to."
                ) from None
        self.read_only = not self._writable()
        self._serves = {self.ident, *adopted_from(self.path)}
        if self.read_only:
            msg = "is read-only: its vectors are used, new ones are kept for this run only."
            warnings.warn(f"embedding cache {self.path} {msg}", stacklevel=2)
        else:
            self._reclaim()
        self._convert_legacy()
        if software:  # a local model's: what its earlier runs left beside it, said once
            before, _ = self.path_for(root, model, revision, source, fingerprint, variant)
            say_stale(self.path, self.ident, before, _first_block)

    @staticmethod
    def path_for(
        root: Path,
        model: str,
        revision: str | None,
        source: str,
        fingerprint: str | None,
        variant: str | None = None,
        software: Mapping[str, str] | None = None,
    ) -> tuple[Path, str]:
        """The cache folder of a model's vectors, and the identity it is keyed by."""
        key: list[Any] = [model, revision, None if revision else (fingerprint or source)]
        # Another backend's or precision's vectors (1e-7 apart for ONNX, 1e-1 for int8) never
        # share a cache with torch float32's; the versions of what computed them (torch,
        # transformers, tokenizers...: a new kernel may round otherwise) are part of it too. A key
        # without them (an API's: its server computes) is the one it always had.
        if software:
            key += [variant, dict(sorted(software.items()))]
        elif variant:
            key.append(variant)
        ident = json.dumps(key)
        digest = hashlib.sha256(ident.encode()).hexdigest()[:16]
        safe = "".join(c if c.isalnum() or c in "-." else "_" for c in model)[-60:]
        return Path(root) / f"{safe}-{digest}.vectors", ident

    @staticmethod
    def files(path: Path) -> list[Path]:
        """Every file of the cache at ``path``, and of one of the layout before still to convert
        beside it: what moving a cache moves."""
        old = path.with_suffix(".sqlite")
        legacy = [Path(f"{old}{s}") for s in ("", "-wal", "-shm")]
        legacy += sorted(path.parent.glob(f"{old.stem}.*d.f32"))
        return (sorted(path.glob("*")) if path.is_dir() else []) + [f for f in legacy if f.exists()]

    @staticmethod
    def adopt(old: Path, new: Path, old_ident: str) -> bool:
        """Move the cache at ``old`` (identity ``old_ident``: an API model's cache from before it
        had a label) to ``new``, which then serves its blocks. False when there is nothing to move
        or ``new`` exists."""
        if new.exists() or new.with_suffix(".sqlite").exists():
            return False
        if old.is_dir():  # the identity goes in first: a kill before the move leaves both
            part = old / f"adopted.{secrets.token_hex(4)}.tmp"
            part.write_text(json.dumps([*adopted_from(old), old_ident]))
            os.replace(part, old / "adopted.json")
            os.replace(old, new)
            return True
        legacy = EmbeddingCache.files(old)  # a cache of the layout before: moved as it is
        for moved in legacy:
            os.replace(moved, new.parent / f"{new.stem}{moved.name[len(old.stem) :]}")
        return bool(legacy)

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
        """Delete dead writers' part files (their lock free; or empty, a minute old, killed
        before the lock), and a torchrun start's mark its dead rank 0 left (an hour old)."""
        for part in [*self.path.glob("*.part"), *self.path.glob("*.new")]:
            try:
                with open_regular(part) as file:
                    old = time.time() - os.fstat(file.fileno()).st_mtime > 60
                    if not lock(file) or (part.suffix == ".new" and not old):
                        continue  # a writer still at work
                part.unlink()
            except OSError:
                continue  # gone already, not a file, or held open (Windows)
        for mark in self.path.glob("ranks.*.check"):  # a torchrun start's, its rank 0 killed
            with contextlib.suppress(OSError):
                if time.time() - mark.stat().st_mtime > 3600:
                    mark.unlink()

    def close(self) -> None:
        with self._lock:
            self._closed = True

    # -- the index ---------------------------------------------------------------------------

    def _refresh(self, own: tuple[int, Block, list[str], bool] | None = None) -> None:
        """Index the blocks committed since the last look, in number order (``own``: the block
        this process just published, known without reading it back)."""
        if self._closed:
            raise ChemtebError(f"embedding cache {self.path} is closed.")
        try:
            stems = [e.name[:-6] for e in os.scandir(self.path) if e.name.endswith(".block")]
        except OSError:
            stems = []
        fresh = [s for s in stems if s not in self._seen and s.isascii() and s.isdigit()]
        damaged, reads = 0, list[tuple[Block, list[str], bool]]()
        for number, stem in sorted((int(s), s) for s in fresh if len(s) < 30):
            path = self.path / f"{stem}.block"
            if stem in self._damaged and self._damaged[stem] == file_stat(path):
                continue  # the damaged file judged before, still there: said once
            try:
                read = own[1:] if own and own[0] == number else read_header(path, self._serves)
            except OSError:  # the disk's trouble, not the block's: left, read at the next look
                damaged += 1
                continue
            if read is None:
                damaged += 1
                self._set_aside(stem, path)
                continue
            self._seen.add(stem)
            self._damaged.pop(stem, None)
            if number < _MOST_NUMBER:  # a hostile 29-digit name steers no number past a read
                self._next = max(self._next, number + 1)
            if own and own[0] == number:  # its vectors are the ones in memory: checked
                self._verified.add(len(self._blocks) + len(reads))
            reads.append(read)
        if reads and not self._index and not any(replace for _, _, replace in reads):
            self._first(reads)  # a fresh process: one dict, not one merge a block
        elif own and len(reads) == 1 and reads[0][0] is own[1]:  # its keys are new (``put``)
            base = len(self._blocks) << 32
            self._blocks.append(own[1])
            self._index.update(zip(own[2], range(base, base + len(own[2])), strict=True))
        else:
            for read in reads:
                self._add(*read)
        self._warn_blocks(damaged)

    def _warn_blocks(self, damaged: int) -> None:
        if damaged:
            warnings.warn(
                f"embedding cache {self.path}: {damaged} stored block(s) were damaged or from "
                "another cache (set aside as .damaged where the cache can be written); their "
                "vectors are encoded again.",
                stacklevel=5,
            )

    def _set_aside(self, stem: str, path: Path) -> None:
        """A damaged block: renamed ``.damaged`` where the cache can be written (its number may
        then hold another writer's block, read at the next look), else remembered by the file's
        identity, so that a block later published under its number is read, not skipped."""
        if not self.read_only:
            with contextlib.suppress(OSError):
                os.replace(path, path.with_suffix(".damaged"))
        self._damaged[stem] = file_stat(path)

    def _first(self, reads: list[tuple[Block, list[str], bool]]) -> None:
        """Index the blocks a fresh cache finds, none replacing: one dict built backwards, so a
        key written twice keeps its first place, as ``_add`` block by block (40 ms less a 200k)."""
        keys: list[str] = []
        slots: list[int] = []
        for block, found, _ in reads:
            base = len(self._blocks) << 32
            self._blocks.append(block)
            keys += found
            slots += range(base, base + len(found))
        self._index = dict(zip(reversed(keys), reversed(slots), strict=True))

    def _add(self, block: Block, keys: list[str], replace: bool) -> None:
        """Index a block: a replacing one wins over what came before, any other only adds."""
        base = len(self._blocks) << 32
        self._blocks.append(block)
        slots = zip(keys, range(base, base + len(keys)), strict=True)
        if replace:
            self._index.update(slots)
        elif self._index.keys().isdisjoint(keys):
            before = len(self._index)
            self._index.update(slots)
            if len(self._index) - before < len(keys):  # a key twice in it: its first row wins
                pairs = zip(keys, range(base, base + len(keys)), strict=True)
                self._index.update(reversed(list(pairs)))
        else:
            for key, slot in slots:
                self._index.setdefault(key, slot)

    def _slots(self, keys: Sequence[str]) -> NDArray[np.int64]:
        """Each key's slot (-1: not stored), the index brought up to date first."""
        with self._lock:
            self._refresh()
            found = list(map(self._index.get, keys, itertools.repeat(-1)))  # 30 ms a 200k
            return np.array(found, dtype=np.int64)

    def blocks_of(self, keys: Sequence[str]) -> NDArray[np.int64]:
        """The block each key's stored vector lies in (in put order; -1: not stored)."""
        return self._slots(keys) >> 32

    def missing(self, keys: Sequence[str]) -> list[str]:
        """The keys not in the cache, in the given order."""
        return [keys[i] for i in np.flatnonzero(self._slots(keys) < 0).tolist()]

    def __len__(self) -> int:
        with self._lock:
            self._refresh()
            return len(self._index)

    def keys(self) -> Iterable[str]:
        """Every stored key, once each (a damaged block's are not stored)."""
        with self._lock:
            self._refresh()
            return iter(sorted(self._index, key=self._index.__getitem__))  # in stored order

    # -- writing -------------------------------------------------------------------------------

    def put(
        self,
        keys: Sequence[str],
        vectors: Rows,
        *,
        seconds: Sequence[float] | None = None,
        replace: bool = False,
    ) -> bool:
        """Store a batch as one block (all of it or none of it survives a kill): ``seconds``,
        what encoding each vector cost; ``replace``, these vectors win over those already there
        (by default the first write wins). False (nothing stored): the cache is read-only."""
        matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        if len(keys) and (matrix.ndim != 2 or not 0 < matrix.shape[1] <= MAX_DIM):
            raise ValueError(f"put: vectors of shape {matrix.shape}; one row a key (2-D).")
        if len(matrix) != len(keys) or (seconds is not None and len(seconds) != len(keys)):
            raise ValueError(f"put: {len(keys)} keys for {len(matrix)} vectors and their costs.")
        costs = np.full(len(keys), np.nan) if seconds is None else np.asarray(seconds, "<f8")
        with self._lock:
            self._refresh()
            if self.read_only:
                return False
            keep = self._to_write(keys, replace)
            if len(keep) < len(keys):
                keys, matrix, costs = [keys[i] for i in keep], matrix[keep], costs[keep]
            return not keep or self._publish(list(keys), matrix, costs.astype("<f8"), replace)

    def _to_write(self, keys: Sequence[str], replace: bool) -> list[int]:
        """The positions of ``keys`` to write: a key's first place in the batch (replacing, its
        last), and unless ``replace`` only keys not stored yet."""
        if len(set(keys)) == len(keys) and (replace or self._index.keys().isdisjoint(keys)):
            return list(range(len(keys)))  # the engine's every put: 10 ms a 200k, not 150
        place = dict(zip(keys, range(len(keys)), strict=True)) if replace else {}
        place = place or {k: i for i, k in reversed(list(enumerate(keys)))}
        return sorted(i for k, i in place.items() if replace or k not in self._index)

    def _publish(
        self, keys: list[str], matrix: Rows, costs: NDArray[np.float64], replace: bool
    ) -> bool:
        """Write a block to a part file of its own, then link it to the next free number."""
        head = block_head(self.ident, keys, matrix.shape[1], replace)
        part, new = private_names(self.path)
        try:
            # a part file is locked from birth (renamed to .part once locked: the lock goes with
            # it) and through its link: an opener reclaims only a dead writer's
            with (new if LOCKS else part).open("xb") as file:
                if LOCKS and lock(file):
                    os.replace(file.name, part)
                write_block(file, head, costs, matrix)
                file.flush()  # its size and time as a reader will see them
                ident, number = identity(file), self._next
                # a damaged block's number is never this process's (its block there would sit
                # under a name judged damaged); nor does it steer the next (a hostile 10^11)
                while f"{number:012d}" in self._damaged or not self._link(part, number):
                    number += 1
                with contextlib.suppress(OSError):
                    part.unlink()  # published: the part's name goes (Windows: once closed)
            with contextlib.suppress(OSError):
                part.unlink(missing_ok=True)
        except BaseException as exc:  # Ctrl-C mid-write too: nothing named, nothing left
            for left in (part, new):
                with contextlib.suppress(OSError):
                    left.unlink(missing_ok=True)
            if isinstance(exc, OSError):
                return self._write_failed(exc)
            raise
        at = len(head) + 8 * len(keys)
        block = Block(self.path / f"{number:012d}.block", matrix.shape[1], at, costs, ident)
        self._refresh((number, block, keys, replace))
        return True

    def _link(self, part: Path, number: int) -> bool:
        try:
            os.link(part, self.path / f"{number:012d}.block")
        except FileExistsError:  # another writer took it: the next one
            return False
        return True

    def _write_failed(self, exc: OSError) -> bool:
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOENT):
            if exc.errno == errno.ENOENT:  # the folder went mid-run: its blocks with it
                msg = "is gone: what it held is encoded again, new vectors kept for this run only."
                warnings.warn(f"embedding cache {self.path} {msg}", stacklevel=4)
            self.read_only = True  # keep going in memory
            return False
        full = exc.errno in (errno.ENOSPC, errno.EDQUOT)
        raise ChemtebError(
            f"embedding cache {self.path}: "
            + ("the disk is full" if full else "its vectors cannot be written")
            + f" ({exc}); what was committed is kept: "
            + ("free some space, or " if full else "")
            + "set CHEMTEB_CACHE to a folder on another disk, or run with --no-cache."
        ) from None

    # -- reading -------------------------------------------------------------------------------

    def _read(
        self, n: int, rows: NDArray[np.int64], out: Rows, at: NDArray[np.int64]
    ) -> Rows | None:
        """Block ``n``'s vectors at ``rows`` into ``out[at]``, left zeros (damage, encoded again)
        where its file no longer holds them or they fail its checksum: the first read of a block
        reads it whole, to be checked (the block's vectors returned: ``_fetch`` checks them
        while the next block is read); then straight into ``out`` where both run in order (a
        task's gather), else one read of a dense span, else one read a row."""
        block = self._blocks[n]
        if block.data is not None:
            out[at] = block.data[rows]
            return None
        check = n not in self._verified
        lo, hi = (0, len(block.seconds)) if check else (int(rows.min()), int(rows.max()) + 1)
        straight = hi - lo == len(rows) and (np.diff(rows) == 1).all() and (np.diff(at) == 1).all()
        dense = check or straight or hi - lo <= 4 * len(rows) + 64
        span = out[at[0] : at[0] + len(rows)] if straight else np.zeros((hi - lo, block.dim), "f4")
        reads = [(lo, span)] if dense else list(zip(rows.tolist(), out[at], strict=True))
        try:
            with open_regular(block.path or Path()) as file:
                if identity(file) != block.stat:
                    return None  # swapped since its header was read: not this block
                for row, into in reads:
                    file.seek(block.at + row * 4 * block.dim)
                    view = into.data.cast("B")
                    while view and (got := file.readinto(view)):  # a read stops at 2 GiB
                        view = view[got:]
        except OSError:
            return None
        if not straight:
            out[at] = span[rows - lo] if dense else [into for _, into in reads]
        return span if check else None

    def _fetch(
        self, keys: Sequence[str], dim: int | None
    ) -> tuple[Rows | None, NDArray[np.bool_], int, set[int]]:
        """The stored vectors of ``keys`` (a key may repeat) of width ``dim`` (default: the first
        stored key's) in one matrix (None: none stored), which rows are found and sound, how many
        distinct keys were damaged (another width is damage too), and the widths stored."""
        slots = self._slots(keys)
        present = np.flatnonzero(slots >= 0)
        number, row = slots[present] >> 32, slots[present] & 0xFFFFFFFF
        order = np.argsort(number, kind="stable")  # grouped by block, each group in key order
        numbers, starts = np.unique(number[order], return_index=True)
        widths = {self._blocks[n].dim for n in numbers.tolist()}
        width = dim or (self._blocks[int(number[0])].dim if len(number) else 0)
        out = np.zeros((len(keys), width), dtype=np.float32)
        found = np.zeros(len(keys), dtype=bool)
        checks = []
        # a block read for the first time is checked (CRC-32, 4 GB/s) on a second thread while
        # the next is read: both let go of the GIL, so the check costs next to nothing
        with ThreadPoolExecutor(max_workers=1) as pool:
            for n, group in zip(
                numbers.tolist(), np.split(order, starts[1:]) if len(order) else [], strict=True
            ):
                if self._blocks[n].dim == width:
                    span = self._read(n, row[group], out, present[group])
                    found[present[group]] = True
                    if span is not None:
                        crc = pool.submit(zlib.crc32, span.data, self._blocks[n].crc[0])
                        checks.append((n, present[group], crc))
        for n, at, crc in checks:
            if crc.result() == self._blocks[n].crc[1]:
                self._verified.add(n)
            else:  # not what was written: damage, every row of the block encoded again
                out[at], found[at] = 0, False
        found &= sound_rows(out, self.nan_rows, among=found)
        bad = len(np.unique(slots[present][~found[present]]))
        return (out if width else None), found, bad, widths

    def _warn_damaged(self, damaged: int) -> None:
        if damaged:
            warnings.warn(
                f"embedding cache {self.path}: {damaged} stored vector(s) were damaged (wrong "
                "length, inf, NaN or all zeros); they are encoded again.",
                stacklevel=3,
            )

    def rows(self, keys: Sequence[str], dim: int) -> tuple[Rows, NDArray[np.bool_]]:
        """The vectors of ``keys`` in order, one row a key (a key may repeat), and which were
        found and sound (the others zeros, to encode). A task's gather: one matrix, no dict."""
        out, found, damaged, _ = self._fetch(keys, dim)
        self._warn_damaged(damaged)
        assert out is not None
        out[~found] = 0
        return out, found

    def lookup(self, keys: Sequence[str], dim: int | None = None) -> dict[str, Rows]:
        """The stored vectors of those ``keys`` present and sound, of width ``dim`` (default: each
        key's own); damaged ones are left out, with a warning."""
        unique = list(dict.fromkeys(keys))
        groups: dict[int | None, list[str]] = {dim: unique}
        if dim is None:  # each key at its own width, grouped in one pass (one pass a key's
            groups = {}  # width was quadratic: 8,000 keys 5 s, 100k about 15 min)
            slots = (self._slots(unique) >> 32).tolist()
            for key, n in zip(unique, slots, strict=True):
                if n >= 0:
                    groups.setdefault(self._blocks[n].dim, []).append(key)
        have: dict[str, Rows] = {}
        damaged = 0
        for width, group in groups.items():
            out, found, bad, _ = self._fetch(group, width)
            damaged += bad
            have.update(
                (group[i], out[i]) for i in np.flatnonzero(found).tolist() if out is not None
            )
        self._warn_damaged(damaged)
        return have

    def get(self, keys: Sequence[str]) -> Rows:
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
        """The recorded encoding seconds of those ``keys`` that have a plausible one (1e308 s
        would make a task's time inf; vectors stored before costs were recorded have none)."""
        unique = list(dict.fromkeys(keys))
        slots = self._slots(unique)
        seconds = [
            float(self._blocks[s >> 32].seconds[s & 0xFFFFFFFF]) if s >= 0 else -1.0
            for s in slots.tolist()
        ]
        return {k: s for k, s in zip(unique, seconds, strict=True) if 0 <= s < MAX_SECONDS_PER_TEXT}

    def _convert_legacy(self) -> None:
        """Read a cache of the layout before once into blocks, then delete its files (held in
        memory instead where this cache cannot be written)."""
        old = self.path.with_suffix(".sqlite")
        if not old.is_file():
            return
        try:
            groups = read_legacy(old)
        except ValueError as exc:
            if not old.exists():  # another process converted it meanwhile: its blocks are here
                return
            raise damaged_cache(old, exc) from None
        with self._lock:
            self._refresh()
            for keys, matrix, costs in groups:
                keep = self._to_write(keys, False)
                keys, matrix, costs = [keys[i] for i in keep], matrix[keep], costs[keep]
                if keep and (self.read_only or not self._publish(keys, matrix, costs, False)):
                    self._add(Block(None, matrix.shape[1], 0, costs, data=matrix), keys, False)
        for file in [] if self.read_only else self.files(self.path):
            if file.parent != self.path:  # converted: the old files go
                file.unlink(missing_ok=True)
