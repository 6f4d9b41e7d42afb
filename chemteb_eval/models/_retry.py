"""POST JSON to an OpenAI-compatible server with retries (shared by the HTTP backends)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from chemteb_eval.errors import ChemtebError

__all__ = ["post_json"]


def post_json(
    client: Any,
    url: str,
    payload: dict[str, Any],
    *,
    max_retries: int,
    backoff: float,
    what: str,
    before_attempt: Callable[[], None] | None = None,
) -> Any:
    """The JSON answer of ``POST url``; 408/409/429, 5xx and connection errors are retried with
    exponential backoff (``Retry-After`` honoured), other errors end in one ``ChemtebError``.

    Args:
        client: an ``httpx.Client``.
        url: the endpoint.
        payload: the JSON body.
        max_retries: retries before giving up.
        backoff: the first wait in seconds (doubling, at most 60 s).
        what: what is asked for, for messages (``model text-embedding-3-small``).
        before_attempt: called before every attempt (client-side rate limiting).
    """
    import httpx

    wait = backoff
    for attempt in range(max_retries + 1):
        if before_attempt is not None:
            before_attempt()
        try:
            response = client.post(url, json=payload)
        except httpx.TransportError as exc:
            error: str = f"{type(exc).__name__}: {exc}"
            retry_after = None
        else:
            if response.status_code == 200:
                return response.json()
            if response.status_code not in (408, 409, 429) and response.status_code < 500:
                raise ChemtebError(
                    f"{url} answered {response.status_code} for {what}: {response.text[:300]}. "
                    "Check the model name and API key."
                )
            error = f"HTTP {response.status_code}"
            retry_after = response.headers.get("Retry-After")
        if attempt == max_retries:
            raise ChemtebError(
                f"{url} failed {max_retries + 1} times ({error}); the server is down or "
                "rate-limiting: retry later or send smaller batches."
            )
        try:
            delay = float(retry_after) if retry_after is not None else wait
        except ValueError:
            delay = wait
        time.sleep(min(delay, 60.0))
        wait = min(wait * 2, 60.0)
    raise AssertionError("unreachable")
