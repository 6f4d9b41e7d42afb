"""Trust, round 5 (issue 59): the findings of an outside attack on the block cache, API identity
and the state that outlives a run, one test each, named after the attack's class; each failed
on the code before."""

from __future__ import annotations

import os
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chemteb_eval.engine import EmbeddingCache, text_key


def _cache(root: Path, **kwargs: Any) -> EmbeddingCache:
    return EmbeddingCache(root, "org/model", "a" * 40, "org/model", **kwargs)


def _keys(n: int, salt: str = "") -> list[str]:
    return [text_key("", f"{salt}text {i}") for i in range(n)]


def _vectors(n: int, dim: int = 8, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)


# -- 15: processes that look alike ---------------------------------------------------------------


def test_processes_that_look_alike_a_writer_with_anothers_pid_never_takes_its_part_file(
    tmp_path: Path,
) -> None:
    """A block's part file was named by the pid alone (``with_suffix`` replaced the random
    token): another writer with the same pid (pid 1 in another container on a shared volume)
    mid-block made every put end in "File exists"."""
    import fcntl

    cache = _cache(tmp_path)
    pid = os.getpid()
    held = []
    for name in (f"{pid}.new", f"{pid}.part"):  # the other writer's files, locked: at work
        file = (cache.path / name).open("wb")
        file.write(b"half a block")
        file.flush()
        fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        held.append(file)
    keys, vectors = _keys(50), _vectors(50)
    assert cache.put(keys, vectors) is True
    assert np.array_equal(_cache(tmp_path).get(keys), vectors)
    assert (cache.path / f"{pid}.part").read_bytes() == b"half a block"  # never touched
    for file in held:
        file.close()


def test_processes_that_look_alike_two_threads_putting_at_once_lose_nothing(
    tmp_path: Path,
) -> None:
    """Two threads of one process calling ``put`` on two caches of one folder (two ``run()``s
    in one notebook) shared the pid-named part file: one's put failed or the cache turned
    read-only mid-run."""
    errors: list[BaseException] = []
    barrier = threading.Barrier(2)

    def writer(salt: str) -> None:
        try:
            cache = _cache(tmp_path)
            barrier.wait()
            for block in range(20):
                keys = _keys(64, f"{salt}{block}")
                assert cache.put(keys, _vectors(64, seed=block)) is True
            assert not cache.read_only
        except BaseException as exc:  # noqa: BLE001 - the test's own report
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(s,)) for s in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    assert len(_cache(tmp_path)) == 2 * 20 * 64


# -- 16: identity over time ----------------------------------------------------------------------


def test_identity_over_time_a_damaged_last_blocks_number_is_never_reused(tmp_path: Path) -> None:
    """The highest-numbered block cut short (an interrupted copy) was set aside and its number
    reused by this process's next put, whose block it then never indexed: encoded again."""
    cache = _cache(tmp_path)
    first, second = _keys(10), _keys(10, "b")
    cache.put(first, _vectors(10))
    cache.put(second, _vectors(10, seed=1))
    cache.close()
    last = sorted(cache.path.glob("*.block"))[-1]
    last.write_bytes(last.read_bytes()[:-40])  # cut: damaged
    reopened = _cache(tmp_path)
    with pytest.warns(UserWarning, match="1 stored block"):
        assert reopened.missing(second) == second
    third = _keys(10, "c")
    assert reopened.put(second + third, _vectors(20, seed=2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert reopened.missing(second + third) == []  # indexed by the process that wrote it
        assert len(reopened) == 30
    numbers = sorted(int(p.stem) for p in reopened.path.glob("*.block"))
    assert int(last.stem) not in numbers  # its number was never taken again here


def test_identity_over_time_a_block_another_writer_puts_under_a_set_aside_number_is_read(
    tmp_path: Path,
) -> None:
    """A writer that had not seen the damage may publish under the number set aside: the
    process that set it aside must read that new block, not skip it by its name."""
    keys = _keys(5)
    cache = _cache(tmp_path)
    cache.put(keys, _vectors(5))
    damaged = cache.path / "000000000002.block"
    damaged.write_bytes(b"junk")
    with pytest.warns(UserWarning, match="1 stored block"):
        assert len(cache) == 5
    other = _cache(tmp_path)  # another writer that publishes under number 2 once it is free
    other._next = 2
    more = _keys(5, "x")
    other.put(more, _vectors(5, seed=3))
    assert (cache.path / "000000000002.block").exists()
    assert cache.missing(more) == []


# -- 13: scale -----------------------------------------------------------------------------------


def test_scale_lookup_without_a_width_is_linear_in_the_keys(tmp_path: Path) -> None:
    """``lookup(keys)`` without a width grouped keys by width once per key: 8,000 keys 5 s
    (100k about 15 min) where the same lookup with the width took 0.01 s."""
    cache = _cache(tmp_path)
    keys = _keys(20_000)
    cache.put(keys, _vectors(20_000))
    started = time.perf_counter()
    got = cache.lookup(keys)
    took = time.perf_counter() - started
    assert len(got) == 20_000 and np.array_equal(got[keys[7]], cache.get(keys[7:8])[0])
    started = time.perf_counter()
    cache.lookup(keys, dim=8)
    with_width = time.perf_counter() - started
    assert took < 20 * with_width + 1.0  # quadratic: ~30 s here
