"""Which library versions computed the results on a board, and a note where they differ.

A run records the version of every library that can move its numbers (``software`` in each
result file: torch, transformers, tokenizers... for the vectors, numpy, SciPy, scikit-learn for
the scoring). Two models scored under different versions may differ by the libraries' rounding,
not the models': ``rank``, ``compare`` and the Space say so in one note per library.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["software_notes", "software_of"]

# what a hostile file can put in a note: names and versions are cut, and so is their number
_LONGEST = 40
_MOST_LIBRARIES = 32
_MOST_SHOWN = 4


def software_of(extra: Mapping[str, Any]) -> dict[str, str]:
    """A result file's recorded versions (``extra["software"]``), names and versions as text;
    anything else there (an older file, another tool's) is no record: empty."""
    found = extra.get("software")
    if not isinstance(found, Mapping):
        return {}
    out = {}
    for name, version in list(found.items())[:_MOST_LIBRARIES]:
        if isinstance(name, str) and isinstance(version, str) and name and version:
            out[name[:_LONGEST]] = version[:_LONGEST]
    return out


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
    notes = []
    for name in sorted(seen):
        versions = seen[name]
        if len(versions) < 2:
            continue
        parts = []
        for version, models in sorted(versions.items()):
            named = ", ".join(models[:_MOST_SHOWN])
            more = f" and {len(models) - _MOST_SHOWN} more" if len(models) > _MOST_SHOWN else ""
            parts.append(f"{version} ({named}{more})")
        concerned = frozenset(m for models in versions.values() for m in models)
        notes.append(
            (
                f"results here were computed under {len(versions)} versions of {name}: "
                f"{'; '.join(parts)}. Scores a few 1e-6 apart may differ by the library, not the "
                "model; rerun under one version to compare them exactly.",
                concerned,
            )
        )
    return notes
