"""Result files in MTEB's layout: ``{out}/{org__model}/{revision}/{Task}.json``, written atomically."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from chemteb_eval._files import write_json_atomic

NO_REVISION = "no_revision_available"  # MTEB's folder name when the revision is unknown
# MTEB's folder of a model's variants: ``{revision}/experiments/{name}/``, each with its own
# model_meta.json whose ``experiment_kwargs`` name it (mteb.cache.result_cache, 2.26).
EXPERIMENTS = "experiments"
_INVALID = set('<>:"|?*\\/\0')

__all__ = [
    "EXPERIMENTS",
    "NO_REVISION",
    "experiment_label",
    "experiment_name",
    "model_dir",
    "write_json_atomic",
]


def experiment_name(kwargs: Mapping[str, str | int | float | bool]) -> str:
    """MTEB's folder name of an experiment (``_serialize_experiment_kwargs_to_name`` for plain
    values): ``key_value`` pairs in key order joined by ``__``, e.g. ``backend_onnx-int8``;
    ``exp_<16 hex>`` when that is over 200 characters or holds a character a folder cannot.
    Written again here so that no run needs mteb (a differential test pins it to MTEB's)."""
    text = "__".join(f"{k}_{_plain(v)}" for k, v in sorted(kwargs.items()))
    if len(text) > 200 or any(c in _INVALID for c in text):
        return "exp_" + hashlib.sha256(text.encode()).hexdigest()[:16]
    return text


def _plain(value: str | int | float | bool) -> str:
    text = str(value)
    for char in _INVALID:
        text = text.replace(char, "_")
    return text


def experiment_label(meta: Mapping[str, Any], name: str) -> str:
    """How a row names an experiment: MTEB's ``key=value, ...`` of its model_meta.json's
    ``experiment_kwargs``, else its folder name."""
    kwargs = meta.get("experiment_kwargs")
    if isinstance(kwargs, dict) and kwargs and all(isinstance(k, str) for k in kwargs):
        return ", ".join(f"{k}={_plain(v)}" for k, v in sorted(kwargs.items()))
    return name


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
