"""One client for OpenAI-compatible APIs (OpenAI, Azure-style proxies, vLLM, TEI, ...), used by
the embeddings backend (``http.py``) and ChemBench's ``openai:`` generators alike.

It owns what both need: the API root (``api_base``, else ``$OPENAI_BASE_URL``, else OpenAI's),
the key (``api_key``, else ``$OPENAI_API_KEY``; a blank one is none), which is said missing
before any request for a host that answers nothing without one, one ``httpx.Client`` whose
connection is made in seconds or not at all, an optional client-side rate limit, and POST with
retries and one-line errors (``_retry.post_json``).
"""

from __future__ import annotations

import os
import time
from typing import Any

from chemteb_eval.errors import ChemtebError

from ._retry import post_json

__all__ = ["DEFAULT_API_BASE", "OpenAIClient", "api_root"]

DEFAULT_API_BASE = "https://api.openai.com/v1"
# Seconds to open a connection (the request itself gets ``timeout``).
_CONNECT_TIMEOUT = 10.0
# Hosts that answer nothing without a key (OpenAI's API); other servers (vLLM, TEI, a proxy)
# may need none.
_KEYED_HOSTS = ("api.openai.com",)


def api_root(api_base: str | None) -> str:
    """The API root: ``api_base``, else ``$OPENAI_BASE_URL``, else OpenAI's; no trailing /."""
    return (api_base or os.environ.get("OPENAI_BASE_URL") or DEFAULT_API_BASE).rstrip("/")


def _needs_key(api_base: str) -> bool:
    from urllib.parse import urlparse

    host = (urlparse(api_base).hostname or "").lower()
    return host in _KEYED_HOSTS


class OpenAIClient:
    """POST to one model on an OpenAI-compatible API.

    Args:
        model: the model name the server knows (messages say ``model openai:MODEL``).
        api_base: the API root (default ``$OPENAI_BASE_URL`` or ``https://api.openai.com/v1``).
        api_key: the bearer token (default ``$OPENAI_API_KEY``; none for local servers,
            required for ``api.openai.com``).
        max_retries: retries of one request after a transient error.
        backoff: the first retry's wait in seconds (doubling each time, at most 60 s).
        timeout: seconds per request.
        requests_per_minute: a client-side rate limit (``None``: none).
    """

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        max_retries: int = 6,
        backoff: float = 1.0,
        timeout: float = 60.0,
        requests_per_minute: float | None = None,
    ) -> None:
        import httpx

        self.model = model
        self.api_base = api_root(api_base)
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
        self.max_retries = max_retries
        self.backoff = backoff
        self._interval = 60.0 / requests_per_minute if requests_per_minute else 0.0
        self._last = 0.0
        self.requests = 0  # sent, retries included

    def _pace(self) -> None:
        if self._interval:
            pause = self._last + self._interval - time.monotonic()
            if pause > 0:
                time.sleep(pause)
        self._last = time.monotonic()
        self.requests += 1

    def post(self, endpoint: str, payload: dict[str, Any]) -> Any:
        """The JSON answer of ``POST {api_base}/{endpoint}`` (retried; ``ChemtebError``)."""
        return post_json(
            self._client,
            f"{self.api_base}/{endpoint}",
            payload,
            max_retries=self.max_retries,
            backoff=self.backoff,
            what=f"model {self.model}",
            before_attempt=self._pace,
        )
