"""The project's exception for problems of the environment (not of the caller's arguments), and
the helper that keeps messages about hostile input readable."""

from __future__ import annotations

from typing import Any


class ChemtebError(RuntimeError):
    """Something outside the arguments is wrong: offline, missing data, missing extra.

    The message always says what to do next. Bad arguments raise ``ValueError`` instead.
    """


def short_repr(value: Any, limit: int = 40) -> str:
    """``repr(value)`` cut to ``limit`` characters, for error messages about hostile input (an
    int of 5,000 digits has no repr at all: Python refuses to print it)."""
    try:
        text = repr(value)
    except ValueError:
        return f"<{type(value).__name__} too long to print>"
    return text if len(text) <= limit else text[: limit - 3] + "..."
