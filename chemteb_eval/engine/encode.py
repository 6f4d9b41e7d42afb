"""Encode every unique (prompt, text) of a run once, length-sorted, through the cache."""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from chemteb_eval.models.base import DEFAULT_BATCH_SIZE, Encoder, check_batch_size

from ._batches import (
    MAX_ROWS_PER_CALL,
    MIN_CALL_TOKENS,
    TOKENS_PER_CALL,
    call_rows,
    equal_length_batches,
    rows_per_call,
    token_budget_batches,
)
from .cache import EmbeddingCache, text_key
from .distributed import add_up, check_shared, distributed_state, finish, share

__all__ = [
    "MAX_ROWS_PER_CALL",
    "MIN_CALL_TOKENS",
    "TOKENS_PER_CALL",
    "EmbeddingEngine",
    "EncodeStats",
    "call_rows",
    "equal_length_batches",
    "rows_per_call",
    "token_budget_batches",
]

# A group of texts over SPILL_ROWS (a large retrieval corpus) is gathered into a disk-backed
# array SPILL_BLOCK vectors at a time (``embed_to_file``): 65,536 x 384 float32 is 96 MiB, where
# 5M documents would be 7.3 GiB in memory at once.
SPILL_ROWS = 200_000
SPILL_BLOCK = 65_536


@dataclass
class EncodeStats:
    """What deduplication and the cache saved, and how fast encoding ran."""

    requested: int = 0  # (prompt, text) occurrences over all tasks
    unique: int = 0  # distinct (prompt, text)
    cache_hits: int = 0  # unique ones already on disk
    encoded: int = 0  # unique ones the model encoded in this run
    seconds: float = 0.0  # spent in the model
    tokens: int | None = None  # tokens of the encoded texts, where the backend can count them

    def to_dict(self) -> dict[str, float]:
        """The counts and throughput; ``tokens`` and ``tokens_per_second`` only where the
        backend counts tokens."""
        out: dict[str, float] = {k: v for k, v in asdict(self).items() if v is not None}
        out["texts_per_second"] = self.encoded / self.seconds if self.seconds else 0.0
        if self.tokens is not None:
            out["tokens_per_second"] = self.tokens / self.seconds if self.seconds else 0.0
        return out


# Cached texts an API model encodes again before each task (one request), to check that the
# cache holds its vectors
VERIFIED = 16


class EmbeddingEngine:
    """Deduplicating, caching front of an encoder.

    Args:
        encoder: the model backend.
        cache: a persistent cache, or ``None`` to keep embeddings in memory for this run only.
        batch_size: texts per model call.
        progress: show a progress bar with throughput.
        verify: asked once, with the vectors the model returns now for a few texts the cache
            holds and the cached ones (and the cache's folder), raising where the cache is not
            this model's (an API model's: ``models.identity.ProbeGuard.compare``).
        agree: under torchrun, what every rank must share (a digest of the run's tasks and
            settings): a rank that differs is refused at the start.
        ranks_checked: the caller checked the ranks' cache folder already
            (``distributed.check_shared``: the runner does, before loading any data).
    """

    def __init__(
        self,
        encoder: Encoder,
        cache: EmbeddingCache | None,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        progress: bool = True,
        verify: Callable[[NDArray[np.float32], NDArray[np.float32], str], None] | None = None,
        agree: str = "",
        ranks_checked: bool = False,
    ) -> None:
        batch_size = check_batch_size(batch_size)
        self.encoder = encoder
        self.verify = verify
        self.cache = cache
        self.batch_size = batch_size
        self.progress = progress
        self.stats = EncodeStats()
        self.redo_seconds = 0.0  # spent in embed() re-encoding damaged cache rows
        self.ranks = 1  # the processes that encoded (torchrun's world size, once finished)
        self._memory: dict[str, NDArray[np.float32]] = {}
        self._seen: set[str] = set()  # keys prefetch has counted (stats count each once)
        # the keys prefetch counted in cache_hits and embed() has not yet read: only these may
        # be taken back from that count when their rows turn out damaged (a key prefetch never
        # saw, or one it encoded, was never counted there, so the count cannot go below zero)
        self._hits: set[str] = set()
        # the block the writer thread is committing (``_store``), readable until it is done
        self._writer: Any = None
        self._inflight: Any = None
        self._done: tuple[dict[str, Any], dict[str, float]] = ({}, {})
        self._pending: dict[str, NDArray[np.float32]] = {}
        # Seconds each text's encoding cost: its batch's time shared evenly among the batch's
        # texts (batches are length-sorted, so a batch's texts are of similar length).
        self._cost: dict[str, float] = {}
        # Texts per stored block: bounds memory, and is what a killed run loses at most.
        self.block = max(batch_size * 16, 512)
        # Under torchrun: each rank encodes its share (``distributed.share``) into the one
        # cache folder, checked to be one folder for all of them first (a collective call)
        self.state = distributed_state()
        self._main = self.state is None or bool(self.state.is_main_process)
        self._others: list[str] = []  # the keys other ranks encode (their costs read at the end)
        # ... kept once the ranks met: one of them the main process must encode after all (a
        # rank whose load failed) is a text encoded, not work done again
        self._by_others: set[str] = set()
        if self.state is not None and not ranks_checked:
            folder = cache.path if cache is not None else None
            check_shared(self.state, folder, cache is not None and cache.read_only, agree)

    def prefetch(self, requests: Iterable[tuple[str, str]]) -> EncodeStats:
        """Encode what ``embed`` will be asked for: each unique (prompt, text) once.

        Batches are length-sorted (longest first, so the slowest batches come early and padding
        is small) and each block of texts is committed to the cache as soon as it is encoded, so
        an interrupted run resumes where it stopped. Under ``torchrun``/``accelerate launch``
        each process encodes its own share and commits its own blocks (``distributed``); call
        ``finish_ranks`` once every prefetch is done.
        """
        from tqdm.auto import tqdm

        unique: dict[str, tuple[str, str]] = {}
        for prompt, text in requests:
            self.stats.requested += 1
            unique.setdefault(text_key(prompt, text), (prompt, text))
        # counted once per run, however many prefetches ask (the runner asks task by task
        # where the backend's vectors depend on their batch)
        fresh = [k for k in unique if k not in self._seen]
        self._seen.update(fresh)
        self.stats.unique += len(fresh)
        keys = [k for k in fresh if k not in self._memory]
        todo = self.cache.missing(keys) if self.cache is not None else keys
        self.stats.cache_hits += len(fresh) - len(todo)
        self._verify(self._count_hits(keys, todo), unique)
        # By prompt, longest texts first.
        todo.sort(key=lambda k: (unique[k][0], -len(unique[k][1])))
        desc = "encoding"
        if self.state is not None:  # this rank's share; the others' are theirs alone
            world, rank = self.state.num_processes, self.state.process_index
            mine = set(share(todo, world, rank))
            self._others += [k for k in todo if k not in mine]
            todo = [k for k in todo if k in mine]
            desc = f"encoding (rank {rank} of {world})"
        bar = tqdm(
            total=len(todo),
            desc=desc,
            unit="text",
            disable=not self.progress or not todo,
            # One rate: the model's texts per second, as the run's summary reports it (tqdm's
            # own rate, over wall time smoothed, disagreed with it).
            bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} "
            "[{elapsed}<{remaining}{postfix}]",
        )
        for start in range(0, len(todo), self.block):
            block = todo[start : start + self.block]
            try:
                vectors, seconds = self._encode(block, unique, bar)
            except BaseException:  # a failed call, Ctrl-C: what finished is kept
                self._keep_done()
                raise
            self._store(block, vectors, seconds)
        bar.close()
        self.flush()  # everything encoded is committed before anyone reads it
        return self.stats

    def finish_ranks(self) -> None:
        """Under torchrun, once every prefetch is done: this rank's blocks committed, wait for
        the others (the one barrier of a run), then count what all of them encoded (the texts
        summed, the seconds the slowest rank's: the run's throughput) and take the costs of the
        texts the others encoded from the cache, so that a task's record reads as at world size
        1. Closes the process group. Nothing happens in one process."""
        state = self.state
        if state is None:
            return
        self.flush()
        self.ranks = add_up(state, self.stats)
        finish(state)
        self.state = None  # the group is closed: a later prefetch runs alone
        if self.cache is not None and self._others and self._main:
            others = [k for k in self._others if k not in self._cost]
            self._cost.update(self.cache.costs(others))
            self._by_others = set(self._others)
        self._others = []

    def count_others(self) -> None:
        """Where the ranks never met (a run stopped by a failure or a signal), the texts of
        the other ranks' shares that the cache holds now are counted as this run's (the main
        process's record then counts every rank's, as ``finish_ranks`` would)."""
        state, others = self.state, self._others
        if state is None or not others or not self._main or self.cache is None:
            return
        with contextlib.suppress(Exception):  # a run ending in an error: its first error stands
            self.stats.encoded += len(others) - len(self.cache.missing(others))
            self.ranks = state.num_processes
            self._others = []

    def _count_hits(self, keys: list[str], todo: list[str]) -> list[str]:
        """The keys found in the cache (``todo``: those not), kept as counted hits."""
        missing = set(todo)
        hits = [k for k in keys if k not in missing]
        self._hits.update(hits)
        return hits

    def _verify(self, hits: list[str], unique: dict[str, tuple[str, str]]) -> None:
        """Where ``verify`` asks (each prefetch: each task of an API model): the model encodes
        a few of the texts the cache holds again, one from each block they lie in first (a
        block is one put: vectors written at another time show), then more by key, at most
        ``VERIFIED`` (a sample no order of the run decides), and ``verify`` compares them with
        the cached vectors (damaged ones are left out: they are encoded again anyway)."""
        verify = self.verify
        if verify is None or self.cache is None or not hits:
            return
        keys = sorted(hits)
        first: dict[int, str] = {}
        for key, block in zip(keys, self.cache.blocks_of(keys).tolist(), strict=True):
            first.setdefault(block, key)
        sample = [first[b] for b in sorted(first)][:VERIFIED]
        chosen = set(sample)
        sample += [k for k in keys if k not in chosen][: VERIFIED - len(sample)]
        have = self.cache.lookup(sample)
        sample = sorted((k for k in sample if k in have), key=lambda k: (unique[k][0], k))
        if not sample:
            return
        fresh = []  # one call a prompt, the sample grouped by prompt
        for prompt, group in itertools.groupby(sample, key=lambda k: unique[k][0]):
            texts = [unique[k][1] for k in group]
            fresh.append(self.encoder.encode(texts, prompt=prompt, batch_size=len(texts)))
        stored = [have[k] for k in sample]
        one_width = len({len(v) for v in stored}) == 1  # two widths: no one model's cache
        matrix = np.stack(stored) if one_width else np.zeros((1, 1), np.float32)
        verify(np.vstack(fresh).astype(np.float32), matrix, str(self.cache.path))

    def _encode(
        self, keys: list[str], unique: dict[str, tuple[str, str]], bar: Any
    ) -> tuple[NDArray[np.float32], list[float]]:
        """Encode ``keys`` (grouped by prompt, longest texts first); rows in ``keys`` order,
        with the seconds each text's encoding cost."""
        out: dict[str, NDArray[np.float32]] = {}
        cost: dict[str, float] = {}
        by_prompt: dict[str, list[str]] = {}
        for key in keys:
            by_prompt.setdefault(unique[key][0], []).append(key)
        pipelined = bool(getattr(self.encoder, "pipelined", False))
        self._done = (out, cost)  # what finished, kept by prefetch if a later call fails
        for prompt, group in by_prompt.items():
            batches = self._batches(group, unique, prompt)
            if pipelined:
                self._encode_pipelined(batches, unique, prompt, bar, out, cost)
                continue
            self._run_calls(batches, unique, prompt, bar, out, cost)
        dim = self.encoder.meta.embedding_dim
        if not keys:
            return np.zeros((0, dim), np.float32), []
        return np.stack([out[k] for k in keys]), [cost[k] for k in keys]

    def _run_calls(
        self,
        batches: list[tuple[list[str], int]],
        unique: dict[str, tuple[str, str]],
        prompt: str,
        bar: Any,
        out: dict[str, NDArray[np.float32]],
        cost: dict[str, float],
    ) -> None:
        """One model call per batch (already sized for the model), each filled to its ``rows``
        with repeats of its own texts (outputs dropped). Where the backend offers it
        (``one_thread_per_call``: local models on a CPU) each call runs on one thread and as
        many calls run at once as there were threads, so a vector's bits never depend on the
        cores or the load (``models/_threads.py``). A text's cost is its call's time, scaled so
        that the texts' costs add up to the wall time the calls took together."""
        single = getattr(self.encoder, "one_thread_per_call", None)
        call = self._caller(unique, prompt)
        seconds, start = self.stats.seconds, time.perf_counter()
        spent: list[tuple[list[str], float]] = []
        with contextlib.ExitStack() as stack:
            threads = 1
            if single is not None and self.batch_invariant and len(batches) > 0:
                threads = stack.enter_context(single())
            results: Iterable[tuple[NDArray[np.float32], float]]
            if threads > 1 and len(batches) > 1:
                from concurrent.futures import ThreadPoolExecutor

                pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="chemteb-call")
                # a failed call or Ctrl-C: the calls not started are dropped, not run first
                stack.callback(pool.shutdown, wait=True, cancel_futures=True)
                results = pool.map(call, batches)
            else:
                results = map(call, batches)
            for (batch, _), (vectors, elapsed) in zip(batches, results, strict=True):
                out.update(zip(batch, vectors, strict=True))
                spent.append((batch, elapsed))
                # each finished call's costs at once (a later failure keeps these vectors)
                cost.update((k, elapsed / len(batch)) for k in batch)
                self.stats.encoded += len(batch)
                self.stats.seconds = seconds + time.perf_counter() - start
                bar.set_postfix_str(
                    f"{self.stats.encoded / max(self.stats.seconds, 1e-9):.0f} texts/s",
                    refresh=False,
                )
                bar.update(len(batch))
        wall = self.stats.seconds - seconds  # as the bar last said: one rate, the summary's
        scale = wall / max(sum(t for _, t in spent), 1e-12)
        for batch, elapsed in spent:
            cost.update((k, elapsed * scale / len(batch)) for k in batch)

    def _keep_done(self) -> None:
        """Commit the vectors of the calls that finished before one failed (nothing computed is
        lost: a resumed run does not encode them again); an error while doing so leaves the
        first error to be raised."""
        out, cost = self._done
        keys = [k for k in out if k in cost]
        if not keys:
            return
        with contextlib.suppress(Exception):
            self._store(keys, np.stack([out[k] for k in keys]), [cost[k] for k in keys])
            self.flush()

    def _caller(
        self, unique: dict[str, tuple[str, str]], prompt: str
    ) -> Callable[[tuple[list[str], int]], tuple[NDArray[np.float32], float]]:
        """One model call of a batch filled to its rows: its vectors and seconds. Once a call
        has failed, the calls after it never reach the model (their pool drops them)."""
        encoder, failed = self.encoder, threading.Event()

        def call(item: tuple[list[str], int]) -> tuple[NDArray[np.float32], float]:
            if failed.is_set():
                raise RuntimeError("an earlier call failed")  # never seen: that error is
            batch, rows = item
            t0 = time.perf_counter()
            texts = [unique[k][1] for k in batch]
            texts += [texts[i % len(texts)] for i in range(rows - len(texts))]
            try:
                vectors = encoder.encode(texts, prompt=prompt, batch_size=rows)[: len(batch)]
            except BaseException:
                failed.set()
                raise
            return vectors, time.perf_counter() - t0

        return call

    def _encode_pipelined(
        self,
        batches: list[tuple[list[str], int]],
        unique: dict[str, tuple[str, str]],
        prompt: str,
        bar: Any,
        out: dict[str, NDArray[np.float32]],
        cost: dict[str, float],
    ) -> None:
        """The host never waits on itself: a thread tokenises the batches ahead (two at most
        in flight) while the device runs the current one; outputs stay on the device until the
        block is done and come back in one copy. The same batches and the same calls as
        ``encode``, so the same vectors; the block's wall time is shared evenly among its
        texts (per-batch times would need a synchronisation per batch)."""
        from concurrent.futures import ThreadPoolExecutor

        encoder: Any = self.encoder
        if not batches:
            return

        def filled(batch: list[str], rows: int) -> list[str]:
            # the call's rows as _caller fills them: the same calls, so the same vectors (a
            # call left unfilled ran another kernel on a Xeon and gave other bits)
            texts = [unique[k][1] for k in batch]
            return texts + [texts[i % len(texts)] for i in range(rows - len(texts))]

        t0 = time.perf_counter()
        outputs = []
        single = getattr(encoder, "one_thread_per_call", None)
        with contextlib.ExitStack() as stack:
            if single is not None and self.batch_invariant:
                # where the backend promises batch-invariant bits (a CPU), its calls run on one
                # thread here too: on two, a Xeon's products summed small calls another way
                stack.enter_context(single())
            pool = stack.enter_context(
                ThreadPoolExecutor(max_workers=1, thread_name_prefix="chemteb-tokenise")
            )
            ahead = [pool.submit(encoder.prepare, filled(*b), prompt=prompt) for b in batches[:2]]
            for i, (batch, _) in enumerate(batches):
                prepared = ahead.pop(0).result()
                if i + 2 < len(batches):
                    ahead.append(
                        pool.submit(encoder.prepare, filled(*batches[i + 2]), prompt=prompt)
                    )
                outputs.append(encoder.run(prepared)[: len(batch)])
                bar.update(len(batch))
        vectors = encoder.to_numpy(outputs)
        elapsed = time.perf_counter() - t0
        keys = [k for b, _ in batches for k in b]
        self.stats.seconds += elapsed
        self.stats.encoded += len(keys)
        out.update(zip(keys, vectors, strict=True))
        cost.update((k, elapsed / len(keys)) for k in keys)
        bar.set_postfix_str(
            f"{self.stats.encoded / max(self.stats.seconds, 1e-9):.0f} texts/s", refresh=False
        )

    def _batches(
        self, group: list[str], unique: dict[str, tuple[str, str]], prompt: str
    ) -> list[tuple[list[str], int]]:
        """The model calls for one prompt's texts, longest first, each with the rows it runs:
        equal-length batches of a fixed shape where the backend counts tokens on a CPU
        (``equal_length_batches``), else ``batch_size`` texts each (GPUs; APIs, which limit
        inputs per request). Backends that count tokens are sorted by token count, and give
        the token statistics (outside the timed region)."""
        lengths_of = getattr(self.encoder, "token_lengths", None)
        step = self.batch_size
        if lengths_of is None:
            group.sort(key=lambda k: -len(unique[k][1]))
            return [
                (group[i : i + step], len(group[i : i + step])) for i in range(0, len(group), step)
            ]
        lengths = lengths_of([unique[k][1] for k in group], prompt=prompt)
        self.stats.tokens = (self.stats.tokens or 0) + int(sum(lengths))
        order = sorted(range(len(group)), key=lambda i: (-lengths[i], -len(unique[group[i]][1])))
        ranked = [group[i] for i in order]
        if not getattr(self.encoder, "token_budget", True):
            return [
                (ranked[i : i + step], len(ranked[i : i + step]))
                for i in range(0, len(ranked), step)
            ]
        sizes = equal_length_batches([lengths[i] for i in order])
        return [
            (ranked[r.start : r.stop], call_rows(lengths[order[r.start]], len(r))) for r in sizes
        ]

    @property
    def batch_invariant(self) -> bool:
        """Whether a text's vector is the same whatever other texts the run holds: an encoder
        that says so itself (static models embed text by text), else one batched by equal token
        lengths (local models on a CPU: ``equal_length_batches``). Not a GPU (its kernels are
        chosen by matrix shape) nor an API (its server batches as it likes): the runner then
        encodes each task's texts in batches of their own."""
        said = getattr(self.encoder, "batch_invariant", None)
        if said is not None:
            return bool(said)
        return getattr(self.encoder, "token_lengths", None) is not None and bool(
            getattr(self.encoder, "token_budget", True)
        )

    def _store(
        self,
        keys: list[str],
        vectors: NDArray[np.float32],
        seconds: list[float],
        *,
        replace: bool = False,
    ) -> None:
        """Commit one block to the cache off the critical path: a writer thread runs the
        transaction while the model encodes the next block (SQLite and torch both release the
        GIL). At most one block is in flight, so memory stays bounded and a writer's error
        surfaces at the next block; each block is still one transaction (all of it or none of
        it survives a kill)."""
        self._cost.update(zip(keys, seconds, strict=True))
        if self.cache is None:
            self._memory.update(zip(keys, vectors, strict=True))
            return
        self.flush()
        if self._writer is None:
            from concurrent.futures import ThreadPoolExecutor

            self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="chemteb-cache")
        self._pending = dict(zip(keys, vectors, strict=True))
        cache = self.cache
        self._inflight = self._writer.submit(
            lambda: cache.put(keys, vectors, seconds=seconds, replace=replace)
        )

    def flush(self) -> None:
        """Wait for the block in flight to be committed (its error raised here). A read-only
        cache stores nothing: its vectors then live in memory for this run."""
        inflight, self._inflight = self._inflight, None
        pending, self._pending = self._pending, {}
        if inflight is not None and not inflight.result():
            self._memory.update(pending)

    def close(self) -> None:
        """Commit what is in flight and stop the writer thread."""
        try:
            self.flush()
        finally:
            if self._writer is not None:
                self._writer.shutdown(wait=True)
                self._writer = None

    def costs(self, keys: Iterable[str]) -> tuple[dict[str, float], int]:
        """The encoding seconds of ``keys`` (this run's, else the cache's record) and how many
        came from the cache. A key whose cost was never recorded (cached by an older version)
        is given the mean recorded cost of the others, so a task's time is not understated."""
        unique = list(dict.fromkeys(keys))
        found = {k: self._cost[k] for k in unique if k in self._cost}
        hits = len(unique) - len(found)
        if self.cache is not None and hits:
            found.update(self.cache.costs([k for k in unique if k not in found]))
        if len(found) < len(unique):
            mean = sum(found.values()) / len(found) if found else 0.0
            found.update((k, mean) for k in unique if k not in found)
        return found, hits

    @property
    def is_main_process(self) -> bool:
        """False on the helper ranks of a sharded run (they encode but do not score or write)."""
        return self._main

    def embed(self, texts: list[str], prompt: str) -> NDArray[np.float32]:
        """The embeddings of ``texts`` (after ``prefetch``), one row per text, in order."""
        self.flush()
        keys = [text_key(prompt, t) for t in texts]
        dim = self.encoder.meta.embedding_dim
        if not keys:  # as encode([]) gives: no rows of the model's width
            return np.zeros((0, dim or 0), dtype=np.float32)
        if self.cache is not None and dim and not self._memory and keys:
            # the common case, every vector in the cache: one matrix read, no dict of rows
            # (480k texts/s where lookup-then-stack gathered 182k, benchmarks/bench_pipeline)
            matrix, found = self.cache.rows(keys, dim)
            if found.all():
                self._hits.difference_update(keys)
                return matrix
            have = {k: row for k, row, ok in zip(keys, matrix, found, strict=True) if ok}
        else:
            have = {k: self._memory[k] for k in keys if k in self._memory}
            rest = [k for k in dict.fromkeys(keys) if k not in have]
            if rest and self.cache is not None:
                have.update(self.cache.lookup(rest, dim))
        redo = [k for k in dict.fromkeys(keys) if k not in have]
        if redo:  # damaged cache rows (dropped by lookup, with a warning) are encoded again
            unique = {text_key(prompt, t): (prompt, t) for t in texts}
            # counted once each (unique = cache_hits + encoded): one this run encoded or read
            # already is work done again, not another text (8 unique texts were reported as 16
            # encoded after the cache's folder was removed mid-run); one never prefetched is new
            settled = self._hits, self._by_others
            again = sum(1 for k in redo if k in self._seen and not any(k in s for s in settled))
            new = [k for k in redo if k not in self._seen]
            from tqdm.auto import tqdm

            with tqdm(total=len(redo), disable=True) as bar:
                vectors, seconds = self._encode(redo, unique, bar)
            self._store(redo, vectors, seconds, replace=True)
            self.flush()  # committed before the caller goes on (and may close the cache)
            # those prefetch counted as hits were encoded after all (_encode counted them in
            # `encoded`); and the caller's timing (scoring time excludes this encoding, which
            # the vectors' costs carry)
            self.stats.cache_hits -= len(self._hits.intersection(redo))
            self.stats.encoded -= again
            self.stats.unique += len(new)
            self._seen.update(new)
            self.redo_seconds += float(sum(seconds))
            have.update(zip(redo, vectors, strict=True))
        self._hits.difference_update(keys)  # read now, sound or encoded again: settled
        return np.stack([have[k] for k in keys])

    def embed_to_file(
        self, texts: list[str], prompt: str, path: Path, *, block: int = SPILL_BLOCK
    ) -> NDArray[np.float32]:
        """``embed(texts, prompt)`` written into a ``.npy`` file at ``path``, ``block`` texts at
        a time, and returned memory-mapped: a corpus of millions never sits in memory whole
        (``rank_corpus`` then reads it chunk by chunk). Same rows, same order, same values."""
        out: np.memmap[Any, Any] | None = None
        for start in range(0, len(texts), block):
            vectors = self.embed(texts[start : start + block], prompt)
            if out is None:
                shape = (len(texts), vectors.shape[1])
                out = np.lib.format.open_memmap(path, "w+", vectors.dtype, shape)
            out[start : start + len(vectors)] = vectors
        if out is None:
            return self.embed(texts, prompt)
        out.flush()
        del out
        mapped: NDArray[np.float32] = np.load(path, mmap_mode="r")
        return mapped
