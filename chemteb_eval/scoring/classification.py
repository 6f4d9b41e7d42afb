"""Classification: a logistic-regression probe on frozen embeddings (MTEB's protocol)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray
from sklearn.exceptions import ConvergenceWarning, UndefinedMetricWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import (
    accuracy_score,
    average_precision_score,
    f1_score,
    fbeta_score,
    precision_score,
    recall_score,
)

from . import _items
from ._validation import (
    as_embeddings,
    as_labels,
    check_beta,
    check_positive_int,
    check_same_length,
)

__all__ = ["score_classification", "undersample_indices"]


def undersample_indices(
    labels: NDArray[Any], n_experiments: int, samples_per_label: int, seed: int
) -> list[NDArray[np.int64]]:
    """The training rows each experiment uses, exactly as MTEB draws them.

    One index list is kept across experiments and shuffled in place before each experiment by a
    fresh ``np.random.RandomState(seed)`` (so experiment ``i`` sees the permutation applied
    ``i + 1`` times); walking it, the first ``samples_per_label`` rows of each label are kept.

    Args:
        labels: the training labels.
        n_experiments: how many experiments.
        samples_per_label: rows kept per label.
        seed: the seed of every shuffle.

    Returns:
        One array of row indices per experiment, in walk order (the order the probe sees them).
    """
    idxs = np.arange(len(labels))
    _, codes = np.unique(labels, return_inverse=True)
    selections = []
    for _ in range(n_experiments):
        # A 1-D array shuffles with the same draws as the Python list MTEB shuffles.
        np.random.RandomState(seed).shuffle(idxs)
        walked = codes[idxs]
        # Rank of each walked row among earlier rows of its label: a stable sort by label keeps
        # walk order inside each label, so the rank is the position minus the label's start.
        order = np.argsort(walked, kind="stable")
        sorted_codes = walked[order]
        starts = np.searchsorted(sorted_codes, sorted_codes, side="left")
        rank = np.empty(len(idxs), dtype=np.int64)
        rank[order] = np.arange(len(idxs)) - starts
        selections.append(idxs[rank < samples_per_label].copy())
    return selections


def _binary_ap(y_test: NDArray[Any], y_pred: NDArray[Any]) -> tuple[float, float]:
    classes = np.unique(y_test)
    if y_test.dtype.kind in "iu" and set(classes.tolist()) in ({0, 1}, {-1, 1}):
        # MTEB passes the hard labels to average_precision_score as scores; keep that exactly.
        y_true, y_score = y_test, y_pred
    else:
        # sklearn needs {0,1} or {-1,1} here; like its LabelBinarizer, the larger class is positive.
        positive = classes[1]
        y_true = (y_test == positive).astype(np.int64)
        y_score = (y_pred == positive).astype(np.int64)
    ap = average_precision_score(y_true, y_score, average="macro")
    ap_weighted = average_precision_score(y_true, y_score, average="weighted")
    return float(ap), float(ap_weighted)


_FBETA_AS_RECALL = 1e150


def _experiment_scores(
    y_test: NDArray[Any], y_pred: NDArray[Any], beta: float | None = None
) -> dict[str, float]:
    with warnings.catch_warnings():
        # Classes never predicted get precision 0, as in the reference; the warning is noise here.
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        scores = {
            "accuracy": float(accuracy_score(y_test, y_pred)),
            "f1": float(f1_score(y_test, y_pred, average="macro")),
            "f1_weighted": float(f1_score(y_test, y_pred, average="weighted")),
            "precision": float(precision_score(y_test, y_pred, average="macro")),
            "precision_weighted": float(precision_score(y_test, y_pred, average="weighted")),
            "recall": float(recall_score(y_test, y_pred, average="macro")),
            "recall_weighted": float(recall_score(y_test, y_pred, average="weighted")),
        }
        if beta is not None:
            for average in ("macro", "micro", "weighted"):
                key = "fbeta" if average == "macro" else f"fbeta_{average}"
                if beta > _FBETA_AS_RECALL:
                    # sklearn squares beta: OverflowError past 1.3e154, inf/inf = NaN at inf.
                    # F-beta's limit there is recall, and at 1e150 it differs by < 1e-290.
                    value = recall_score(y_test, y_pred, average=average)
                else:
                    value = fbeta_score(y_test, y_pred, beta=beta, average=average)
                scores[key] = float(value)
    if len(np.unique(y_test)) == 2:
        scores["ap"], scores["ap_weighted"] = _binary_ap(y_test, y_pred)
    return scores


def score_classification(
    train_embeddings: Any,
    train_labels: Any,
    test_embeddings: Any,
    test_labels: Any,
    *,
    n_experiments: int = 10,
    samples_per_label: int = 8,
    seed: int = 42,
    max_iter: int = 100,
    full_train: bool = False,
    beta: float | None = None,
    return_items: bool = False,
) -> dict[str, Any]:
    """Score embeddings with MTEB's logistic-regression probe.

    For each of ``n_experiments`` experiments, ``samples_per_label`` training rows per label are
    drawn (see :func:`undersample_indices`), ``LogisticRegression(max_iter, random_state=seed)``
    is fitted on them and the whole test split is predicted. Scores are averaged over experiments.

    Args:
        train_embeddings: (n_train, d) embeddings of the training texts.
        train_labels: n_train labels (ints or strings).
        test_embeddings: (n_test, d) embeddings of the test texts.
        test_labels: n_test labels.
        n_experiments: number of undersampling experiments.
        samples_per_label: training rows kept per label in each experiment.
        seed: seed of the undersampling shuffles and of the classifier.
        max_iter: the classifier's iteration limit.
        full_train: train once on all training rows instead of undersampling.
        beta: also report the F-beta (``fbeta`` macro, ``fbeta_micro``, ``fbeta_weighted``) for
            document classification with another beta; ``None`` (default) adds nothing.
        return_items: also return ``items``, the per-item evidence a bootstrap resamples
            (``scoring.uncertainty``, ``chemteb compare``); not part of the protocol.

    Returns:
        accuracy, f1, precision, recall (macro), their ``_weighted`` variants, ``ap`` and
        ``ap_weighted`` when the test split has exactly two classes, ``scores_per_experiment``
        and ``main_score`` (accuracy).
    """
    x_train = as_embeddings("train_embeddings", train_embeddings)
    x_test = as_embeddings("test_embeddings", test_embeddings, dim=x_train.shape[1])
    y_train = as_labels("train_labels", train_labels)
    y_test = as_labels("test_labels", test_labels)
    check_same_length(train_embeddings=x_train, train_labels=y_train)
    check_same_length(test_embeddings=x_test, test_labels=y_test)
    if (y_train.dtype.kind == "U") != (y_test.dtype.kind == "U"):
        raise ValueError(
            "test_labels: must be the same kind as train_labels (both ints or both strings), got "
            f"{y_test.dtype} and {y_train.dtype}."
        )
    if len(np.unique(y_train)) < 2:
        raise ValueError(
            "train_labels: the probe needs at least two classes, got only "
            f"{np.unique(y_train).tolist()!r}."
        )
    n_experiments = check_positive_int("n_experiments", n_experiments)
    samples_per_label = check_positive_int("samples_per_label", samples_per_label)
    max_iter = check_positive_int("max_iter", max_iter)
    if beta is not None:
        beta = check_beta(beta)

    if full_train:
        selections = [np.arange(len(y_train))]
    else:
        selections = undersample_indices(y_train, n_experiments, samples_per_label, seed)

    per_experiment = []
    predictions = []
    for rows in selections:
        clf = LogisticRegression(max_iter=max_iter, random_state=seed)
        with warnings.catch_warnings():
            # 100 lbfgs iterations is the protocol; not converging is expected and not an error.
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(x_train[rows], y_train[rows])
        predictions.append(clf.predict(x_test))
        per_experiment.append(_experiment_scores(y_test, predictions[-1], beta))

    result: dict[str, Any] = {
        key: float(np.mean([s[key] for s in per_experiment])) for key in per_experiment[0]
    }
    result["scores_per_experiment"] = per_experiment
    result["main_score"] = result["accuracy"]
    if return_items:  # each experiment's prediction of each test text
        result["items"] = {"y_true": y_test, "y_pred": np.stack(predictions)}
    return result


@dataclass(frozen=True)
class ClassificationItems(_items.Items):
    """The probe's per-item evidence: each test text's gold label and, per experiment (row),
    its predicted label. Accuracy is a mean over test texts; F1 is recomputed per experiment
    and averaged, as the score is."""

    task_type: ClassVar[str] = "Classification"
    y_true: NDArray[Any]
    y_pred: NDArray[Any]

    @classmethod
    def check(cls, items: Mapping[str, Any], key: str = "") -> ClassificationItems:
        """The checked items; ``ValueError`` naming the array and what is wrong with it."""
        y_true, y_pred = _items.labels(items, "y_true"), _items.labels(items, "y_pred", 2)
        if y_pred.shape[0] < 1:
            raise ValueError("'y_pred' has no experiments")
        return cls(_items.same_length(y_true, y_pred), y_true, y_pred)

    def statistic(self, key: str) -> _items.Statistic:
        y_true, y_pred = self.y_true, self.y_pred

        def classification(idx: NDArray[np.int64]) -> float:
            if key == "accuracy":
                return float((y_pred[:, idx] == y_true[idx]).mean())
            average = "weighted" if key == "f1_weighted" else "macro"
            return float(np.mean([f1_score(y_true[idx], p[idx], average=average) for p in y_pred]))

        return classification


def example_inputs(rng: np.random.Generator) -> tuple[dict[str, Any], dict[str, Any]]:
    """A small random input of the classification metric's Space: (the arrays of an
    ``.npz`` upload, named after ``compute``'s arguments; the other arguments, JSON-able). The
    ``METRICS`` row names it; the widget offers it as the example upload."""
    return {
        "train_embeddings": _emb(rng, 64),
        "train_labels": rng.integers(0, 2, 64),
        "test_embeddings": _emb(rng, 32),
        "references": rng.integers(0, 2, 32),
    }, {"n_experiments": 10}


def _emb(rng: np.random.Generator, n: int) -> Any:
    return rng.standard_normal((n, 16)).astype(np.float32)
