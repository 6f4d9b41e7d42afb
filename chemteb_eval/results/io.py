"""Result files in MTEB's layout: ``{out}/{org__model}/{revision}/{Task}.json``, written atomically."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

NO_REVISION = "no_revision_available"  # MTEB's folder name when the revision is unknown

__all__ = ["NO_REVISION", "model_dir", "write_json_atomic"]


def model_dir(output_dir: Path, model: str, revision: str | None) -> Path:
    """The folder of one model's results: ``{out}/{org__model}/{revision}``."""
    return Path(output_dir) / model.replace("/", "__") / (revision or NO_REVISION)


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
