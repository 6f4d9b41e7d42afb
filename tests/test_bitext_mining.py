from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chemteb_eval.scoring import score_bitext_mining
from chemteb_eval.scoring.bitext_mining import nearest_neighbours


def _unit(angles_deg: list[float]) -> np.ndarray:
    a = np.radians(angles_deg)
    return np.stack([np.cos(a), np.sin(a)], axis=1)


def test_hand_checked_hub_penalty() -> None:
    # Sources 0 and 1 both land on target 0 (a hub); source 2 finds target 2.
    src = _unit([0, 5, 90])
    tgt = _unit([2, 60, 88])
    r = score_bitext_mining(src, tgt)
    assert r["accuracy"] == pytest.approx(2 / 3)
    # Weighted over gold labels 0,1,2 (support 1 each): precision (1/2 + 0 + 1)/3,
    # recall (1 + 0 + 1)/3, F1 (2/3 + 0 + 1)/3.
    assert r["precision"] == pytest.approx(0.5)
    assert r["recall"] == pytest.approx(2 / 3)
    assert r["f1"] == pytest.approx(5 / 9)
    assert r["main_score"] == r["f1"]


def test_gold_indices_and_unequal_sizes() -> None:
    src = _unit([0, 90])
    tgt = _unit([45, 91, 1])
    r = score_bitext_mining(src, tgt, gold=[2, 1])
    assert r["accuracy"] == 1.0 and r["f1"] == 1.0


def test_chunking_does_not_change_neighbours(rng: np.random.Generator) -> None:
    q = rng.standard_normal((101, 16)).astype(np.float32)
    t = rng.standard_normal((57, 16)).astype(np.float32)
    assert (
        nearest_neighbours(q, t, chunk_size=7) == nearest_neighbours(q, t, chunk_size=1000)
    ).all()


@settings(max_examples=50, deadline=None)
@given(n=st.integers(1, 30), seed=st.integers(0, 10_000))
def test_weighted_recall_is_accuracy(n: int, seed: int) -> None:
    # With support 1 per gold label, weighted recall is the fraction of sources matched.
    rng = np.random.default_rng(seed)
    r = score_bitext_mining(rng.standard_normal((n, 3)) + 0.01, rng.standard_normal((n, 3)) + 0.01)
    assert r["recall"] == pytest.approx(r["accuracy"])
    assert 0.0 <= r["precision"] <= 1.0 and 0.0 <= r["f1"] <= 1.0
