"""A tiny deterministic encoder for runner tests: hashed character trigrams, no model weights.

It is a real (if weak) text encoder — similar strings get similar vectors — and it is fast, so
runner tests exercise the whole pipeline in seconds. ``delay`` slows each batch down for the
kill-and-resume test.
"""

from __future__ import annotations

import hashlib
import time

import numpy as np

from chemteb_eval.models.base import ModelMeta


class HashingEncoder:
    # each text's vector is its own trigrams': no batch changes it (the engine then encodes a
    # run's texts together, as for any batch-invariant backend)
    batch_invariant = True

    def __init__(
        self,
        dim: int = 64,
        delay: float = 0.0,
        name: str = "test/hashing-trigrams",
        interrupt_at: int | None = None,
    ) -> None:
        self.meta = ModelMeta(
            name=name,
            revision="1" * 40,
            n_parameters=0,
            embedding_dim=dim,
            max_tokens=None,
            framework="test",
            source="tests",
        )
        self.dim = dim
        self.delay = delay
        self.calls = 0
        self.interrupt_at = interrupt_at  # raise KeyboardInterrupt (Ctrl-C) on this call

    def prompt(self, task_type: str, role: str | None) -> str:
        return "query: " if role == "query" else ""

    def encode(self, texts: list[str], *, prompt: str, batch_size: int) -> np.ndarray:
        self.calls += 1
        if self.calls == self.interrupt_at:
            raise KeyboardInterrupt
        if self.delay:
            time.sleep(self.delay)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            padded = f"  {prompt}{text.lower()}  "
            for i in range(len(padded) - 2):
                h = int.from_bytes(
                    hashlib.blake2b(padded[i : i + 3].encode(), digest_size=4).digest(), "little"
                )
                out[row, h % self.dim] += 1.0 if (h >> 31) & 1 else -1.0
            out[row, 0] += 0.5  # never a zero vector
        return out
