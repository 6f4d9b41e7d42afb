"""Per task type: the texts a split needs embedded, and how it is scored from their embeddings.

One table, ``KIND_RUNS``, keyed by task type; the runner never branches on a type. NER is an
entry like the others: it embeds words in context itself (through the encoder in the context),
so it asks the text cache for nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from chemteb_eval import scoring
from chemteb_eval.data.shared_sets import repeated_pairs
from chemteb_eval.data.types import (
    ClassificationData,
    ClusteringData,
    NerData,
    PairClassificationData,
    SplitData,
    StsData,
    WordPairData,
)
from chemteb_eval.metric_docs import protocol_defaults
from chemteb_eval.models.base import DEFAULT_BATCH_SIZE, Encoder, Role
from chemteb_eval.scoring.classification import undersample_indices
from chemteb_eval.scoring.ner_probe import score_ner_probe
from chemteb_eval.scoring.sts import score_sts
from chemteb_eval.tasks.kinds import KINDS

__all__ = ["KIND_RUNS", "Groups", "KindRun", "ScoreContext", "score_split", "split_texts"]

#: ``{group name: (texts, retrieval role)}``
Groups = dict[str, tuple[list[str], Role | None]]
Embeddings = dict[str, np.ndarray]


@dataclass(frozen=True)
class ScoreContext:
    """What a type that embeds its own inputs (NER's words in context) needs from the run."""

    encoder: Encoder | None = None
    batch_size: int = DEFAULT_BATCH_SIZE
    progress: bool = False
    # the F-beta's beta for the probes (classification adds fbeta keys; NER's overall_f1 is
    # then the F-beta); None: F1 only, as the protocol reports
    beta: float | None = None
    # the task's protocol (tasks.records.PROTOCOLS): the paper's scoring, or MTEB 2.26's
    protocol: str = "paper"
    # a zero row (a compressed variant's vector with no positive component): "error" for the
    # model's own vectors, "zero" (cosine 0 with everything, as MTEB's) for a variant's
    zero_rows: str = "error"


@dataclass(frozen=True)
class KindRun:
    """The runner's two questions to a task type."""

    texts: Callable[[Any], Groups]
    score: Callable[[Any, Embeddings, ScoreContext], dict[str, Any]]
    # False: the type embeds its inputs through the model itself (NER's words in context), so
    # no variant of the model's cached vectors (--dims/--precisions) can score it
    cached: bool = True


def _probe_rows(data: ClassificationData) -> np.ndarray:
    """The training rows the probe's experiments use: only these need embedding (as in MTEB,
    which encodes the union of the undersampled rows, not the whole training split); all of
    them for a task whose probe trains on the full split."""
    options = {**protocol_defaults(scoring.score_classification), **data.probe}
    if options.get("full_train"):
        return np.arange(len(data.train_labels))
    picks = undersample_indices(
        np.asarray(data.train_labels),
        options["n_experiments"],
        options["samples_per_label"],
        options["seed"],
    )
    return np.unique(np.concatenate(picks))


def _classification_texts(data: ClassificationData) -> Groups:
    used = [data.train_texts[i] for i in _probe_rows(data)]
    return {"train": (used, None), "test": (data.test_texts, None)}


def _classification_score(
    data: ClassificationData, emb: Embeddings, context: ScoreContext
) -> dict[str, Any]:
    # A text without a vector (a word model that knows none of its words: NaN row) carries no
    # information: it is a zero row, and n_missing / coverage say how many there were.
    used, test = (
        np.where(np.isnan(emb[g]), 0.0, emb[g]).astype(emb[g].dtype) for g in ("train", "test")
    )
    n_missing = int(
        np.isnan(emb["train"]).any(axis=1).sum() + np.isnan(emb["test"]).any(axis=1).sum()
    )
    # Rows no experiment draws are never read by the probe: zeros keep the row indices (and so
    # the seeded undersampling) of the full training split.
    train = np.zeros((len(data.train_texts), used.shape[1]), dtype=used.dtype)
    train[_probe_rows(data)] = used
    out = scoring.score_classification(
        train,
        data.train_labels,
        test,
        data.test_labels,
        beta=context.beta,
        return_items=True,
        **data.probe,
    )
    # Recorded for word-vector models (those that count out-of-vocabulary words: ``stats``) and
    # whenever a text had no vector; other runs keep MTEB's keys exactly.
    if n_missing or hasattr(context.encoder, "stats"):
        out["n_missing"] = n_missing
        out["coverage"] = 1 - n_missing / (len(used) + len(test))
    if context.beta is not None:
        out["beta"] = context.beta
    return out


def _clustering_score(data: ClusteringData, emb: Embeddings, _: ScoreContext) -> dict[str, Any]:
    per_set = [
        scoring.score_clustering(emb[f"set{i}"], s.labels, return_items=True)
        for i, s in enumerate(data.sets)
    ]
    items = [p.pop("items") for p in per_set]
    out: dict[str, Any] = {k: float(np.mean([p[k] for p in per_set])) for k in per_set[0]}
    out["v_measures"] = [p["v_measure"] for p in per_set]
    if len(items) == 1:  # MTEB averages several sets; one set's items are the task's
        out["items"] = items[0]
    return out


def _pairs(data: PairClassificationData | StsData) -> Groups:
    return {"s1": (data.sentences1, None), "s2": (data.sentences2, None)}


def _sts_score(data: StsData | WordPairData, emb: Embeddings, _: ScoreContext) -> dict[str, Any]:
    # A run never aborts on texts a word model cannot embed: they count as similarity 0, and
    # n_missing / coverage in the result say how many there were.
    return score_sts(data.scores, emb["s1"], emb["s2"], oov_policy="zero", return_items=True)


def _word_pair_score(data: WordPairData, emb: Embeddings, context: ScoreContext) -> dict[str, Any]:
    out = _sts_score(data, emb, context)
    # pairs a release rates twice (UMNSRS: 14, 12, 5, 3) are kept, and counted here
    out["repeated_pairs"] = repeated_pairs(data)
    return out


def _ner_score(data: NerData, _: Embeddings, context: ScoreContext) -> dict[str, Any]:
    from chemteb_eval.models.word_embeddings import word_embeddings

    if context.encoder is None:
        raise ValueError("context: NER embeds words in context and needs the run's encoder.")
    train, test = (
        word_embeddings(
            context.encoder, tokens, batch_size=context.batch_size, progress=context.progress
        )
        for tokens in (data.train_tokens, data.test_tokens)
    )
    beta = 1.0 if context.beta is None else context.beta
    out = score_ner_probe(train, data.train_tags, test, data.test_tags, beta=beta)
    out["beta"] = beta  # overall_f1 and each type's f1 are this F-beta (seqeval's keys)
    # A word without a vector (out of a word model's vocabulary, or cut off by a contextual
    # model's truncation) is a zero row; coverage is the share of words with one.
    rows = [sentence for sentence in (*train, *test) if len(sentence)]
    n_words = sum(len(sentence) for sentence in rows)
    n_missing = sum(int((~sentence.any(axis=1)).sum()) for sentence in rows)
    out["n_missing"] = n_missing
    out["coverage"] = 1 - n_missing / n_words if n_words else 1.0
    return out


KIND_RUNS: Mapping[str, KindRun] = MappingProxyType(
    {
        "Classification": KindRun(_classification_texts, _classification_score),
        "Clustering": KindRun(
            lambda d: {f"set{i}": (s.texts, None) for i, s in enumerate(d.sets)},
            _clustering_score,
        ),
        "PairClassification": KindRun(
            _pairs,
            lambda d, e, c: scoring.score_pair_classification(
                e["s1"],
                e["s2"],
                d.labels,
                return_items=True,
                skip_tied_thresholds=c.protocol == "mteb2",
                zero_rows=c.zero_rows,
            ),
        ),
        "BitextMining": KindRun(
            lambda d: {"src": (d.sources, None), "tgt": (d.targets, None)},
            lambda d, e, c: scoring.score_bitext_mining(
                e["src"], e["tgt"], return_items=True, zero_rows=c.zero_rows
            ),
        ),
        "Retrieval": KindRun(
            lambda d: {
                "queries": (d.query_texts, "query"),
                "corpus": (d.corpus_texts, "document"),
            },
            lambda d, e, c: scoring.score_retrieval(
                e["queries"],
                e["corpus"],
                d.query_ids,
                d.corpus_ids,
                d.qrels,
                return_items=True,
                no_relevant="zero" if c.protocol == "mteb2" else "skip",
                zero_rows=c.zero_rows,
            ),
        ),
        "STS": KindRun(_pairs, _sts_score),
        "WordSimilarity": KindRun(
            lambda d: {"s1": (d.terms1, None), "s2": (d.terms2, None)}, _word_pair_score
        ),
        # words in context: embedded by the probe, not through the text cache
        "NER": KindRun(lambda d: {}, _ner_score, cached=False),
    }
)
assert set(KIND_RUNS) == set(KINDS), "every task type needs a runner entry"


def split_texts(data: SplitData) -> Groups:
    """The texts a split needs embedded, by group name, with their retrieval role."""
    return KIND_RUNS[data.kind].texts(data)


def score_split(
    data: SplitData, emb: Embeddings, context: ScoreContext | None = None
) -> dict[str, Any]:
    """The split's scores (MTEB's keys) from the embeddings of its groups, with ``items`` (the
    per-item evidence a bootstrap resamples) where the type has them."""
    return KIND_RUNS[data.kind].score(data, emb, context or ScoreContext())
