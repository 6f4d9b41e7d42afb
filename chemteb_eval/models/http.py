"""An OpenAI-compatible HTTP embeddings backend (OpenAI, Azure-style proxies, vLLM, TEI, ...).

``POST {api_base}/embeddings`` with ``{"model": ..., "input": [texts]}``; the response's
``data[i].index`` puts vectors back in input order. Batches are bounded by count; 429 and 5xx
answers and broken connections are retried with exponential backoff (``Retry-After``
honoured), a host that cannot be reached is said in seconds, and ``api.openai.com`` without a
key is said before any request; ``requests_per_minute`` spaces requests out. All of that is
``openai_client.OpenAIClient``, which ChemBench's ``openai:`` generators use too.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from chemteb_eval.errors import ChemtebError

from .backends import LoadOptions, framework_of
from .base import ModelMeta, Role
from .openai_client import OpenAIClient
from .prompts import convention_prompt
from .spec import ModelSpec


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

    @classmethod
    def from_spec(cls, spec: ModelSpec, options: LoadOptions) -> HTTPEmbeddingEncoder:
        """The backend table's loader (``openai``)."""
        return cls(spec.name, api_base=options.api_base)

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
        if max_batch < 1:
            raise ValueError(f"max_batch: must be positive, got {max_batch}.")
        self._api = OpenAIClient(
            model,
            api_base=api_base,
            api_key=api_key,
            max_retries=max_retries,
            backoff=backoff,
            timeout=timeout,
            requests_per_minute=requests_per_minute,
        )
        self.api_base = self._api.api_base
        self.model = model
        self.max_batch = max_batch
        self.max_retries = max_retries
        self.backoff = backoff
        # the guard of the model's declared identity (``identity.ProbeGuard.watch``): each
        # request then carries one probe text, checked before the request's vectors are used
        self.probe_watch: Any = None
        dim = self._post(["dimension probe"]).shape[1]
        self.meta = ModelMeta(
            name=model,
            revision=None,
            n_parameters=None,
            embedding_dim=int(dim),
            max_tokens=None,
            framework=framework_of("openai"),
            source=self.api_base,
        )

    @property
    def requests(self) -> int:
        """Requests sent, retries included."""
        return self._api.requests

    def prompt(self, task_type: str, role: Role | None) -> str:
        return convention_prompt(self.model, task_type, role)

    def _post(self, texts: list[str]) -> NDArray[np.float32]:
        """One request. Watched (``probe_watch``), it carries one probe text after the texts: in
        the same body, route and batch as they (a gateway's cache or a replica that answered
        the probe alone from another model cannot hide), checked before they are returned;
        one short text a request (1 of 33 texts at a batch of 32)."""
        watch = self.probe_watch
        index, sent = 0, texts
        if watch is not None:
            index, probe = watch.text()
            sent = [*texts, probe]
        payload = self._api.post("embeddings", {"model": self.model, "input": sent})
        vectors = self._parse(payload, len(sent), probed=watch is not None)
        if watch is None:
            return vectors
        watch.see(index, vectors[-1])
        return vectors[:-1]

    @staticmethod
    def _parse(payload: Any, n: int, probed: bool = False) -> NDArray[np.float32]:
        try:
            items = sorted(payload["data"], key=lambda d: d["index"])
            vectors = np.asarray([d["embedding"] for d in items], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as exc:
            raise ChemtebError(
                f"embeddings response is malformed ({exc}); is this an OpenAI-compatible server?"
            ) from None
        if vectors.ndim != 2 or len(vectors) != n:
            said = f" ({n - 1} texts and a probe text that checks the model)" if probed else ""
            raise ChemtebError(
                f"embeddings response has {len(vectors)} vectors for {n} inputs{said}; the "
                "server may cap a request's inputs: pass a smaller --batch-size."
            )
        indices = [d["index"] for d in items]
        if indices != list(range(n)):  # a row given twice, another never: vectors misassigned
            raise ChemtebError(
                f"embeddings response's indices are not 0..{n - 1} once each "
                f"({indices[:8]}{'...' if n > 8 else ''}); is this an OpenAI-compatible server?"
            )
        return vectors

    def encode(self, texts: list[str], *, prompt: str, batch_size: int) -> NDArray[np.float32]:
        size = min(batch_size, self.max_batch)
        if self.probe_watch is not None:  # the probe text rides in each request: one text less
            size = max(1, size - 1)  # (TEI refuses a 33rd input by default)
        parts = [
            self._post([prompt + t for t in texts[start : start + size]])
            for start in range(0, len(texts), size)
        ]
        return np.vstack(parts) if parts else np.zeros((0, self.meta.embedding_dim), np.float32)
