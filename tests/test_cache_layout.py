"""The embedding cache's layout of issue 39 (vectors in one array file per dimension, a block's
keys in one SQLite row): what it stores reads back bit for bit, through the cache and through an
independent reader (``helpers/cache_files.py``), and every guarantee the row layout gave holds:
a kill loses at most the block in flight, two processes share one cache, read-only caches are
read, a full disk is said, damaged rows are encoded again, old caches are still read."""

from __future__ import annotations

import errno
import os
import signal
import sqlite3
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chemteb_eval.engine import EmbeddingCache, EmbeddingEngine, text_key
from chemteb_eval.engine._vectors import KeyIndex, digests, sound_rows
from chemteb_eval.errors import ChemtebError

from .conftest import REPO_ROOT
from .helpers.cache_files import committed, stored_vectors, to_old_layout
from .helpers.hashing_encoder import HashingEncoder


def _cache(root: Path, **kwargs: Any) -> EmbeddingCache:
    return EmbeddingCache(root, "org/model", "a" * 40, "org/model", **kwargs)


def _read_only(root: Path, monkeypatch: pytest.MonkeyPatch) -> EmbeddingCache:
    """The cache at ``root`` opened as from a folder that cannot be written (root ignores
    chmod: SQLite's refusal is what a read-only folder gives)."""

    def refuse(self: Any, ident: str, wait: float = 60.0) -> Any:
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(EmbeddingCache, "_open_writable_when_free", refuse)
    with pytest.warns(UserWarning, match="read-only"):
        return _cache(root)


def _stored(root: Path, n: int, first: int | None = None) -> tuple[list[str], np.ndarray]:
    """``n`` keys and vectors, the ``first`` of them (all by default) put in a cache at ``root``."""
    keys, vectors = _keys(n), _vectors(n)
    cache = _cache(root)
    cache.put(keys[:first], vectors[:first])
    cache.close()
    return keys, vectors


def _keys(n: int, salt: str = "") -> list[str]:
    return [text_key("", f"{salt}text {i}") for i in range(n)]


def _vectors(n: int, dim: int = 8, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)


def test_puts_read_back_bit_for_bit_through_the_cache_and_an_independent_reader(
    tmp_path: Path,
) -> None:
    cache = _cache(tmp_path)
    keys, vectors = _keys(300), _vectors(300)
    for start in range(0, 300, 64):
        chunk = keys[start : start + 64]
        assert cache.put(chunk, vectors[start : start + 64], seconds=[0.5] * len(chunk))
    assert np.array_equal(cache.get(keys), vectors)
    assert np.array_equal(cache.get(keys[::-1]), vectors[::-1])  # any order
    assert np.array_equal(cache.get([keys[5], keys[5], keys[2]]), vectors[[5, 5, 2]])
    assert cache.missing([keys[0], "absent", keys[1]]) == ["absent"]
    assert cache.costs([keys[0], "absent"]) == {keys[0]: 0.5}
    assert len(cache) == 300 and list(cache.keys()) == keys
    cache.close()
    # a new process's view: the index is read from the file
    again = _cache(tmp_path)
    assert np.array_equal(again.get(keys), vectors) and len(again) == 300
    assert {k: v for k, v in stored_vectors(again.path).items()} == {
        k: v.tobytes() for k, v in zip(keys, vectors, strict=True)
    }
    again.close()
    files = [f.name.removeprefix(again.path.stem) for f in EmbeddingCache.files(again.path)]
    assert files[0] == ".sqlite" and files[-1] == ".8d.f32"
    assert (tmp_path / f"{again.path.stem}.8d.f32").stat().st_size == 64 + 300 * 8 * 4


def test_keys_that_are_not_text_keys_and_vectors_of_two_widths(tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    odd = ["k0", "K" * 64, "é\x00", "A" * 64, "a" * 64]  # uppercase hex is another key
    cache.put(odd, _vectors(5, 4))
    cache.put(["wide"], _vectors(1, 6, seed=1))
    assert list(cache.keys()) == [*odd, "wide"]
    assert set(cache.lookup([*odd, "wide"])) == {*odd, "wide"}
    with pytest.warns(UserWarning, match="1 stored vector"):  # the other width: damaged
        assert cache.lookup(["wide", "k0"], dim=4).keys() == {"k0"}
    with pytest.raises(ValueError, match="differ in width"):
        cache.get(["wide", "k0"])
    with pytest.raises(KeyError, match="1 embedding"):
        cache.get(["k0", "nope", "nope"])
    cache.close()
    assert stored_vectors(cache.path)["é\x00"] == _vectors(5, 4)[2].tobytes()


def test_the_first_write_wins_and_a_replacing_write_wins_over_it(tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    first, second, third = _vectors(3, seed=1), _vectors(3, seed=2), _vectors(3, seed=3)
    keys = _keys(3)
    cache.put(keys, first)
    cache.put(keys[:2], second[:2])  # another run encoded them too: the first stays
    assert np.array_equal(cache.get(keys), first)
    cache.put(keys[1:2], second[1:2], replace=True)  # a damaged row's new vector
    cache.put(keys[1:2], third[1:2])  # written after, not replacing: loses
    want = np.stack([first[0], second[1], first[2]])
    assert np.array_equal(cache.get(keys), want)
    cache.close()
    again = _cache(tmp_path)
    assert np.array_equal(again.get(keys), want) and len(again) == 3
    again.close()
    assert stored_vectors(again.path)[keys[1]] == second[1].tobytes()


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    writes=st.lists(
        st.tuples(st.lists(st.integers(0, 30), min_size=1, max_size=12), st.booleans()),
        min_size=1,
        max_size=8,
    ),
    reopen=st.booleans(),
    between=st.booleans(),
    filler=st.sampled_from([0, 400]),
)
def test_any_sequence_of_writes_reads_as_first_or_replacing_write_wins(
    tmp_path_factory: pytest.TempPathFactory,
    writes: list[tuple[list[int], bool]],
    reopen: bool,
    between: bool,
    filler: int,
) -> None:
    """``between``: a read after each write (each block merged into the index on its own,
    into a sorted index ``filler`` keys large: the merge path, not a full sort)."""
    root = tmp_path_factory.mktemp("prop")
    cache = _cache(root)
    names = _keys(31)
    model: dict[str, bytes] = {}
    if filler:
        others = _keys(filler, "filler")
        cache.put(others, _vectors(filler, 4, seed=99) + np.float32(10.0))
        model.update(
            zip(others, (r.tobytes() for r in _vectors(filler, 4, seed=99) + 10), strict=True)
        )
    for n, (picked, replace) in enumerate(writes):
        keys = [names[i] for i in picked]
        vectors = _vectors(len(keys), 4, seed=n) + np.float32(10.0)  # never all zero
        cache.put(keys, vectors, replace=replace)
        for key, row in zip(keys, vectors, strict=True):
            # within one block, a key written twice: the first (or, replacing, the last) row
            if replace or key not in model:
                model[key] = row.tobytes()
        if between:
            assert cache.lookup([names[i] for i in picked]).keys() == set(keys)
    names = list(model) if filler else names
    if reopen:
        cache.close()
        cache = _cache(root)
    found = cache.lookup(names)
    assert {k: v.tobytes() for k, v in found.items()} == model
    assert set(cache.missing([*names, *_keys(31)])) == set(_keys(31)) - set(model)
    assert len(cache) == len(model)
    cache.close()
    assert stored_vectors(cache.path) == model


def test_keys_sharing_their_first_eight_bytes_are_told_apart() -> None:
    # counters written as 64 hex digits share their first bytes: found, and fast (the index's
    # number is drawn from all 32 bytes; it took 50 s for 4,000 such keys when it was the first 8)
    keys = [f"{i:064x}" for i in range(20_000)]
    found, odd = digests(keys)
    assert odd == {}
    index = KeyIndex()
    started = time.perf_counter()
    index.add([(1, 4, 0, len(keys), False, found, np.zeros(len(keys)))])
    assert list(index.row[index.find(found)]) == list(range(len(keys)))
    assert time.perf_counter() - started < 5  # 0.01 s here


def test_keys_whose_index_numbers_collide_are_told_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    # crafted: force every key into a few runs of one number, as only crafted digests would be
    from chemteb_eval.engine import _vectors

    monkeypatch.setattr(_vectors, "_head", lambda found: (found[:, 0] % 2).astype(np.uint64))
    keys = [f"{i:02x}" * 32 for i in range(5)]
    found, odd = digests(keys)
    assert odd == {}
    index = KeyIndex()
    costs = np.arange(5, dtype=np.float64)
    index.add([(1, 4, 0, 5, False, found, costs)])
    index.add([(2, 4, 5, 5, False, found[::-1].copy(), costs)])  # the same keys again: lose
    assert len(index) == 5
    where = index.find(found)
    assert list(index.row[where]) == [0, 1, 2, 3, 4]
    index.add([(3, 4, 10, 1, True, found[3:4].copy(), costs[:1])])
    assert list(index.row[index.find(found)]) == [0, 1, 2, 10, 4]
    assert list(index.find(digests(["ff" * 32, "ab" * 32])[0])) == [-1, -1]


def test_sound_rows_is_exact_where_squares_overflow_or_underflow() -> None:
    rows = np.array(
        [
            [1e30, 1.0],  # squares overflow: still a vector
            [1e-30, 0.0],  # squares underflow to 0: still a vector
            [0.0, 0.0],
            [np.nan, 1.0],
            [np.inf, 1.0],
            [np.nan, np.nan],
            [0.5, -0.5],
        ],
        dtype=np.float32,
    )
    assert list(sound_rows(rows, nan_rows=False)) == [True, True, False, False, False, False, True]
    assert list(sound_rows(rows, nan_rows=True)) == [True, True, False, False, False, True, True]


# -- damage ------------------------------------------------------------------------------------


def _filled(tmp_path: Path) -> tuple[HashingEncoder, list[str], np.ndarray, Path]:
    encoder = HashingEncoder(dim=16)
    texts = [f"molecule {i}" for i in range(20)]
    cache = EmbeddingCache(tmp_path, encoder.meta.name, encoder.meta.revision, "t")
    engine = EmbeddingEngine(encoder, cache, batch_size=4, progress=False)
    engine.prefetch(("", t) for t in texts)
    expected = engine.embed(texts, "")
    engine.close()
    cache.close()
    return encoder, texts, expected, cache.path


def _embed_again(encoder: HashingEncoder, texts: list[str], path: Path) -> np.ndarray:
    cache = EmbeddingCache(path.parent, encoder.meta.name, encoder.meta.revision, "t")
    engine = EmbeddingEngine(encoder, cache, batch_size=4, progress=False)
    engine.prefetch(("", t) for t in texts)
    got = engine.embed(texts, "")
    engine.close()
    cache.close()
    return got


@pytest.mark.parametrize("damage", ["nan", "inf", "zero", "truncated", "deleted"])
def test_damaged_vectors_in_the_array_file_are_encoded_again_and_repaired(
    tmp_path: Path, damage: str
) -> None:
    encoder, texts, expected, path = _filled(tmp_path)
    (data,) = path.parent.glob("*.16d.f32")
    raw = bytearray(data.read_bytes())
    row = 64  # the first stored row's bytes start after the header
    if damage == "nan":
        raw[row : row + 4] = np.float32(np.nan).tobytes()
    elif damage == "inf":
        raw[row + 8 : row + 12] = np.float32(-np.inf).tobytes()
    elif damage == "zero":
        raw[row : row + 64] = bytes(64)
    elif damage == "truncated":  # a disk that lost the file's tail: the last row is short
        raw = raw[:-10]
    data.write_bytes(bytes(raw))
    if damage == "deleted":
        data.unlink()
    with pytest.warns(UserWarning, match=r"(1|20) stored vector\(s\) were damaged"):
        got = _embed_again(encoder, texts, path)
    assert np.array_equal(got, expected)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # repaired on disk: read without a warning
        assert np.array_equal(_embed_again(encoder, texts, path), expected)


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE blocks SET digests = 'text' WHERE id = 1",
        "UPDATE blocks SET digests = x'00' WHERE id = 1",
        "UPDATE blocks SET dim = -3 WHERE id = 1",
        "UPDATE blocks SET start = 1099511627776 WHERE id = 1",
        "UPDATE blocks SET count = 'many' WHERE id = 1",
    ],
)
def test_a_damaged_block_row_is_said_and_its_vectors_encoded_again(
    tmp_path: Path, sql: str
) -> None:
    encoder, texts, expected, path = _filled(tmp_path)
    with sqlite3.connect(path) as db:
        db.execute(sql)
    with pytest.warns(UserWarning, match="damaged"):
        got = _embed_again(encoder, texts, path)
    assert np.array_equal(got, expected)


def test_an_array_file_of_another_kind_is_one_line_naming_it(tmp_path: Path) -> None:
    encoder, texts, _, path = _filled(tmp_path)
    (data,) = path.parent.glob("*.16d.f32")
    data.write_bytes(b"PK\x03\x04" + bytes(200))  # a zip, say, under the vector file's name
    with pytest.raises(ChemtebError, match=r"16d\.f32.*not a vector file.*rm "):
        _embed_again(encoder, texts, path)
    header = bytearray(64)
    header[:16], header[16:20] = b"chemteb-vectors1", (8).to_bytes(4, "little")
    data.write_bytes(bytes(header))
    with pytest.raises(ChemtebError, match="vectors of another width"):
        _embed_again(encoder, texts, path)


# -- faults: a kill, a full disk, a read-only cache, two writers ---------------------------------


def test_bytes_a_killed_writer_left_are_never_read_and_never_overwritten(tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    keys, vectors = _keys(10), _vectors(10)
    cache.put(keys[:5], vectors[:5])
    (data,) = tmp_path.glob("*.8d.f32")
    with data.open("ab") as f:  # a writer killed after its pwrite, before its commit
        f.write(b"\x7f" * 50)  # one row and a half of garbage (not yet named by any block)
    assert committed(cache.path) == 5
    cache.put(keys[5:], vectors[5:])
    assert np.array_equal(cache.get(keys), vectors)
    cache.close()
    assert data.stat().st_size == 64 + (5 + 2 + 5) * 32  # after the orphan rows, rounded up


_WRITER = """
import sys, numpy as np
sys.path.insert(0, {root!r})
from chemteb_eval.engine import EmbeddingCache, text_key
cache = EmbeddingCache(__import__("pathlib").Path({folder!r}), "org/model", "a" * 40, "org/model")
print("ready", flush=True)
for block in range({blocks}):
    keys = [text_key("", f"{{block}} {{i}}") for i in range(200)]
    base = np.arange(200 * 16, dtype=np.float32).reshape(200, 16) + block * 10_000 + 1
    cache.put(keys, base, seconds=[0.01] * 200)
cache.close()
print("done", flush=True)
"""


def _writer(folder: Path, blocks: int) -> subprocess.Popen[str]:
    code = _WRITER.format(root=str(REPO_ROOT), folder=str(folder), blocks=blocks)
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)


def _expected(block: int) -> dict[str, bytes]:
    base = np.arange(200 * 16, dtype=np.float32).reshape(200, 16) + block * 10_000 + 1
    return {text_key("", f"{block} {i}"): base[i].tobytes() for i in range(200)}


@pytest.mark.slow
def test_a_sigkill_mid_write_keeps_every_committed_block_whole(tmp_path: Path) -> None:
    """Killed at a random moment, many times: what the index names is exactly what was put,
    whole blocks only; the next writer appends after whatever the killed one left."""
    rng = np.random.default_rng(0)
    for attempt in range(6):
        proc = _writer(tmp_path, 400)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        time.sleep(float(rng.uniform(0.05, 0.6)))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        cache = _cache(tmp_path)
        stored = stored_vectors(cache.path)
        assert len(stored) % 200 == 0, attempt  # whole blocks only
        for block in range(400):
            want = _expected(block)
            if next(iter(want)) in stored:
                assert {k: stored[k] for k in want} == want
        assert len(cache) == len(stored)
        cache.close()


@pytest.mark.slow
def test_two_processes_writing_one_cache_keep_every_vector(tmp_path: Path) -> None:
    # both write the same 30 blocks (one run and its twin on the same texts) into one cache
    procs = [_writer(tmp_path, 30) for _ in range(2)]
    for proc in procs:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0 and out.split() == ["ready", "done"]
    want: dict[str, bytes] = {}
    for block in range(30):
        want.update(_expected(block))
    cache = _cache(tmp_path)
    assert stored_vectors(cache.path) == want
    got = cache.get(list(want))
    assert got.tobytes() == b"".join(want.values())
    assert len(cache) == 6000 and committed(cache.path) >= 6000
    cache.close()


def test_a_full_disk_under_the_array_file_is_said_and_undone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = _cache(tmp_path)
    keys, vectors = _keys(20), _vectors(20)
    cache.put(keys[:10], vectors[:10])
    (data,) = tmp_path.glob("*.8d.f32")
    size = data.stat().st_size
    real = os.pwrite

    def half_then_full(fd: int, buf: Any, offset: int) -> int:
        if len(buf) > 64:
            real(fd, bytes(buf)[:40], offset)  # some bytes land, then the disk is full
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd, buf, offset)

    monkeypatch.setattr(os, "pwrite", half_then_full)
    with pytest.raises(ChemtebError, match=r"the disk is full.*what was committed is kept"):
        cache.put(keys[10:], vectors[10:])
    monkeypatch.undo()
    assert data.stat().st_size == size  # the half-written rows were cut off again
    assert cache.missing(keys) == keys[10:]
    assert cache.put(keys[10:], vectors[10:])
    assert np.array_equal(cache.get(keys), vectors)
    cache.close()


def test_an_array_file_that_cannot_be_written_leaves_the_run_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys, vectors = _stored(tmp_path, 4, first=2)
    real = os.open

    def refuse_writes(path: Any, flags: int, *args: Any) -> int:
        if str(path).endswith(".f32") and flags & os.O_RDWR:  # root ignores chmod: refuse here
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real(path, flags, *args)

    monkeypatch.setattr(os, "open", refuse_writes)
    cache = _cache(tmp_path)
    assert np.array_equal(cache.get(keys[:2]), vectors[:2])  # read as it is
    assert cache.put(keys[2:], vectors[2:]) is False and cache.read_only
    cache.close()


def test_a_read_only_cache_without_an_array_file_reads_what_it_has(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys, vectors = _stored(tmp_path, 4)
    cache = _cache(tmp_path)
    cache.put(["wide"], _vectors(1, 6))
    cache.close()
    (wide,) = tmp_path.glob("*.6d.f32")
    wide.unlink()

    reader = _read_only(tmp_path, monkeypatch)
    assert np.array_equal(reader.get(keys), vectors)
    with pytest.warns(UserWarning, match="1 stored vector"):
        assert reader.lookup(["wide"]) == {}
    assert reader.put(["new"], _vectors(1)) is False
    reader.close()


# -- caches written before ----------------------------------------------------------------------


def test_an_old_cache_is_read_and_grows_in_the_new_layout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys, vectors = _stored(tmp_path, 6, first=4)
    cache = _cache(tmp_path)
    cache.close()
    to_old_layout(cache.path)
    assert not list(tmp_path.glob("*.f32")) and committed(cache.path) == 4
    with sqlite3.connect(cache.path) as db:
        db.executemany("INSERT INTO cost VALUES (?, ?)", [(k, 0.25) for k in keys[1:4]])
    old = _cache(tmp_path)
    assert np.array_equal(old.get(keys[:4]), vectors[:4])
    assert old.missing(keys) == keys[4:] and len(old) == 4
    assert old.costs(keys) == {k: 0.25 for k in keys[1:4]}
    old.put(keys[4:], vectors[4:])
    old.put(keys[:1], vectors[:1] * 2, replace=True)  # a damaged old row's new vector
    assert np.array_equal(old.get(keys), np.concatenate([vectors[:1] * 2, vectors[1:]]))
    assert len(old) == 6 and set(old.keys()) == set(keys)
    old.close()
    # a read-only copy of a cache from before the array files (no blocks table at all)
    to_old_layout(cache.path)
    with sqlite3.connect(cache.path) as db:
        db.execute("DROP TABLE blocks")

    reader = _read_only(tmp_path, monkeypatch)
    want = np.concatenate([vectors[:1] * 2, vectors[1:]])
    assert np.array_equal(reader.get(keys), want) and len(reader) == 6
    assert reader.missing(keys) == [] and reader.costs(keys) == {k: 0.25 for k in keys[1:4]}
    reader.close()


def test_without_positioned_io_a_seek_then_read_or_write_gives_the_same_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Windows has no os.pwrite/os.preadv/os.pread: the cache seeks, then reads or writes
    for name in ("pwrite", "preadv", "pread"):
        monkeypatch.delattr(os, name, raising=False)
    cache = _cache(tmp_path)
    keys, vectors = _keys(100), _vectors(100)
    cache.put(keys[:60], vectors[:60])
    cache.put(keys[60:], vectors[60:])
    assert np.array_equal(cache.get(keys[::-1]), vectors[::-1])
    cache.close()
    monkeypatch.undo()
    again = _cache(tmp_path)
    assert np.array_equal(again.get(keys), vectors)
    again.close()


# -- what the outside attack on issue 39 found, fixed -------------------------------------------


class _Wrapped:
    """A connection whose statements can fail or be interrupted where a test says."""

    def __init__(self, db: sqlite3.Connection, hook: Any) -> None:
        self.db, self.hook = db, hook

    def __getattr__(self, name: str) -> Any:
        return getattr(self.db, name)

    def execute(self, sql: str, *args: Any) -> Any:
        self.hook(sql, "before")
        out = self.db.execute(sql, *args)
        self.hook(sql, "after")
        return out


def test_attack_a_failed_block_is_cut_off_before_its_lock_is_released(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It was cut off after ROLLBACK: another writer could append past it and commit in
    between, and the cut took that writer's committed vectors with it."""
    from chemteb_eval.engine import _vectors as vector_files

    a, b = _cache(tmp_path), _cache(tmp_path)
    a.put(["k0"], _vectors(1))

    def full_on_insert(sql: str, when: str) -> None:
        if sql.startswith("INSERT INTO blocks") and when == "before":
            raise sqlite3.OperationalError("database or disk is full")

    a._db = _Wrapped(a._db, full_on_insert)  # type: ignore[assignment]
    held = []
    cut = vector_files.VectorFile.truncate

    def truncate(self: Any, start: int) -> None:
        held.append(a._db.in_transaction)
        cut(self, start)

    monkeypatch.setattr(vector_files.VectorFile, "truncate", truncate)
    with pytest.raises(ChemtebError, match="disk is full"):
        a.put(_keys(4), _vectors(4, seed=1))
    assert held == [True]  # cut while the write lock was still a's
    assert b.put(_keys(4, "b"), _vectors(4, seed=2))
    fresh = _cache(tmp_path)
    assert np.array_equal(fresh.get(_keys(4, "b")), _vectors(4, seed=2))
    for cache in (a, b, fresh):
        cache.close()


@pytest.mark.parametrize("where", ["after BEGIN", "after COMMIT"])
def test_attack_ctrl_c_inside_a_put_leaves_no_lock_held_and_no_named_bytes_cut(
    tmp_path: Path, where: str
) -> None:
    """Ctrl-C after BEGIN left the write lock held (every later put "damaged ... delete it",
    other processes waiting 60 s); after COMMIT it cut off bytes the index already named."""
    cache = _cache(tmp_path)
    fired: list[str] = []

    def interrupt(sql: str, when: str) -> None:
        if f"{when} {sql.split()[0]}" == where and not fired:
            fired.append(sql)
            raise KeyboardInterrupt

    cache._db = _Wrapped(cache._db, interrupt)  # type: ignore[assignment]
    keys, vectors = _keys(8), _vectors(8)
    with pytest.raises(KeyboardInterrupt):
        cache.put(keys[:4], vectors[:4])
    assert fired and not cache._db.in_transaction
    assert cache.put(keys[4:], vectors[4:])  # the next put works
    other = _cache(tmp_path)  # another process is not kept waiting
    assert other.put(["other"], _vectors(1, seed=5))
    stored = stored_vectors(other.path)
    if where == "after COMMIT":  # committed before the interrupt: readable, whole
        assert np.array_equal(other.get(keys), vectors)
    else:
        assert other.missing(keys) == keys[:4]
    assert all(len(v) == 32 for v in stored.values())
    cache.close()
    other.close()


def test_attack_a_key_that_is_no_text_key_never_aliases_one(tmp_path: Path) -> None:
    """ "hello" was stored under sha256("chemteb-key\\0hello"): text_key("chemteb-key", "hello")."""
    cache = _cache(tmp_path)
    text = text_key("chemteb-key", "hello")
    cache.put(["hello"], _vectors(1, seed=1))
    assert cache.missing([text]) == [text]
    cache.put([text], _vectors(1, seed=2))
    assert np.array_equal(
        cache.get(["hello", text]), np.concatenate([_vectors(1, seed=1), _vectors(1, seed=2)])
    )
    assert len(cache) == 2 and set(cache.keys()) == {"hello", text}
    cache.close()


def test_attack_a_64_character_key_with_spaces_is_a_key_like_any_other(tmp_path: Path) -> None:
    """bytes.fromhex skips spaces: 31 bytes, then a raw reshape error."""
    cache = _cache(tmp_path)
    key = "ab  " + "cd" * 30
    cache.put([key], _vectors(1))
    assert cache.missing([key, "ab" + "cd" * 31]) == ["ab" + "cd" * 31]
    assert list(cache.keys()) == [key]
    cache.close()


def test_attack_a_block_naming_rows_far_past_the_file_is_said_not_written_to(
    tmp_path: Path,
) -> None:
    """Its start steered every later write: a 32 GB sparse file, or "disk full" on EFBIG."""
    cache = _cache(tmp_path)
    cache.put(["k0"], _vectors(1))
    (data,) = tmp_path.glob("*.8d.f32")
    size = data.stat().st_size
    with sqlite3.connect(cache.path) as db:
        db.execute("UPDATE blocks SET start = 1000000000.5")  # not a whole number: no block
    fresh = _cache(tmp_path)
    with pytest.warns(UserWarning, match="1 stored block"):
        assert fresh.missing(["k0"]) == ["k0"]
    assert fresh.put(["k1"], _vectors(1, seed=1))  # the rows it claims are not honoured
    assert data.stat().st_size == size + 32
    fresh.close()
    with sqlite3.connect(cache.path) as db:
        db.execute("UPDATE blocks SET start = 1000000000 WHERE id = 1")  # a block, not this file's
    fresh = _cache(tmp_path)
    with pytest.raises(ChemtebError, match=r"names rows 999,999,999 past the end of .*\.8d\.f32"):
        fresh.put(["k2"], _vectors(1, seed=2))
    assert data.stat().st_size == size + 32
    for each in (cache, fresh):
        each.close()


def test_attack_a_fifo_in_place_of_the_vector_file_is_one_line_even_read_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The read-only open blocked on the FIFO for ever."""
    cache = _cache(tmp_path)
    cache.put(["k0"], _vectors(1))
    cache.close()
    (data,) = tmp_path.glob("*.8d.f32")
    data.unlink()
    os.mkfifo(data)

    reader = _read_only(tmp_path, monkeypatch)
    started = time.perf_counter()
    with pytest.raises(ChemtebError, match=r"8d\.f32 is not a regular file.*rm "):
        reader.lookup(["k0"])
    assert time.perf_counter() - started < 5
    reader.close()


def test_attack_keys_lists_no_key_of_a_damaged_block(tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    cache.put(["k0"], _vectors(1))
    cache.put(["k1"], _vectors(1, seed=1))
    with sqlite3.connect(cache.path) as db:
        db.execute("UPDATE blocks SET dim = NULL WHERE id = 1")
    fresh = _cache(tmp_path)
    with pytest.warns(UserWarning, match="1 stored block"):
        assert len(fresh) == 1
    assert list(fresh.keys()) == ["k1"]
    cache.close()
    fresh.close()


@pytest.mark.parametrize("device", ["mps", "xpu", "xpu:1"])
def test_attack_an_accelerator_this_machine_lacks_is_one_line(device: str) -> None:
    """--device mps/xpu was a 19-line torch traceback."""
    from chemteb_eval.models.base import check_device

    with pytest.raises(ValueError, match=rf"device: {device}: this machine has no .*; use cpu\."):
        check_device(device)


# -- what the second outside attack on issue 39 found, fixed ------------------------------------


def test_attack2_a_trigger_in_the_index_is_refused_at_open(tmp_path: Path) -> None:
    """A trigger set every new block's start to 0: a fresh process read another key's vector."""
    _stored(tmp_path, 2)
    path = _cache(tmp_path).path
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TRIGGER t AFTER INSERT ON blocks BEGIN "
            "UPDATE blocks SET start = 0 WHERE id = new.id; END"
        )
    with pytest.raises(ChemtebError, match=r"holds a trigger \(t\).*rm "):
        _cache(tmp_path)


def test_attack2_embedding_no_texts_gives_no_rows(tmp_path: Path) -> None:
    encoder = HashingEncoder(dim=16)
    for cache in (None, EmbeddingCache(tmp_path, encoder.meta.name, encoder.meta.revision, "t")):
        engine = EmbeddingEngine(encoder, cache, progress=False)
        assert engine.embed([], "").shape == (0, 16)
        engine.close()


def test_attack2_a_text_with_a_lone_surrogate_is_a_key_even_beside_old_rows(
    tmp_path: Path,
) -> None:
    text = "b\udcff"  # what errors="surrogateescape" reads from a Latin-1 byte
    key = text_key("", text)
    assert key == text_key("", text) and len(key) == 64
    keys, _ = _stored(tmp_path, 2)
    cache = _cache(tmp_path)
    cache.close()
    to_old_layout(cache.path)  # old rows: their queries bind keys as text
    old = _cache(tmp_path)
    assert old.missing([text, keys[0]]) == [text]
    assert old.costs([text]) == {} and old.rows([text], 8)[1].tolist() == [False]
    assert old.put([text], _vectors(1, seed=3)) and old.missing([text]) == []
    old.close()


@pytest.mark.parametrize("block_id", [1 << 40, (1 << 63) - 2, 0, -5])
def test_attack2_any_block_id_is_read_and_written_after(tmp_path: Path, block_id: int) -> None:
    """An id of 2**31 or more overflowed the rank (a raw OverflowError for ever after); an id
    of 0 or less was never read (the next put's block was lost)."""
    keys, vectors = _stored(tmp_path, 2, first=1)
    path = _cache(tmp_path).path
    with sqlite3.connect(path) as db:
        db.execute("UPDATE blocks SET id = ?", (block_id,))
    cache = _cache(tmp_path)
    assert cache.put(keys[1:], vectors[1:])  # its id follows the hand-edited one
    fresh = _cache(tmp_path)
    assert np.array_equal(fresh.get(keys), vectors) and len(fresh) == 2
    cache.close()
    fresh.close()


def test_attack2_the_first_write_wins_over_an_old_row_too(tmp_path: Path) -> None:
    keys, vectors = _stored(tmp_path, 1)
    path = _cache(tmp_path).path
    to_old_layout(path)
    cache = _cache(tmp_path)
    assert cache.put(keys, vectors * 2)  # not replacing: the old row stays the key's vector
    assert np.array_equal(_cache(tmp_path).get(keys), vectors)
    assert cache.put(keys, vectors * 3, replace=True)
    assert np.array_equal(_cache(tmp_path).get(keys), vectors * 3)
    cache.close()


def test_attack2_a_writer_holding_the_lock_is_said_not_taken_for_read_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After 60 s a new cache opened read-only (the run's vectors never stored) and a put
    raised a raw sqlite3 'database is locked'."""
    _stored(tmp_path, 1)
    cache = _cache(tmp_path)
    cache._db.execute("PRAGMA busy_timeout = 50")  # 60 s in real life
    holder = sqlite3.connect(cache.path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    with pytest.raises(ChemtebError, match="another process has held its write lock"):
        cache.put(["k"], _vectors(1))

    def locked(self: Any, ident: str, wait: float = 60.0) -> Any:
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(EmbeddingCache, "_open_writable_when_free", locked)
    with pytest.raises(ChemtebError, match="another process has held its write lock"):
        _cache(tmp_path)
    holder.execute("ROLLBACK")
    holder.close()
    cache.close()


def test_attack2_a_dangling_link_in_place_of_the_vector_file_is_one_line(tmp_path: Path) -> None:
    """put returned False with no word, and every run re-encoded everything."""
    cache = _cache(tmp_path)
    cache.path.with_suffix(".8d.f32").symlink_to(tmp_path / "gone" / "vectors.f32")
    with pytest.raises(ChemtebError, match=r"8d\.f32 cannot be created.*rm "):
        cache.put(["k"], _vectors(1))
    cache.close()
