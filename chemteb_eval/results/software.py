"""Which library versions computed the results on a board, and a note where they differ.

A run records the version of every library that can move its numbers (``software`` in each
result file: torch, transformers, tokenizers... for the vectors, numpy, SciPy, scikit-learn for
the scoring). Two models scored under different versions may differ by the libraries' rounding,
not the models': ``rank``, ``compare`` and the Space say so in one note per library.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["software_notes", "software_of"]

# What a hostile file can put in a note: a name or version longer than these is no record (cut,
# two versions would look one), at most _MOST_READ entries of a file are read, and at most
# _MOST_NOTES notes are made, the libraries our runs record first (junk keys never hide them).
_LONGEST_NAME = 64
_LONGEST_VERSION = 200
_SHOWN = 40
_MOST_READ = 1_000
_MOST_NOTES = 12
_MOST_SHOWN = 4
_OURS = (
    "torch",
    "transformers",
    "sentence-transformers",
    "tokenizers",
    "onnxruntime",
    "onnx",
    "model2vec",
    "gensim",
    "numpy",
    "scipy",
    "scikit-learn",
    "cpu-kernels",
)
# The entry naming the kernel set that computed the vectors (``models._kernels.KERNELS``: this
# room may not import models; a test holds the two equal)
KERNELS = "cpu-kernels"


def software_of(extra: Mapping[str, Any]) -> dict[str, str]:
    """A result file's recorded versions (``extra["software"]``), names and versions as text;
    anything else there (an older file, another tool's) is no record: empty."""
    found = extra.get("software")
    if not isinstance(found, Mapping):
        return {}
    out = {}
    for name, version in itertools.islice(found.items(), _MOST_READ):
        if (
            isinstance(name, str)
            and isinstance(version, str)
            and 0 < len(name) <= _LONGEST_NAME
            and 0 < len(version) <= _LONGEST_VERSION
        ):
            out[name] = version
    return out


def _shown(text: str) -> str:
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def software_notes(
    files: Sequence[tuple[str, Mapping[str, Any]]],
) -> list[tuple[str, frozenset[str]]]:
    """One note per library whose recorded version differs among ``files`` (each a model's name
    and a result file's ``extra``), naming each version's models, with the models it concerns;
    files that record none are not counted. Empty when every recorded version agrees."""
    seen: dict[str, dict[str, list[str]]] = {}
    for model, extra in files:
        for name, version in software_of(extra).items():
            models = seen.setdefault(name, {}).setdefault(version, [])
            if model not in models:
                models.append(model)
    notes: list[tuple[str, frozenset[str]]] = []
    order = sorted(seen, key=lambda n: (n not in _OURS, _OURS.index(n) if n in _OURS else 0, n))
    for name in order:
        if len(notes) == _MOST_NOTES:
            break
        versions = seen[name]
        if len(versions) < 2:
            continue
        parts = []
        for version, models in sorted(versions.items())[:_MOST_SHOWN]:
            named = ", ".join(models[:_MOST_SHOWN])
            more = f" and {len(models) - _MOST_SHOWN} more" if len(models) > _MOST_SHOWN else ""
            parts.append(f"{_shown(version)} ({named}{more})")
        if len(versions) > _MOST_SHOWN:
            parts.append(f"{len(versions) - _MOST_SHOWN} other versions")
        concerned = frozenset(m for models in versions.values() for m in models)
        if name == KERNELS:
            said = (
                f"results here were computed on {len(versions)} kernel sets (CPU instruction "
                f"sets or GPUs): {'; '.join(parts)}. Scores a few 1e-6 apart may differ by the "
                "machine, not the model; rerun on one machine to compare them exactly."
            )
        else:
            said = (
                f"results here were computed under {len(versions)} versions of {_shown(name)}: "
                f"{'; '.join(parts)}. Scores a few 1e-6 apart may differ by the library, not "
                "the model; rerun under one version to compare them exactly."
            )
        notes.append((said, concerned))
    return notes
