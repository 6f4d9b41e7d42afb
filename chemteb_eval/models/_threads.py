"""One thread per model call, calls side by side: a vector that is a function of the model and
the text alone, whatever the cores, the thread count or the machine's load.

Why: a matrix product split over threads may cut its sums differently for another row count, or
when MKL gives a loaded machine fewer threads (an attacker's CPU gave other bits, by 1e-7, to a
call of 12 rows of one length than to a call of 4, on torch's default 2 threads; one thread gave
every row count the same bits). A call on one thread has one order of sums, so its bits depend
on its own shape only; the cores are used by running that many calls at once instead (each on
its own core; torch and the tokenizers release the GIL). Cost and gain against one call on all
threads: ``benchmarks/bench_threads.py``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["TOKENIZER_LOCK", "one_thread_per_call"]

# A fast tokenizer's settings (truncation, padding) live in one Rust object: two threads setting
# and using them at once raise "Already borrowed". Tokenising takes ~2% of a call; it is done
# one at a time, the forward passes side by side.
TOKENIZER_LOCK = threading.Lock()


# Runs in several Python threads of one process share torch's one thread count: the first in
# saves it, the last out restores it (saved and restored by each, out of order, it stayed 1).
_ENTERED = 0
_SAVED = 1
_COUNT_LOCK = threading.Lock()


@contextmanager
def one_thread_per_call() -> Iterator[int]:
    """Within it, each torch operator runs on its calling thread alone. Yields the threads torch
    had (how many calls may run at once); restores them when the last such context ends."""
    import torch

    global _ENTERED, _SAVED
    with _COUNT_LOCK:
        if _ENTERED == 0:
            _SAVED = torch.get_num_threads()
            torch.set_num_threads(1)
        _ENTERED += 1
        threads = _SAVED
    try:
        yield threads
    finally:
        with _COUNT_LOCK:
            _ENTERED -= 1
            if _ENTERED == 0:
                torch.set_num_threads(_SAVED)
