"""How well a model's stated confidence matches its correctness (pure Python, no numpy: the
scoring side of ChemBench stays import-light).

A confidence on ChemBench's 1-5 scale is mapped to [0, 1] as ``(c - 1) / 4`` (1 -> 0, 3 -> 0.5,
5 -> 1). Reported: mean confidence of correct and of wrong answers, Spearman's rank correlation
between confidence and correctness (ties averaged), the expected calibration error over equal-width
bins of the mapped confidence (5 bins of width 0.2: each 1-5 level lands in its own bin) and the
Brier score (mean squared difference between mapped confidence and correctness, 0 is perfect).
Questions without a confidence are counted and left out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

__all__ = ["CONFIDENCE_SCALE", "calibration", "check_confidences", "spearman"]

CONFIDENCE_SCALE = (1, 5)


def check_confidences(confidences: Any, n: int) -> list[float | None]:
    """``confidences`` as a list of ``n`` numbers on the 1-5 scale or ``None`` (none stated);
    ``ValueError`` naming the first bad entry."""
    if isinstance(confidences, (str, bytes)) or not hasattr(confidences, "__len__"):
        raise ValueError("confidences: must be a list, one confidence (1-5, or None) per question.")
    if len(confidences) != n:
        raise ValueError(f"confidences: {len(confidences)} given for {n} questions.")
    low, high = CONFIDENCE_SCALE
    out: list[float | None] = []
    for i, value in enumerate(confidences):
        if value is None:
            out.append(None)
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"confidences: entry {i} is {value!r}, not a number or None.")
        if not math.isfinite(value) or not low <= value <= high:
            raise ValueError(
                f"confidences: entry {i} is {value!r}, outside the {low}-{high} scale."
            )
        out.append(float(value))
    return out


def _ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, ties given their average rank."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rho (Pearson of the average ranks); ``None`` when either side is constant."""
    if len(x) != len(y) or len(x) < 2:
        return None
    rx, ry = _ranks(x), _ranks(y)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def calibration(
    confidences: Sequence[float | None], correct: Sequence[bool], *, n_bins: int = 5
) -> dict[str, Any]:
    """Calibration of stated confidences (1-5) against correctness.

    Args:
        confidences: one per question, ``None`` where none was stated.
        correct: whether each answer was correct.
        n_bins: equal-width bins of the mapped confidence in [0, 1] for the ECE.

    Returns:
        ``n_with_confidence``, ``n_without_confidence``, ``mean_confidence`` (1-5),
        ``mean_confidence_correct``, ``mean_confidence_wrong``, ``spearman`` (confidence vs
        correctness), ``ece``, ``brier`` and ``bins`` (range, n, mean mapped confidence,
        accuracy); the statistics are ``None`` when no question has a confidence.
    """
    if n_bins < 1:
        raise ValueError(f"n_bins: must be at least 1, got {n_bins}.")
    low, high = CONFIDENCE_SCALE
    pairs = [(c, bool(ok)) for c, ok in zip(confidences, correct, strict=True) if c is not None]
    out: dict[str, Any] = {
        "n_with_confidence": len(pairs),
        "n_without_confidence": len(confidences) - len(pairs),
    }
    right = [c for c, ok in pairs if ok]
    wrong = [c for c, ok in pairs if not ok]
    mapped = [((c - low) / (high - low), 1.0 if ok else 0.0) for c, ok in pairs]
    bins: list[dict[str, Any]] = []
    for b in range(n_bins):
        lo, hi = b / n_bins, (b + 1) / n_bins
        members = [(p, y) for p, y in mapped if lo <= p < hi or (b == n_bins - 1 and p == 1.0)]
        bins.append(
            {
                "range": [lo, hi],
                "n": len(members),
                "mean_confidence": sum(p for p, _ in members) / len(members) if members else None,
                "accuracy": sum(y for _, y in members) / len(members) if members else None,
            }
        )
    n = len(mapped)
    out.update(
        {
            "mean_confidence": sum(c for c, _ in pairs) / n if n else None,
            "mean_confidence_correct": sum(right) / len(right) if right else None,
            "mean_confidence_wrong": sum(wrong) / len(wrong) if wrong else None,
            "spearman": spearman([c for c, _ in pairs], [float(ok) for _, ok in pairs]),
            "ece": (
                sum(b["n"] / n * abs(b["mean_confidence"] - b["accuracy"]) for b in bins if b["n"])
                if n
                else None
            ),
            "brier": sum((p - y) ** 2 for p, y in mapped) / n if n else None,
            "bins": bins,
        }
    )
    return out
