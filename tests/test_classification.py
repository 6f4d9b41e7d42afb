from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chemteb_eval.scoring import score_classification
from chemteb_eval.scoring.classification import undersample_indices

from .helpers.reference_loops import undersample


def _blobs(rng: np.random.Generator, labels: list, n_per: int, sep: float = 10.0) -> tuple:
    x, y = [], []
    for i, lab in enumerate(labels):
        centre = np.zeros(6)
        centre[i] = sep
        x.append(centre + rng.standard_normal((n_per, 6)))
        y += [lab] * n_per
    return np.vstack(x).astype(np.float32), y


def test_separable_blobs_with_string_labels(rng: np.random.Generator) -> None:
    xtr, ytr = _blobs(rng, ["acid", "base", "salt"], 30)
    xte, yte = _blobs(rng, ["acid", "base", "salt"], 10)
    r = score_classification(xtr, ytr, xte, yte)
    assert r["accuracy"] == 1.0 and r["f1"] == 1.0 and r["main_score"] == 1.0
    assert "ap" not in r  # three classes
    assert len(r["scores_per_experiment"]) == 10


def test_binary_adds_ap_and_mean_is_over_experiments(rng: np.random.Generator) -> None:
    xtr, ytr = _blobs(rng, [0, 1], 40, sep=1.0)
    xte, yte = _blobs(rng, [0, 1], 40, sep=1.0)
    r = score_classification(xtr, ytr, xte, yte, n_experiments=4)
    per = r["scores_per_experiment"]
    assert len(per) == 4
    for key in ("accuracy", "f1", "ap", "ap_weighted", "recall_weighted"):
        assert r[key] == pytest.approx(np.mean([p[key] for p in per]))
    # Weighted recall is accuracy.
    assert r["recall_weighted"] == pytest.approx(r["accuracy"])


def test_binary_string_labels_ap_uses_larger_class_as_positive(rng: np.random.Generator) -> None:
    xtr, ytr = _blobs(rng, ["no", "yes"], 20)
    xte, yte = _blobs(rng, ["no", "yes"], 5)
    r = score_classification(xtr, ytr, xte, yte, n_experiments=1)
    assert r["ap"] == 1.0


def test_full_train_trains_once(rng: np.random.Generator) -> None:
    xtr, ytr = _blobs(rng, [0, 1], 20)
    r = score_classification(xtr, ytr, xtr, ytr, full_train=True)
    assert len(r["scores_per_experiment"]) == 1 and r["accuracy"] == 1.0


def test_undersampling_hand_checked() -> None:
    # Two rows per label from a 6-row split: every selection has two of each, in shuffled order.
    labels = np.array([0, 0, 0, 1, 1, 1])
    sel = undersample_indices(labels, 3, 2, 42)
    for rows in sel:
        assert sorted(labels[rows].tolist()) == [0, 0, 1, 1]
    perm = np.arange(6)
    np.random.RandomState(42).shuffle(perm)
    walked = [i for i in perm if True]
    first = [i for i in walked if labels[i] == 0][:2] + [i for i in walked if labels[i] == 1][:2]
    assert sorted(sel[0].tolist()) == sorted(first)


@settings(max_examples=60, deadline=None)
@given(
    labels=st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=60),
    n_experiments=st.integers(1, 4),
    per_label=st.integers(1, 5),
    seed=st.integers(0, 2**31 - 1),
)
def test_undersampling_equals_reference_walk(
    labels: list, n_experiments: int, per_label: int, seed: int
) -> None:
    got = undersample_indices(np.array(labels), n_experiments, per_label, seed)
    want = undersample(labels, n_experiments, per_label, seed)
    assert [g.tolist() for g in got] == want


def test_fbeta_for_document_classification(rng: np.random.Generator) -> None:
    from sklearn.metrics import fbeta_score

    x = rng.standard_normal((80, 6))
    y = np.repeat([0, 1, 2, 3], 20)
    x[np.arange(80), y] += 3.0  # separable enough to be interesting, not perfect
    plain = score_classification(x[:60], y[:60], x[60:], y[60:], full_train=True)
    assert "fbeta" not in plain  # MTEB's keys unchanged by default
    out = score_classification(x[:60], y[:60], x[60:], y[60:], full_train=True, beta=2.0)
    from sklearn.linear_model import LogisticRegression

    pred = LogisticRegression(max_iter=100, random_state=42).fit(x[:60], y[:60]).predict(x[60:])
    assert out["fbeta"] == pytest.approx(fbeta_score(y[60:], pred, beta=2.0, average="macro"))
    assert out["fbeta_micro"] == pytest.approx(fbeta_score(y[60:], pred, beta=2.0, average="micro"))
    assert out["fbeta_weighted"] == pytest.approx(
        fbeta_score(y[60:], pred, beta=2.0, average="weighted")
    )
    with pytest.raises(ValueError, match="beta"):
        score_classification(x[:60], y[:60], x[60:], y[60:], beta=0.0)
