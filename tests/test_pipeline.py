"""The pipeline around the model (issue 30): the cache's writer thread and fast layout, and the
pipelined encode path (host tokenisation ahead, one copy back) giving the very same vectors.
~2 s; the MiniLM equality check ~15 s (slow)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chemteb_eval.engine import EmbeddingCache, EmbeddingEngine

from .helpers.hashing_encoder import HashingEncoder

TEXTS = [f"compound {i} " + "benzene ring " * (i % 17) for i in range(700)]


def _engine(tmp_path: Path, encoder: Any, **kwargs: Any) -> tuple[EmbeddingEngine, EmbeddingCache]:
    cache = EmbeddingCache(tmp_path / "cache", encoder.meta.name, encoder.meta.revision, "t")
    return EmbeddingEngine(encoder, cache, progress=False, **kwargs), cache


def test_the_writer_thread_commits_every_block_before_anything_is_read(tmp_path: Path) -> None:
    encoder = HashingEncoder()
    engine, cache = _engine(tmp_path, encoder)
    engine.prefetch(("", t) for t in TEXTS)  # 700 texts: two blocks of 512 and 188
    assert engine._inflight is None  # prefetch ends with everything committed
    assert len(cache) == len(TEXTS)
    got = engine.embed(TEXTS, "")
    assert np.array_equal(got, encoder.encode(TEXTS, prompt="", batch_size=32))
    engine.close()
    cache.close()


def test_a_new_cache_has_the_block_layout_and_an_old_one_still_works(tmp_path: Path) -> None:
    from .helpers.cache_files import blocks, to_old_layout

    encoder = HashingEncoder()
    engine, cache = _engine(tmp_path, encoder)
    engine.prefetch(("", t) for t in TEXTS[:10])
    engine.close()
    cache.close()
    assert sum(head["count"] for _, head, _, _ in blocks(cache.path)) == 10
    # a file in the layout caches had before: read, converted, and grown
    with sqlite3.connect(to_old_layout(cache.path)) as db:
        assert db.execute("SELECT COUNT(*) FROM emb").fetchone()[0] == 10
    engine, cache = _engine(tmp_path, encoder)
    engine.prefetch(("", t) for t in TEXTS[:12])
    assert np.array_equal(
        engine.embed(TEXTS[:12], ""), encoder.encode(TEXTS[:12], prompt="", batch_size=32)
    )
    assert engine.stats.cache_hits == 10
    engine.close()
    cache.close()


def test_a_writer_error_surfaces_at_the_next_block_not_never(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    encoder = HashingEncoder()
    engine, cache = _engine(tmp_path, encoder)

    def broken(*args: Any, **kwargs: Any) -> bool:
        raise OSError("disk full")

    monkeypatch.setattr(cache, "put", broken)
    with pytest.raises(OSError, match="disk full"):
        engine.prefetch(("", t) for t in TEXTS)
    engine.close()
    cache.close()


def test_the_pipelined_path_is_the_same_calls(tmp_path: Path) -> None:
    """The engine's pipelined path on an encoder that records its calls: the same batches,
    the same prompts, the rows in order (the hashing encoder stands in for a GPU model)."""

    class Pipelined(HashingEncoder):
        pipelined = True

        def prepare(self, texts: list[str], *, prompt: str) -> Any:
            return list(texts), prompt

        def run(self, prepared: Any) -> Any:
            texts, prompt = prepared
            return self.encode(texts, prompt=prompt, batch_size=len(texts))

        def to_numpy(self, outputs: list[Any]) -> Any:
            return np.concatenate(outputs).astype(np.float32)

    plain, plain_cache = _engine(tmp_path / "a", HashingEncoder())
    piped, piped_cache = _engine(tmp_path / "b", Pipelined())
    for engine in (plain, piped):
        engine.prefetch((p, t) for t in TEXTS for p in ("", "query: "))
    for prompt in ("", "query: "):
        assert np.array_equal(plain.embed(TEXTS, prompt), piped.embed(TEXTS, prompt))
    assert piped.stats.encoded == plain.stats.encoded == 2 * len(TEXTS)
    for engine, cache in ((plain, plain_cache), (piped, piped_cache)):
        engine.close()
        cache.close()


@pytest.mark.slow
def test_minilm_gives_the_same_vectors_pipelined(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MiniLM through ``prepare``/``run``/``to_numpy`` (forced on, on this CPU) equals
    ``model.encode`` bit for bit, batch for batch."""
    from chemteb_eval.models import DEFAULT_MODEL, SentenceTransformerEncoder, load_encoder

    encoder = load_encoder(DEFAULT_MODEL, device="cpu", log=lambda m: None)
    assert isinstance(encoder, SentenceTransformerEncoder) and not encoder.pipelined
    texts = TEXTS[:300]
    plain = EmbeddingEngine(encoder, None, batch_size=32, progress=False)
    plain.prefetch(("query: ", t) for t in texts)
    expected = plain.embed(texts, "query: ")
    monkeypatch.setattr(SentenceTransformerEncoder, "pipelined", property(lambda self: True))
    piped = EmbeddingEngine(encoder, None, batch_size=32, progress=False)
    piped.prefetch(("query: ", t) for t in texts)
    assert np.array_equal(piped.embed(texts, "query: "), expected)


# -- what the outside attack on issue 30 found, fixed ----------------------------------------


def test_a_full_disk_is_said_as_such_and_the_cache_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chemteb_eval.errors import ChemtebError

    encoder = HashingEncoder(dim=384)
    cache = EmbeddingCache(tmp_path / "c", encoder.meta.name, encoder.meta.revision, "t")
    keys = [f"k{i}" for i in range(600)]
    vectors = np.ones((600, 384), dtype=np.float32)
    assert cache.put(keys[:10], vectors[:10])
    import errno
    import os

    def full(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "link", full)
    with pytest.raises(ChemtebError, match="the disk is full") as caught:
        cache.put(keys[10:], vectors[10:])
    assert "rm " not in str(caught.value)
    assert len(cache) == 10  # what was committed is kept
    with pytest.raises(ValueError, match="one row a key"):
        cache.put(["a", "b"], np.array([1.0, 2.0]))
    cache.close()
    with pytest.raises(ChemtebError, match="is closed"):
        cache.lookup(["k1"])


def test_a_read_only_cache_reads_the_rows_its_write_ahead_log_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    encoder = HashingEncoder(dim=16)
    cache = EmbeddingCache(tmp_path / "c", encoder.meta.name, encoder.meta.revision, "t")
    keys = [f"k{i}" for i in range(50)]
    vectors = encoder.encode(keys, prompt="", batch_size=50)
    cache.put(keys, vectors)
    # a copy of the cache's files, as moving a cache moves them (its blocks)
    copy = tmp_path / "copy"
    (copy / cache.path.name).mkdir(parents=True)
    for file in EmbeddingCache.files(cache.path):
        shutil.copy(file, copy / cache.path.name / file.name)
    cache.close()

    monkeypatch.setattr(EmbeddingCache, "_writable", lambda self: False)
    with pytest.warns(UserWarning, match="read-only"):
        reader = EmbeddingCache(copy, encoder.meta.name, encoder.meta.revision, "t")
    assert reader.read_only and set(reader.lookup(keys)) == set(keys)
    reader.close()
