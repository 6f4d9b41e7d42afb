"""Why a row is low (issue 48): each model's tokenization of chemical strings over a
benchmark's tasks, from the ``chemistry`` block each result file records — tokens per SMILES
and the unknown-token share beside the score. ``chemteb rank --diagnostics`` prints it.

Result files are untrusted: a figure of the wrong type, negative, NaN or absurd is left out,
never computed with. A string in two tasks counts in each (the figures are per task, pooled).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from chemteb_eval.tasks import Benchmark, benchmark_tasks

from .board import ModelResults

__all__ = ["UNKNOWN", "board_row", "chemistry_rows"]

UNKNOWN = "unknown"
NO_RDKIT = "unavailable (RDKit was not installed where the run ran)"
_MAX = 1e9


def _figure(stats: Any, key: str, high: float = _MAX, *, count: bool = False) -> float | None:
    """``stats[key]`` if it is a sound figure: a number (a whole one for a ``count``) from 0
    to ``high``; ``None`` for anything else (text, NaN, a 400-digit integer)."""
    value = stats.get(key) if isinstance(stats, dict) else None
    if isinstance(value, bool) or not isinstance(value, int if count else (int, float)):
        return None
    if isinstance(value, int) and not 0 <= value <= high:  # before float(): 10**400 overflows
        return None
    value = float(value)
    return value if math.isfinite(value) and 0 <= value <= high else None


def _pooled(blocks: Sequence[Any], kind: str) -> dict[str, Any]:
    """One class's strings, mean tokens and unknown share pooled over the tasks' blocks; a
    word model's blocks (``oov_share``, no tokens) pool their out-of-vocabulary share by
    strings instead (its words per string are not recorded). A block whose figures are not
    all sound is left out whole; a class a block states in words instead (SMILES without
    RDKit) is ``said``."""
    strings = tokens = unknown = oov_strings = oov = 0.0
    said = None
    for block in blocks:
        stats = block.get(kind) if isinstance(block, dict) else None
        if isinstance(stats, str):
            # the one thing a run writes there in words: SMILES without RDKit; other text is
            # damage, never shown
            said = NO_RDKIT if stats.startswith("unavailable") else said
            continue
        n, mean = _figure(stats, "strings", count=True), _figure(stats, "mean_tokens")
        if not n:
            continue
        if mean is None:
            share = _figure(stats, "oov_share", 1.0)
            if share is not None:
                oov_strings, oov = oov_strings + n, oov + n * share
            continue
        share = _figure(stats, "unk_share", 1.0)
        if share is None and mean > 0:  # damaged: never read as 0
            continue
        strings, tokens = strings + n, tokens + n * mean
        unknown += n * mean * (share or 0.0)
    out: dict[str, Any] = {
        "strings": int(strings or oov_strings),
        "tokens": tokens / strings if strings else None,
        "unk_share": unknown / tokens if tokens else None,
    }
    if oov_strings and not strings:
        out["oov_share"] = oov / oov_strings
    if said is not None and not strings and not oov_strings:
        out["said"] = said
    return out


def chemistry_rows(models: Sequence[ModelResults], bench: Benchmark) -> list[dict[str, Any]]:
    """Per model: its mean over the benchmark (``None`` when incomplete), and its SMILES and
    text tokenization pooled over the tasks whose files recorded one; ``"unknown"`` where every
    file said so (an API), ``None`` where none recorded any (files from before)."""
    from .ranking import rank_models

    names = [t.name for t in benchmark_tasks(bench)]
    # the ranking's own mean, so this column is the overall table's to the bit
    ranked = {r.model: r for r in rank_models(list(models), bench)}
    out = []
    for m in models:
        blocks = [m.files[n].extra.get("chemistry") for n in names if n in m.files]
        known = [b for b in blocks if isinstance(b, dict)]
        row: dict[str, Any] = {
            "model": m.model,
            "mean": ranked[m.model].mean if ranked[m.model].complete else None,
        }
        if not known:
            row["chemistry"] = UNKNOWN if blocks and all(b == UNKNOWN for b in blocks) else None
        else:
            row["smiles"] = _pooled(known, "smiles")
            row["text"] = _pooled(known, "text")
        out.append(row)
    return out


def board_row(row: dict[str, Any]) -> dict[str, Any]:
    """A ``chemistry_rows`` row as the Space's Tokenization tab and its CSV show it: the
    mean, then tokens per SMILES and their unknown share, tokens per text (a word model's
    out-of-vocabulary share in the unknown column, said in ``Tokenizer``)."""
    smiles, text = row.get("smiles") or {}, row.get("text") or {}
    kind = (
        "words: unknown = out of vocabulary"
        if "oov_share" in smiles or "oov_share" in text
        else "not ours to call (an API)"
        if row.get("chemistry") == UNKNOWN
        else "not recorded (files from before)"
        if "smiles" not in row
        else "its own"
    )
    return {
        "Model": row["model"],
        "Mean": row["mean"],
        "SMILES": smiles.get("strings") or None,  # none, or unavailable: "—"
        "Tokens/SMILES": smiles.get("tokens"),
        "Unknown (SMILES)": smiles.get("oov_share", smiles.get("unk_share")),
        "Tokens/text": text.get("tokens"),
        "Unknown (text)": text.get("oov_share", text.get("unk_share")),
        "Tokenizer": kind if "said" not in smiles else f"{kind}; SMILES {smiles['said']}",
    }
