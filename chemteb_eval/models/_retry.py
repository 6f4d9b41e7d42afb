"""POST JSON to an OpenAI-compatible server with retries (shared by the HTTP backends)."""

from __future__ import annotations

import socket
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
    """The JSON answer of ``POST url``; 408/409/429, 5xx and broken connections are retried with
    exponential backoff (``Retry-After`` honoured), other errors end in one ``ChemtebError``.

    A host that cannot be reached is not a busy server: a name that does not resolve fails at
    once, a refused or timed-out connection is retried at most twice (a server restarting),
    and the message says the host cannot be reached, not that it is rate-limiting.

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
    retries = max_retries
    for attempt in range(max_retries + 1):
        if before_attempt is not None:
            before_attempt()
        unreachable = False
        try:
            response = client.post(url, json=payload)
        except httpx.TransportError as exc:
            error: str = f"{type(exc).__name__}: {_one_line(exc)}"
            retry_after = None
            if _unresolvable(exc):
                raise ChemtebError(
                    f"{url} cannot be reached: its host name does not resolve ({error}). Check "
                    "the network connection and the API address (api_base, $OPENAI_BASE_URL)."
                ) from None
            unreachable = isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout))
            if unreachable:
                retries = min(retries, attempt + _CONNECT_RETRIES)
        else:
            if response.status_code == 200:
                return response.json()
            if response.status_code not in (408, 409, 429) and response.status_code < 500:
                raise ChemtebError(
                    f"{url} answered {response.status_code} for {what}: "
                    f"{_one_line(response.text[:300])}. Check the model name and API key"
                    f"{_key_hint(client, response.status_code)}."
                )
            error = f"HTTP {response.status_code}"
            retry_after = response.headers.get("Retry-After")
        if attempt >= retries:
            if unreachable:
                raise ChemtebError(
                    f"{url} failed {attempt + 1} times ({error}): the host cannot be reached "
                    "(nothing answers at that address). Check that the server is running, the "
                    "network connection and the API address (api_base, $OPENAI_BASE_URL)."
                )
            why = (
                "the server is rate-limiting: retry later or send smaller batches"
                if error in ("HTTP 429", "HTTP 409")
                else "the server is down, overloaded or rate-limiting: retry later or send "
                "smaller batches"
            )
            raise ChemtebError(f"{url} failed {attempt + 1} times ({error}); {why}.")
        try:
            delay = float(retry_after) if retry_after is not None else wait
        except ValueError:
            delay = wait
        time.sleep(min(delay, 60.0))
        wait = min(wait * 2, 60.0)
    raise AssertionError("unreachable")


# Retries of a refused or timed-out connection: enough for a server that is restarting, not a
# minute of backoff for an address where nothing listens.
_CONNECT_RETRIES = 2


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def _unresolvable(exc: BaseException) -> bool:
    """Whether the connection failed because the host name does not resolve (no network, a
    typo in the address): ``socket.gaierror`` somewhere in the exception's chain."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, socket.gaierror):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _key_hint(client: Any, status: int) -> str:
    """For a 401/403: whether a key was sent, and the variable the backends read it from."""
    if status not in (401, 403):
        return ""
    sent = "authorization" in {k.lower() for k in getattr(client, "headers", {}) or {}}
    if sent:
        return " (the key sent, from OPENAI_API_KEY or api_key, was refused)"
    return " (no key was sent: set OPENAI_API_KEY)"
