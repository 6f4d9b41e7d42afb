"""Result files in MTEB's layout: ``{out}/{org__model}/{revision}/{Task}.json``, written atomically."""

from __future__ import annotations

from pathlib import Path

from chemteb_eval._files import write_json_atomic

NO_REVISION = "no_revision_available"  # MTEB's folder name when the revision is unknown

__all__ = ["NO_REVISION", "model_dir", "write_json_atomic"]


def model_dir(output_dir: Path, model: str, revision: str | None) -> Path:
    """The folder of one model's results: ``{out}/{org__model}/{revision}``, always inside
    ``output_dir`` (``ValueError`` for a name or revision such as ``..`` that would leave it)."""
    parts = (model.replace("/", "__"), revision or NO_REVISION)
    for part in parts:
        if part in ("", ".", "..") or "\\" in part or "\x00" in part:
            raise ValueError(
                f"model: {model!r} (revision {revision!r}) cannot name a results folder; "
                "pass the model by a name or a folder path."
            )
    return Path(output_dir) / parts[0] / parts[1]
