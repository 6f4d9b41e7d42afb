"""Files written so that a reader sees the old one or the new one, never half of one: a leaf
module every room may use (results, ChemBench reports, run metadata)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["parse_json", "write_json_atomic"]


def parse_json(data: str | bytes) -> Any:
    """``json.loads`` that fails only with ``ValueError``: bytes that are not UTF-8 and JSON
    nested past Python's recursion limit (``[`` x 100,000) are named, not raised as
    ``UnicodeDecodeError`` or ``RecursionError`` from deep inside the parser."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        return json.loads(data)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def write_json_atomic(path: Path, payload: Any) -> None:
    """Write JSON so that readers see the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(payload, handle, indent=2, sort_keys=False, allow_nan=False)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
