"""The NER probe: a logistic-regression tagger on frozen word embeddings, scored by entity F-beta.

The extrinsic test of an embedding model for chemical NER: how well can a linear classifier read
entity tags off its word vectors? Each word is one example (its tag as the class); predictions
are decoded by ``score_ner`` (conlleval chunking by default).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from .ner import score_ner

__all__ = ["score_ner_probe"]


def _stack(
    name: str, embeddings: Sequence[Any], tags: Sequence[Sequence[str]]
) -> tuple[np.ndarray, list[str]]:
    if len(embeddings) != len(tags):
        raise ValueError(
            f"{name}: {len(embeddings)} embedded sentences for {len(tags)} tag sequences."
        )
    arrays = []
    for n, (emb, sent) in enumerate(zip(embeddings, tags, strict=True)):
        arr = np.asarray(emb, dtype=np.float64)
        if arr.ndim != 2 or arr.shape[0] != len(sent):
            raise ValueError(
                f"{name}: sentence {n} has {arr.shape[0] if arr.ndim else 0} word vectors for {len(sent)} tags."
            )
        arrays.append(arr)
    stacked = np.vstack(arrays) if arrays else np.zeros((0, 0))
    if not np.isfinite(stacked).all():
        raise ValueError(
            f"{name}: word vectors contain NaN or inf; give out-of-vocabulary words zeros."
        )
    return stacked, [t for sent in tags for t in sent]


def score_ner_probe(
    train_embeddings: Sequence[Any],
    train_tags: Sequence[Sequence[str]],
    test_embeddings: Sequence[Any],
    test_tags: Sequence[Sequence[str]],
    *,
    beta: float = 1.0,
    mode: str | None = None,
    max_iter: int = 200,
    C: float = 1.0,
    seed: int = 42,
) -> dict[str, Any]:
    """Train a tagger on the training words, tag the test words, score the entities.

    Args:
        train_embeddings: one (n_words, dim) array per training sentence.
        train_tags: their tags.
        test_embeddings: one (n_words, dim) array per test sentence.
        test_tags: their gold tags.
        beta: the F-beta's beta.
        mode: ``None`` (conlleval) or ``"strict"`` (IOB2).
        max_iter: logistic-regression iterations.
        C: inverse regularisation strength.
        seed: the solver's random state.

    Returns:
        ``score_ner``'s keys for the predicted tags, plus ``n_train_words``.
    """
    x_train, y_train = _stack("train_embeddings", train_embeddings, train_tags)
    x_test, _ = _stack("test_embeddings", test_embeddings, test_tags)
    if len(set(y_train)) < 2:
        raise ValueError(
            "train_tags: only one tag in the training data; the probe needs two or more."
        )
    if x_train.shape[1] != x_test.shape[1]:
        raise ValueError(
            f"test_embeddings: dimension {x_test.shape[1]}, training has {x_train.shape[1]}."
        )
    probe = LogisticRegression(max_iter=max_iter, C=C, random_state=seed)
    with warnings.catch_warnings():
        # max_iter is the protocol: on word vectors with large, unscaled values (Word2Vec,
        # FastText) lbfgs stops there before converging, which is expected, not an error.
        warnings.simplefilter("ignore", ConvergenceWarning)
        probe.fit(x_train, y_train)
    flat = list(probe.predict(x_test)) if len(x_test) else []
    predicted, pos = [], 0
    for sent in test_tags:
        predicted.append([str(t) for t in flat[pos : pos + len(sent)]])
        pos += len(sent)
    out = score_ner(predicted, test_tags, beta=beta, mode=mode)
    out["n_train_words"] = len(y_train)
    return out
