"""An OpenAI-compatible HTTP embeddings backend (OpenAI, Azure-style proxies, vLLM, TEI, ...).

``POST {api_base}/embeddings`` with ``{"model": ..., "input": [texts]}``; the response's
``data[i].index`` puts vectors back in input order. Batches are bounded by count; 429 and 5xx
answers and broken connections are retried with exponential backoff (``Retry-After``
honoured), a host that cannot be reached is said in seconds (``_retry.post_json``), and
``api.openai.com`` without a key is said before any request; ``requests_per_minute`` spaces
requests out.
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np
from numpy.typing import NDArray

from chemteb_eval.errors import ChemtebError

from ._retry import post_json
from .base import ModelMeta, Role
from .prompts import convention_prompt

# Seconds to open a connection (the request itself gets ``timeout``).
_CONNECT_TIMEOUT = 10.0
# Hosts that answer nothing without a key (OpenAI's API); other servers (vLLM, TEI, a proxy)
# may need none.
_KEYED_HOSTS = ("api.openai.com",)


def _needs_key(api_base: str) -> bool:
    from urllib.parse import urlparse

    host = (urlparse(api_base).hostname or "").lower()
    return host in _KEYED_HOSTS


class HTTPEmbeddingEncoder:
    """Embeddings from an OpenAI-compatible ``/embeddings`` endpoint.

    Args:
        model: the model name the server knows.
        api_base: the API root (default ``$OPENAI_BASE_URL`` or ``https://api.openai.com/v1``).
        api_key: the bearer token (default ``$OPENAI_API_KEY``; none for local servers, required
            for ``api.openai.com``).
        max_batch: texts per request.
        max_retries: retries of one request before giving up.
        backoff: the first retry's wait in seconds (doubling each time, at most 60 s).
        requests_per_minute: a client-side rate limit (``None``: none).
        timeout: seconds per request.
    """

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        max_batch: int = 256,
        max_retries: int = 6,
        backoff: float = 1.0,
        requests_per_minute: float | None = None,
        timeout: float = 60.0,
    ) -> None:
        import httpx

        if max_batch < 1:
            raise ValueError(f"max_batch: must be positive, got {max_batch}.")
        self.api_base = (
            api_base or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        ).rstrip("/")
        key = (api_key if api_key is not None else os.environ.get("OPENAI_API_KEY", "")).strip()
        if not key and _needs_key(self.api_base):
            raise ChemtebError(
                f"model openai:{model}: no API key for {self.api_base}: set OPENAI_API_KEY "
                "(export OPENAI_API_KEY=sk-...), or point --api-base (api_base, "
                "$OPENAI_BASE_URL) at a server that needs none."
            )
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        # A connection is made in seconds or not at all: an address that drops packets must not
        # cost the read timeout on every retry.
        limits = httpx.Timeout(timeout, connect=min(timeout, _CONNECT_TIMEOUT))
        self._client = httpx.Client(timeout=limits, headers=headers)
        self.model = model
        self.max_batch = max_batch
        self.max_retries = max_retries
        self.backoff = backoff
        self._interval = 60.0 / requests_per_minute if requests_per_minute else 0.0
        self._last = 0.0
        self.requests = 0  # sent, retries included
        dim = self._post(["dimension probe"]).shape[1]
        self.meta = ModelMeta(
            name=model,
            revision=None,
            n_parameters=None,
            embedding_dim=int(dim),
            max_tokens=None,
            framework="openai-compatible-http",
            source=self.api_base,
        )

    def prompt(self, task_type: str, role: Role | None) -> str:
        return convention_prompt(self.model, task_type, role)

    def _post(self, texts: list[str]) -> NDArray[np.float32]:
        def pace() -> None:
            if self._interval:
                pause = self._last + self._interval - time.monotonic()
                if pause > 0:
                    time.sleep(pause)
            self._last = time.monotonic()
            self.requests += 1

        payload = post_json(
            self._client,
            f"{self.api_base}/embeddings",
            {"model": self.model, "input": texts},
            max_retries=self.max_retries,
            backoff=self.backoff,
            what=f"model {self.model}",
            before_attempt=pace,
        )
        return self._parse(payload, len(texts))

    @staticmethod
    def _parse(payload: Any, n: int) -> NDArray[np.float32]:
        try:
            items = sorted(payload["data"], key=lambda d: d["index"])
            vectors = np.asarray([d["embedding"] for d in items], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as exc:
            raise ChemtebError(
                f"embeddings response is malformed ({exc}); is this an OpenAI-compatible server?"
            ) from None
        if vectors.ndim != 2 or len(vectors) != n:
            raise ChemtebError(f"embeddings response has {len(vectors)} vectors for {n} inputs.")
        return vectors

    def encode(self, texts: list[str], *, prompt: str, batch_size: int) -> NDArray[np.float32]:
        size = min(batch_size, self.max_batch)
        parts = [
            self._post([prompt + t for t in texts[start : start + size]])
            for start in range(0, len(texts), size)
        ]
        return np.vstack(parts) if parts else np.zeros((0, self.meta.embedding_dim), np.float32)
