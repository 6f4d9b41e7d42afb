"""Literal transcriptions of the reference's loops, used as oracles by the property tests.

These are deliberately the slow, obvious Python loops (MTEB 1.14.15's threshold sweep and
undersampling walk); the library's vectorised versions must agree with them exactly.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np


def sweep(
    scores: list[float], labels: list[int], high_more_similar: bool, skip_ties: bool
) -> dict[str, float]:
    rows = sorted(zip(scores, labels, strict=True), key=lambda x: x[0], reverse=high_more_similar)
    max_acc, best_acc_threshold = 0.0, -1.0
    positive_so_far, remaining_negatives = 0, sum(1 for v in labels if v == 0)
    for i in range(len(rows) - 1):
        score, label = rows[i]
        if label == 1:
            positive_so_far += 1
        else:
            remaining_negatives -= 1
        if skip_ties and score == rows[i + 1][0]:
            continue
        acc = (positive_so_far + remaining_negatives) / len(labels)
        if acc > max_acc:
            max_acc, best_acc_threshold = acc, (rows[i][0] + rows[i + 1][0]) / 2

    best_f1 = best_precision = best_recall = 0.0
    threshold = 0.0
    ncorrect, total = 0, sum(labels)
    for i in range(len(rows) - 1):
        score, label = rows[i]
        if label == 1:
            ncorrect += 1
        if skip_ties and score == rows[i + 1][0]:
            continue
        if ncorrect > 0:
            precision = ncorrect / (i + 1)
            recall = ncorrect / total
            f1 = 2 * precision * recall / (precision + recall)
            if f1 > best_f1:
                best_f1, best_precision, best_recall = f1, precision, recall
                threshold = (rows[i][0] + rows[i + 1][0]) / 2
    return {
        "accuracy": max_acc,
        "accuracy_threshold": best_acc_threshold,
        "f1": best_f1,
        "f1_threshold": threshold,
        "precision": best_precision,
        "recall": best_recall,
    }


def undersample(
    labels: list[Any], n_experiments: int, samples_per_label: int, seed: int
) -> list[list[int]]:
    idxs = list(range(len(labels)))
    out = []
    for _ in range(n_experiments):
        np.random.RandomState(seed).shuffle(idxs)
        counter: dict[Any, int] = defaultdict(int)
        picked = []
        for i in idxs:
            if counter[labels[i]] < samples_per_label:
                picked.append(i)
                counter[labels[i]] += 1
        out.append(picked)
    return out
