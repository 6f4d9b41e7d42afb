from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chemteb_eval.scoring import score_pair_classification
from chemteb_eval.scoring.pair_classification import best_threshold_metrics

from .helpers.reference_loops import sweep


def test_hand_checked_sweep() -> None:
    scores = np.array([0.9, 0.8, 0.7, 0.6, 0.5])
    labels = np.array([1, 0, 1, 0, 0])
    m = best_threshold_metrics(scores, labels, True)
    # Cut after row 0: 1 positive above, 3 negatives below -> 4/5; the later 4/5 is not strictly better.
    assert m["accuracy"] == pytest.approx(0.8)
    assert m["accuracy_threshold"] == pytest.approx(0.85)
    # Cut after row 2: precision 2/3, recall 1 -> F1 0.8.
    assert m["f1"] == pytest.approx(0.8)
    assert m["precision"] == pytest.approx(2 / 3)
    assert m["recall"] == pytest.approx(1.0)
    assert m["f1_threshold"] == pytest.approx(0.65)
    assert m["ap"] == pytest.approx((1 + 2 / 3) / 2)


def test_distances_sweep_from_low_to_high() -> None:
    m = best_threshold_metrics(np.array([0.1, 0.2, 5.0, 6.0]), np.array([1, 1, 0, 0]), False)
    assert m["accuracy"] == 1.0 and m["f1"] == 1.0
    assert m["accuracy_threshold"] == pytest.approx(2.6)


def test_tied_cut_published_vs_mteb2() -> None:
    scores = np.array([0.9, 0.9, 0.5])
    labels = np.array([1, 0, 0])
    published = best_threshold_metrics(scores, labels, True)
    # The published sweep cuts between the tied rows, so row order decides: a perfect score.
    assert published["accuracy"] == 1.0 and published["f1"] == 1.0
    assert published["f1_threshold"] == 0.9
    skipped = best_threshold_metrics(scores, labels, True, skip_tied_thresholds=True)
    assert skipped["accuracy"] == pytest.approx(2 / 3)
    assert skipped["f1"] == pytest.approx(2 / 3)
    assert skipped["f1_threshold"] == pytest.approx(0.7)


def test_identical_pairs_score_perfectly(rng: np.random.Generator) -> None:
    e1 = rng.standard_normal((40, 8)).astype(np.float32)
    e2 = np.where(
        np.arange(40)[:, None] % 2 == 0, e1, rng.standard_normal((40, 8)).astype(np.float32)
    )
    labels = (np.arange(40) % 2 == 0).astype(int)
    r = score_pair_classification(e1, e2, labels)
    assert r["cosine_f1"] == 1.0 and r["euclidean_accuracy"] == 1.0 and r["max_ap"] == 1.0
    assert r["main_score"] == r["max_f1"] == 1.0


def test_output_keys_are_mteb_names(rng: np.random.Generator) -> None:
    r = score_pair_classification(
        rng.standard_normal((20, 4)), rng.standard_normal((20, 4)), [0, 1] * 10
    )
    expected = (
        {
            f"{fn}_{m}"
            for fn in ("cosine", "dot", "euclidean", "manhattan")
            for m in (
                "accuracy",
                "accuracy_threshold",
                "f1",
                "f1_threshold",
                "precision",
                "recall",
                "ap",
            )
        }
        | {f"max_{m}" for m in ("accuracy", "f1", "precision", "recall", "ap")}
        | {"main_score"}
    )
    assert set(r) == expected
    assert all(type(v) is float for v in r.values())


def test_torch_and_list_inputs(rng: np.random.Generator) -> None:
    torch = pytest.importorskip("torch")
    e1 = rng.standard_normal((10, 4)).astype(np.float32)
    e2 = rng.standard_normal((10, 4)).astype(np.float32)
    labels = [0, 1] * 5
    a = score_pair_classification(e1, e2, labels)
    b = score_pair_classification(torch.from_numpy(e1), e2.tolist(), torch.tensor(labels))
    assert a["cosine_ap"] == pytest.approx(b["cosine_ap"], abs=1e-6)


@settings(max_examples=200, deadline=None)
@given(
    data=st.lists(st.tuples(st.integers(-5, 5), st.integers(0, 1)), min_size=2, max_size=40),
    higher=st.booleans(),
    skip=st.booleans(),
)
def test_vectorised_sweep_equals_reference_loop(
    data: list[tuple[int, int]], higher: bool, skip: bool
) -> None:
    # Small integer scores force many ties, where the two sweeps differ.
    scores = [s / 4 for s, _ in data]
    labels = [y for _, y in data]
    if len(set(labels)) < 2:
        labels[0] = 1 - labels[0]
    got = best_threshold_metrics(
        np.array(scores), np.array(labels), higher, skip_tied_thresholds=skip
    )
    want = sweep(scores, labels, higher, skip)
    for key, value in want.items():
        assert got[key] == value, key
