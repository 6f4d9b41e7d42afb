"""The embedding cache's layout of issue 45 (a folder of immutable block files, each published
by a link to its number): what it stores reads back bit for bit, through the cache and through an
independent reader (``helpers/cache_files.py``), and every guarantee holds: a kill loses at most
the block in flight and leaves at most that block's bytes, reclaimed by the next writer; two
processes share one cache; read-only caches are read; a full disk is said; damaged or foreign
blocks and damaged vectors are encoded again; caches of the layouts before are converted."""

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
from chemteb_eval.engine.cache import sound_rows
from chemteb_eval.errors import ChemtebError

from .conftest import REPO_ROOT
from .helpers.cache_files import blocks, committed, legacy, stored_vectors, to_old_layout
from .helpers.hashing_encoder import HashingEncoder


def _cache(root: Path, **kwargs: Any) -> EmbeddingCache:
    return EmbeddingCache(root, "org/model", "a" * 40, "org/model", **kwargs)


def _read_only(root: Path, monkeypatch: pytest.MonkeyPatch) -> EmbeddingCache:
    """The cache at ``root`` opened as from a folder that cannot be written (root ignores
    chmod: the cache's own write probe is what a read-only folder refuses)."""
    monkeypatch.setattr(EmbeddingCache, "_writable", lambda self: False)
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


def _dead_bytes(path: Path) -> int:
    """Bytes in the cache's folder that no block file holds (part files of killed writers)."""
    return sum(f.stat().st_size for f in path.iterdir() if not f.name.endswith(".block"))


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
    assert np.array_equal(cache.get(keys[1:300:7]), vectors[1:300:7])  # scattered rows
    assert cache.missing([keys[0], "absent", keys[1]]) == ["absent"]
    assert cache.costs([keys[0], "absent"]) == {keys[0]: 0.5}
    assert len(cache) == 300 and list(cache.keys()) == keys
    cache.close()
    # a new process's view: the index is read from the files
    again = _cache(tmp_path)
    assert np.array_equal(again.get(keys), vectors) and len(again) == 300
    assert {k: v for k, v in stored_vectors(again.path).items()} == {
        k: v.tobytes() for k, v in zip(keys, vectors, strict=True)
    }
    again.close()
    files = [f.name for f in EmbeddingCache.files(again.path)]
    assert files == [f"{n:012d}.block" for n in range(1, 6)]
    assert _dead_bytes(again.path) == 0


def test_keys_that_are_not_text_keys_and_vectors_of_two_widths(tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    odd = ["k0", "K" * 64, "é\x00", "A" * 64, "a" * 64, "line\nbreak", "b\udcff"]
    cache.put(odd, _vectors(7, 4))
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
    assert stored_vectors(cache.path)["é\x00"] == _vectors(7, 4)[2].tobytes()
    assert list(_cache(tmp_path).keys()) == [*odd, "wide"]


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
    into a sorted index ``filler`` keys large: merged block by block)."""
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


@pytest.mark.parametrize("damage", ["nan", "inf", "zero", "finite", "one bit"])
def test_damaged_vectors_in_a_block_fail_its_checksum_and_are_encoded_again(
    tmp_path: Path, damage: str
) -> None:
    """Any change to a block's bytes fails its CRC-32: the whole block is encoded again. Finite
    floats written over a block's vectors were served as they were: 0.667 instead of 0.960."""
    encoder, texts, expected, path = _filled(tmp_path)
    file, head, _, at = blocks(path)[0]
    raw = bytearray(file.read_bytes())
    if damage == "nan":
        raw[at : at + 4] = np.float32(np.nan).tobytes()
    elif damage == "inf":
        raw[at + 8 : at + 12] = np.float32(-np.inf).tobytes()
    elif damage == "zero":
        raw[at : at + 64] = bytes(64)
    elif damage == "finite":  # plausible vectors, the file's size kept
        raw[at : at + 640] = np.full(160, 0.25, dtype=np.float32).tobytes()
    else:
        raw[at + 100] ^= 1
    file.write_bytes(bytes(raw))
    with pytest.warns(UserWarning, match=rf"{head['count']} stored vector\(s\) were damaged"):
        got = _embed_again(encoder, texts, path)
    assert np.array_equal(got, expected)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # repaired on disk: read without a warning
        assert np.array_equal(_embed_again(encoder, texts, path), expected)


@pytest.mark.parametrize(
    "damage",
    ["truncated", "garbage", "magic", "header", "count", "dim", "other cache", "fifo", "link"],
)
def test_a_damaged_or_foreign_block_is_said_and_its_vectors_encoded_again(
    tmp_path: Path, damage: str
) -> None:
    encoder, texts, expected, path = _filled(tmp_path)
    file, head, _, _ = blocks(path)[0]
    raw = file.read_bytes()
    size = int.from_bytes(raw[16:24], "little")
    edited = {"count": {"count": head["count"] + 1}, "dim": {"dim": -3}}.get(damage)
    if edited is not None or damage == "other cache":
        import json

        new = {**head, **(edited or {"cache": '["org/other", null, "x"]'})}
        body = json.dumps(new).encode().ljust(size)  # same length: only the header lies
        raw = raw[:24] + body[:size] + raw[24 + size :]
    file.unlink()
    if damage == "fifo":
        os.mkfifo(file)
    elif damage == "link":
        file.symlink_to(tmp_path / "gone.block")
    else:
        raw = {
            "truncated": raw[:-10],
            "garbage": b"PK\x03\x04" + bytes(200),
            "magic": b"chemteb-block-v9" + raw[16:],
            "header": raw[:24] + b"[" + raw[25:],
        }.get(damage, raw)
        file.write_bytes(raw)
    started = time.perf_counter()
    with pytest.warns(UserWarning, match="1 stored block"):
        got = _embed_again(encoder, texts, path)
    assert np.array_equal(got, expected) and time.perf_counter() - started < 5


def test_a_block_file_swapped_after_it_was_read_is_damage_not_served(tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    keys, vectors = _keys(4), _vectors(4)
    cache.put(keys, vectors)
    assert cache.missing(keys) == []  # read
    (file,) = cache.path.glob("*.block")
    other = EmbeddingCache(tmp_path / "other", "org/other", "b" * 40, "org/other")
    other.put(keys, vectors * 2)
    (foreign,) = other.path.glob("*.block")
    os.replace(foreign, file)  # another cache's block put in place
    with pytest.warns(UserWarning, match="4 stored vector"):
        assert cache.lookup(keys) == {}
    with pytest.warns(UserWarning, match="1 stored block"):
        assert _cache(tmp_path).missing(keys) == keys  # a fresh reader refuses it outright
    cache.close()
    other.close()


# -- faults: a kill, a full disk, a read-only cache, two writers ---------------------------------


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


@pytest.mark.slow
def test_ten_kills_keep_whole_blocks_and_leave_at_most_the_block_in_flight_reclaimed(
    tmp_path: Path,
) -> None:
    """Killed at a random moment, ten times: what the cache holds is exactly what was put,
    whole blocks only; a kill leaves at most its block in flight, which the next open deletes.
    (Issue 45: before, 10 kills left 8.65 MB on disk for 0.79 MB of committed rows, for good.)"""
    rng = np.random.default_rng(0)
    block = 200 * (64 + 8 + 8 + 16 * 4) + 4096  # keys, their lengths, costs, vectors, header
    path = _cache(tmp_path).path
    for attempt in range(10):
        proc = _writer(tmp_path, 400)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        time.sleep(float(rng.uniform(0.05, 0.6)))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert _dead_bytes(path) <= block, attempt  # at most the block in flight
        cache = _cache(tmp_path)  # the next open: reclaimed
        assert _dead_bytes(path) == 0, attempt
        stored = stored_vectors(cache.path)
        assert len(stored) % 200 == 0, attempt  # whole blocks only
        for number in range(400):
            want = _expected(number)
            if next(iter(want)) in stored:
                assert {k: stored[k] for k in want} == want
        assert len(cache) == len(stored) == committed(path)
        cache.close()


def test_a_part_file_of_a_writer_still_at_work_is_left_alone(tmp_path: Path) -> None:
    import fcntl

    cache = _cache(tmp_path)
    part = cache.path / "123.cafe.part"
    with part.open("xb") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        held.write(b"x" * 100)
        held.flush()
        _cache(tmp_path).close()  # another opener: the part's writer is alive
        assert part.exists()
    _cache(tmp_path).close()  # its writer gone: reclaimed
    assert not part.exists()
    cache.close()


def test_a_full_disk_is_said_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = _cache(tmp_path)
    keys, vectors = _keys(20), _vectors(20)
    cache.put(keys[:10], vectors[:10])
    real = os.link

    def full(src: Any, dst: Any, **kwargs: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "link", full)
    with pytest.raises(ChemtebError, match=r"the disk is full.*what was committed is kept"):
        cache.put(keys[10:], vectors[10:])
    monkeypatch.setattr(os, "link", real)
    assert _dead_bytes(cache.path) == 0 and cache.missing(keys) == keys[10:]
    assert cache.put(keys[10:], vectors[10:])
    assert np.array_equal(cache.get(keys), vectors)
    cache.close()


def test_a_cache_that_cannot_be_written_leaves_the_run_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys, vectors = _stored(tmp_path, 4, first=2)
    cache = _cache(tmp_path)
    real = Path.open

    def refuse(self: Path, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if self.suffix in (".part", ".new"):  # root ignores chmod: refuse here
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return real(self, mode, *args, **kwargs)

    monkeypatch.setattr(Path, "open", refuse)
    assert np.array_equal(cache.get(keys[:2]), vectors[:2])  # read as it is
    assert cache.put(keys[2:], vectors[2:]) is False and cache.read_only
    cache.close()


def test_a_read_only_cache_reads_what_it_has(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys, vectors = _stored(tmp_path, 4)
    reader = _read_only(tmp_path, monkeypatch)
    assert np.array_equal(reader.get(keys), vectors)
    assert reader.put(["new"], _vectors(1)) is False
    reader.close()
    assert committed(reader.path) == 4


# -- caches written before ----------------------------------------------------------------------


def test_an_old_cache_is_converted_once_and_grows_in_the_new_layout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys, vectors = _stored(tmp_path, 6, first=4)
    path = _cache(tmp_path).path
    old_file = to_old_layout(path)
    with sqlite3.connect(old_file) as db:
        db.executemany("INSERT INTO cost VALUES (?, ?)", [(k, 0.25) for k in keys[1:4]])
    # a read-only copy: read, held in memory, nothing deleted
    reader = _read_only(tmp_path, monkeypatch)
    assert np.array_equal(reader.get(keys[:4]), vectors[:4]) and len(reader) == 4
    assert reader.costs(keys) == {k: 0.25 for k in keys[1:4]} and old_file.exists()
    reader.close()
    monkeypatch.undo()
    old = _cache(tmp_path)
    assert not old_file.exists() and committed(path) == 4  # converted, the old file gone
    assert np.array_equal(old.get(keys[:4]), vectors[:4])
    assert old.missing(keys) == keys[4:] and len(old) == 4
    assert old.costs(keys) == {k: 0.25 for k in keys[1:4]}
    old.put(keys[4:], vectors[4:])
    old.put(keys[:1], vectors[:1] * 2, replace=True)  # a damaged old row's new vector
    assert np.array_equal(old.get(keys), np.concatenate([vectors[:1] * 2, vectors[1:]]))
    assert len(old) == 6 and set(old.keys()) == set(keys)
    old.close()


def _issue39_layout(old: Path, keys: list[str], vectors: np.ndarray, replace: bool) -> None:
    """A cache as issue 39 wrote it: blocks in SQLite, vectors in an array file."""
    dim = vectors.shape[1]
    header = b"chemteb-vectors1" + dim.to_bytes(4, "little")
    old.with_suffix(f".{dim}d.f32").write_bytes(header.ljust(64, b"\0") + vectors.tobytes() * 2)
    with sqlite3.connect(old) as db:
        db.execute("CREATE TABLE emb (key TEXT UNIQUE, dim INTEGER, vec BLOB)")
        db.execute(
            "CREATE TABLE blocks (id INTEGER PRIMARY KEY, dim INTEGER, start INTEGER, count "
            "INTEGER, replace INTEGER, digests BLOB, seconds BLOB, keys TEXT)"
        )
        digests = b"".join(bytes.fromhex(k) for k in keys)
        for start, flag in ((0, 0), (len(keys), int(replace))):  # the same keys twice
            db.execute(
                "INSERT INTO blocks VALUES (NULL, ?, ?, ?, ?, ?, ?, NULL)",
                (dim, start, len(keys), flag, digests, np.full(len(keys), 0.5).tobytes()),
            )


@pytest.mark.parametrize("replace", [False, True])
def test_an_issue39_cache_is_converted_with_its_winners(tmp_path: Path, replace: bool) -> None:
    keys = _keys(5)
    path = _cache(tmp_path).path
    path.rmdir()
    vectors = _vectors(5)
    _issue39_layout(legacy(path), keys, vectors, replace)
    cache = _cache(tmp_path)
    assert np.array_equal(cache.get(keys), vectors) and cache.costs(keys[:1]) == {keys[0]: 0.5}
    assert not list(tmp_path.glob("*.f32")) and not legacy(path).exists()
    cache.close()


def test_an_old_index_with_a_trigger_or_another_layout_is_one_line(tmp_path: Path) -> None:
    """A trigger could rewrite what a row says after it is written."""
    _stored(tmp_path, 2)
    path = _cache(tmp_path).path
    old = to_old_layout(path)
    with sqlite3.connect(old) as db:
        db.execute("CREATE TRIGGER t AFTER INSERT ON emb BEGIN SELECT 1; END")
    with pytest.raises(ChemtebError, match=r"holds a trigger \(t\).*rm "):
        _cache(tmp_path)
    old.write_bytes(b"this is not SQLite" * 100)
    with pytest.raises(ChemtebError, match=r"is damaged or not a cache .*--no-cache"):
        _cache(tmp_path)


def test_a_file_where_the_cache_folder_should_be_is_one_line(tmp_path: Path) -> None:
    path = _cache(tmp_path).path
    path.rmdir()
    path.write_bytes(b"x")
    with pytest.raises(ChemtebError, match=r"is damaged or not a cache .*a file where"):
        _cache(tmp_path)


def test_an_api_models_cache_adopted_under_its_label_is_served(tmp_path: Path) -> None:
    old, old_ident = EmbeddingCache.path_for(tmp_path, "m", None, "http://x", None)
    new, _ = EmbeddingCache.path_for(tmp_path, "m", None, "http://x", "label-1")
    cache = EmbeddingCache(tmp_path, "m", None, "http://x", fingerprint="http://x")
    cache.put(["k"], _vectors(1))
    cache.close()
    assert EmbeddingCache.adopt(old, new, old_ident) and not old.exists()
    again = EmbeddingCache(tmp_path, "m", None, "http://x", fingerprint="label-1")
    assert again.path == new and np.array_equal(again.get(["k"]), _vectors(1))
    assert not EmbeddingCache.adopt(old, new, old_ident)  # nothing left to move
    again.close()


# -- what outside attacks found, fixed ------------------------------------------------------------


def test_attack_ctrl_c_inside_a_put_leaves_nothing_named_and_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = _cache(tmp_path)
    keys, vectors = _keys(8), _vectors(8)

    def interrupt(src: Any, dst: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "link", interrupt)
    with pytest.raises(KeyboardInterrupt):
        cache.put(keys[:4], vectors[:4])
    monkeypatch.undo()
    assert _dead_bytes(cache.path) == 0 and cache.missing(keys) == keys
    assert cache.put(keys[4:], vectors[4:])  # the next put works
    assert np.array_equal(_cache(tmp_path).get(keys[4:]), vectors[4:])
    cache.close()


def test_attack_a_key_that_is_no_text_key_never_aliases_one(tmp_path: Path) -> None:
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


@pytest.mark.parametrize("number", [10**15, 0])
def test_attack_any_block_number_is_read_and_written_after(tmp_path: Path, number: int) -> None:
    keys, vectors = _stored(tmp_path, 2, first=1)
    path = _cache(tmp_path).path
    (file,) = path.glob("*.block")
    file.rename(path / f"{number:012d}.block")
    cache = _cache(tmp_path)
    assert cache.put(keys[1:], vectors[1:])  # its number follows the renamed one
    fresh = _cache(tmp_path)
    assert np.array_equal(fresh.get(keys), vectors) and len(fresh) == 2
    cache.close()
    fresh.close()


@pytest.mark.parametrize("device", ["mps", "xpu", "xpu:1"])
def test_attack_an_accelerator_this_machine_lacks_is_one_line(device: str) -> None:
    """--device mps/xpu was a 19-line torch traceback."""
    from chemteb_eval.models.base import check_device

    with pytest.raises(ValueError, match=rf"device: {device}: this machine has no .*; use cpu\."):
        check_device(device)


def test_attack2_embedding_no_texts_gives_no_rows(tmp_path: Path) -> None:
    encoder = HashingEncoder(dim=16)
    for cache in (None, EmbeddingCache(tmp_path, encoder.meta.name, encoder.meta.revision, "t")):
        engine = EmbeddingEngine(encoder, cache, progress=False)
        assert engine.embed([], "").shape == (0, 16)
        engine.close()


def test_attack2_the_first_write_wins_over_an_old_row_too(tmp_path: Path) -> None:
    keys, vectors = _stored(tmp_path, 1)
    path = _cache(tmp_path).path
    to_old_layout(path)  # an old row: converted, and still the first write
    cache = _cache(tmp_path)
    assert cache.put(keys, vectors * 2)  # not replacing: the old row stays the key's vector
    assert np.array_equal(_cache(tmp_path).get(keys), vectors)
    assert cache.put(keys, vectors * 3, replace=True)
    assert np.array_equal(_cache(tmp_path).get(keys), vectors * 3)
    cache.close()


# -- what the outside attack on issue 45's cache found, fixed ----------------------------------


def test_attack45_an_opener_never_reclaims_a_live_writers_part_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The part file was closed (its lock dropped) before its link: another process opening
    the cache deleted it, and the put was lost ('No such file ... part -> ...block')."""
    cache = _cache(tmp_path)
    real = os.link
    opened: list[EmbeddingCache] = []

    def open_first(src: Any, dst: Any, **kwargs: Any) -> None:
        opened.append(_cache(tmp_path))  # another process opens the cache mid-put
        real(src, dst, **kwargs)

    monkeypatch.setattr(os, "link", open_first)
    keys, vectors = _keys(3), _vectors(3)
    assert cache.put(keys, vectors) and opened
    monkeypatch.undo()
    assert np.array_equal(_cache(tmp_path).get(keys), vectors)
    assert _dead_bytes(cache.path) == 0


def test_attack45_a_disk_turned_read_only_mid_run_leaves_the_run_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = _cache(tmp_path)
    real_open, real_unlink = Path.open, Path.unlink

    def refuse(self: Path, *args: Any, **kwargs: Any) -> Any:
        if self.suffix in (".new", ".part"):
            raise OSError(errno.EROFS, "Read-only file system", str(self))
        return real_open(self, *args, **kwargs)

    def refuse_unlink(self: Path, *args: Any, **kwargs: Any) -> None:
        if self.suffix in (".new", ".part"):
            raise OSError(errno.EROFS, "Read-only file system", str(self))
        real_unlink(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", refuse)
    monkeypatch.setattr(Path, "unlink", refuse_unlink)
    assert cache.put(_keys(1), _vectors(1)) is False and cache.read_only


def _block(path: Path, header: bytes, size: int | None = None) -> None:
    """A hand-made block file: the magic, a header length (``size``, default the header's)."""
    with path.open("wb") as f:
        f.write(b"chemteb-block-v3" + (size or len(header)).to_bytes(8, "little") + header)


@pytest.mark.parametrize("kind", ["huge header", "huge keys", "nested"])
def test_attack45_a_hostile_block_header_is_damage_not_a_memory_bomb(
    tmp_path: Path, kind: str
) -> None:
    keys, vectors = _stored(tmp_path, 2)
    path = _cache(tmp_path).path
    bomb = path / "000000000007.block"
    if kind == "nested":
        _block(bomb, b"[" * 200_000)
    elif kind == "huge header":
        _block(bomb, b"{", size=10**10)
        os.truncate(bomb, 10**10 + 100)  # sparse: its size "holds" the header
    else:
        ident = _cache(tmp_path).ident
        import json

        head = json.dumps(
            {"cache": ident, "dim": 8, "count": 1, "replace": False, "key_bytes": 10**10}
        ).encode()
        _block(bomb, head)
        at = -(-(24 + len(head) + 10**10) // 8) * 8
        os.truncate(bomb, at + 16 + 32 + 8)
    started = time.perf_counter()
    with pytest.warns(UserWarning, match="1 stored block"):
        fresh = _cache(tmp_path)
        assert np.array_equal(fresh.get(keys), vectors) and len(fresh) == 2
    assert time.perf_counter() - started < 5
    assert fresh.put(["more"], _vectors(1))  # and its number does not steer the next one
    assert (path / "000000000002.block").exists()


@pytest.mark.parametrize("kind", ["nested", "fifo", "not a list"])
def test_attack45_a_hostile_adopted_file_is_ignored(tmp_path: Path, kind: str) -> None:
    keys, vectors = _stored(tmp_path, 2)
    path = _cache(tmp_path).path
    adopted = path / "adopted.json"
    if kind == "fifo":
        os.mkfifo(adopted)
    else:
        adopted.write_text("[" * 100_000 if kind == "nested" else "7")
    started = time.perf_counter()
    assert np.array_equal(_cache(tmp_path).get(keys), vectors)
    new = tmp_path / "moved.vectors"
    assert EmbeddingCache.adopt(path, new, "x") and time.perf_counter() - started < 5


def test_attack45_a_long_junk_block_name_never_stops_the_puts(tmp_path: Path) -> None:
    keys, vectors = _stored(tmp_path, 2, first=1)
    path = _cache(tmp_path).path
    (path / f"{'9' * 249}.block").write_bytes(b"junk")
    (path / "0.block").write_bytes(b"junk")
    (path / "00.block").write_bytes(b"junk")
    cache = _cache(tmp_path)
    with pytest.warns(UserWarning, match="2 stored block"):  # both of number 0 counted
        assert cache.put(keys[1:], vectors[1:])
    assert np.array_equal(_cache(tmp_path).get(keys), vectors)


def test_attack45_keys_round_trip_exactly_in_a_fresh_process(tmp_path: Path) -> None:
    """A key with a line break went through JSON, which joined its two lone surrogates."""
    keys = ["a\n\ud83d\ude00", "a\n😀", "", "\ud800", "x" * 10_000, "\n", "é"]
    cache = _cache(tmp_path)
    cache.put(keys, _vectors(len(keys)))
    fresh = _cache(tmp_path)
    assert list(fresh.keys()) == keys and fresh.missing(keys) == []
    assert np.array_equal(fresh.get(keys), _vectors(len(keys)))
    assert stored_vectors(fresh.path).keys() == set(keys)


def test_attack45_text_key_tells_a_nul_in_the_prompt_from_one_in_the_text() -> None:
    import hashlib

    assert text_key("a\x00b", "c") != text_key("a", "b\x00c")
    # every key without a NUL in its prompt is what it always was (caches stay valid)
    assert text_key("query: ", "benzene") == hashlib.sha256(b"query: \x00benzene").hexdigest()
    assert text_key("", "b\x00c") == hashlib.sha256(b"\x00b\x00c").hexdigest()


@pytest.mark.parametrize("kind", ["another tool's", "empty"])
def test_attack45_an_old_file_that_is_no_cache_is_one_line_and_kept(
    tmp_path: Path, kind: str
) -> None:
    old = legacy(_cache(tmp_path).path)
    if kind == "empty":
        old.write_bytes(b"")
    else:
        with sqlite3.connect(old) as db:
            db.execute("CREATE TABLE users (name TEXT)")
    with pytest.raises(ChemtebError, match=r"no table of a cache.*--no-cache"):
        _cache(tmp_path)
    assert old.exists()


@pytest.mark.parametrize("kind", ["fifo", "nested keys"])
def test_attack45_an_old_cache_with_hostile_parts_never_hangs(tmp_path: Path, kind: str) -> None:
    keys = _keys(2)
    path = _cache(tmp_path).path
    path.rmdir()
    _issue39_layout(legacy(path), keys, _vectors(2), False)
    if kind == "fifo":
        array = legacy(path).with_suffix(".8d.f32")
        array.unlink()
        os.mkfifo(array)
    else:
        with sqlite3.connect(legacy(path)) as db:
            db.execute("UPDATE blocks SET keys = ?", ("[" * 100_000,))
    started = time.perf_counter()
    cache = _cache(tmp_path)
    assert time.perf_counter() - started < 5
    assert cache.missing(keys) == (keys if kind == "fifo" else [])


def test_an_old_cache_converted_by_another_process_meanwhile_is_no_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys, vectors = _stored(tmp_path, 3)
    path = _cache(tmp_path).path
    old = to_old_layout(path)
    from chemteb_eval.engine import cache as cache_module
    from chemteb_eval.engine._legacy import read_legacy as real

    def converted_meanwhile(file: Path) -> Any:
        monkeypatch.setattr(cache_module, "read_legacy", real)
        _cache(tmp_path).close()  # another process converts it and deletes the old file
        return real(file)

    monkeypatch.setattr(cache_module, "read_legacy", converted_meanwhile)
    assert np.array_equal(_cache(tmp_path).get(keys), vectors) and not old.exists()


# -- what the outside attack on `chemteb run` over the new cache found, fixed --------------------


def test_attack45b_a_cache_folder_removed_mid_run_leaves_the_run_in_memory(tmp_path: Path) -> None:
    """The run stopped: 'its vectors cannot be written ([Errno 2] ...)', every score lost."""
    import shutil

    encoder = HashingEncoder(dim=16)
    texts = [f"molecule {i}" for i in range(8)]
    cache = EmbeddingCache(tmp_path, encoder.meta.name, encoder.meta.revision, "t")
    engine = EmbeddingEngine(encoder, cache, batch_size=4, progress=False)
    engine.prefetch(("", t) for t in texts[:4])
    engine.flush()
    shutil.rmtree(cache.path)
    with pytest.warns(UserWarning, match="is gone"):
        engine.prefetch(("", t) for t in texts[4:])
        engine.flush()
    with pytest.warns(UserWarning, match="4 stored vector"):  # its blocks went with it
        got = engine.embed(texts, "")
    assert np.array_equal(got, encoder.encode(texts, prompt="", batch_size=8))
    engine.close()
    cache.close()


def test_attack45b_a_damaged_block_is_set_aside_and_said_once(tmp_path: Path) -> None:
    keys, vectors = _stored(tmp_path, 2)
    path = _cache(tmp_path).path
    (path / "000000000009.block").write_bytes(b"junk")
    with pytest.warns(UserWarning, match="1 stored block"):
        assert len(_cache(tmp_path)) == 2
    assert (path / "000000000009.damaged").exists() and not (path / "000000000009.block").exists()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said once: the next run reads without a word
        assert np.array_equal(_cache(tmp_path).get(keys), vectors)


def test_attack45b_a_read_only_cache_root_without_the_models_folder_runs_without_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(self: Path, *args: Any, **kwargs: Any) -> None:
        raise OSError(errno.EROFS, "Read-only file system", str(self))

    monkeypatch.setattr(Path, "mkdir", refuse)
    with pytest.warns(UserWarning, match="read-only"):
        cache = _cache(tmp_path)
    assert cache.read_only and cache.missing(["k"]) == ["k"]
    assert cache.put(["k"], _vectors(1)) is False


def test_attack45b_the_cli_says_our_warnings_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from chemteb_eval import cli
    from chemteb_eval.engine import cache as cache_module

    cli._warning_line(
        UserWarning("embedding cache /x: 1 stored\nblock"), UserWarning, cache_module.__file__, 1
    )
    assert capsys.readouterr().err == "chemteb: warning: embedding cache /x: 1 stored?block\n"
    cli._warning_line(UserWarning("theirs"), UserWarning, "/elsewhere/lib.py", 7)
    assert "lib.py:7: UserWarning: theirs" in capsys.readouterr().err  # as Python shows it


def test_attack45b_a_block_the_disk_failed_to_read_is_not_set_aside_and_read_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Set aside as .damaged was for blocks found bad, not for a read the disk failed (EIO)."""
    from chemteb_eval.engine import cache as cache_module

    keys, vectors = _stored(tmp_path, 2)
    from chemteb_eval.engine._blocks import read_header as real

    monkeypatch.setattr(
        cache_module, "read_header", lambda *a: (_ for _ in ()).throw(OSError(errno.EIO, "I/O"))
    )
    cache = _cache(tmp_path)
    with pytest.warns(UserWarning, match="1 stored block"):
        assert cache.missing(keys) == keys
    assert not list(cache.path.glob("*.damaged"))
    monkeypatch.setattr(cache_module, "read_header", real)
    assert np.array_equal(cache.get(keys), vectors)  # read at the next look
