"""Can a task's data be trusted (issue 48)? Counts of what commonly spoils a benchmark, over the
texts the task scores (columns mapped, prompts not added): the same text twice in a split, a
text carrying two labels, texts shared between splits, one molecule written as two SMILES; for
retrieval, duplicate documents and queries and the judgements that point at a duplicate.

One table, ``ROWS``, keyed by the split data's type, says what a row is for each type: its
text and its label (a pair's text is both sides; a pair's label, its gold label or score).
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from .chemistry import canonical_smiles, classify, rdkit_available
from .types import (
    BitextData,
    ClassificationData,
    ClusteringData,
    NerData,
    PairClassificationData,
    RetrievalData,
    SplitData,
    StsData,
    WordPairData,
)

__all__ = ["PAIR", "ROWS", "UNAVAILABLE", "data_quality", "split_quality"]

UNAVAILABLE = "unavailable (pip install 'chemteb-eval[chem]' for RDKit)"
PAIR = "\u241f"  # joins a pair's two sides into one text (a unit separator no text holds)

Row = tuple[str, Hashable | None]
Rows = dict[str, list[Row]]


def _label(value: Any) -> Hashable:
    return value if isinstance(value, Hashable) else repr(value)


def _classification(data: ClassificationData, split: str) -> Rows:
    return {
        "train": [(t, _label(y)) for t, y in zip(data.train_texts, data.train_labels, strict=True)],
        split: [(t, _label(y)) for t, y in zip(data.test_texts, data.test_labels, strict=True)],
    }


def _clustering(data: ClusteringData, split: str) -> Rows:
    rows = [(t, _label(y)) for s in data.sets for t, y in zip(s.texts, s.labels, strict=True)]
    return {split: rows}


def _pairs(first: Sequence[str], second: Sequence[str], labels: Sequence[Any]) -> list[Row]:
    return [(f"{a}{PAIR}{b}", _label(y)) for a, b, y in zip(first, second, labels, strict=True)]


def _ner(data: NerData, split: str) -> Rows:
    def rows(tokens: list[list[str]], tags: list[list[str]]) -> list[Row]:
        return [(" ".join(s), tuple(t)) for s, t in zip(tokens, tags, strict=True)]

    return {
        "train": rows(data.train_tokens, data.train_tags),
        split: rows(data.test_tokens, data.test_tags),
    }


def _retrieval(data: RetrievalData, split: str) -> Rows:
    return {
        f"{split} documents": [(t, None) for t in data.corpus_texts],
        f"{split} queries": [(t, None) for t in data.query_texts],
    }


#: Per split data type: ``rows(data, split name) -> {split: [(text, label)]}``.
ROWS: Mapping[type, Callable[[Any, str], Rows]] = MappingProxyType(
    {
        ClassificationData: _classification,
        ClusteringData: _clustering,
        PairClassificationData: lambda d, s: {s: _pairs(d.sentences1, d.sentences2, d.labels)},
        BitextData: lambda d, s: {s: _pairs(d.sources, d.targets, [None] * len(d.sources))},
        RetrievalData: _retrieval,
        StsData: lambda d, s: {s: _pairs(d.sentences1, d.sentences2, d.scores)},
        WordPairData: lambda d, s: {s: _pairs(d.terms1, d.terms2, d.scores)},
        NerData: _ner,
    }
)


def split_quality(rows: Sequence[Row]) -> dict[str, int]:
    """``rows``, ``duplicate_texts`` (rows whose text equals an earlier row's) and
    ``conflicting_labels`` (distinct texts carrying more than one label; unlabelled rows
    carry none)."""
    labels: dict[str, set[Hashable]] = defaultdict(set)
    for text, label in rows:
        if label is not None:
            labels[text].add(label)
    counts = Counter(text for text, _ in rows)
    return {
        "rows": len(rows),
        "duplicate_texts": sum(n - 1 for n in counts.values()),
        "conflicting_labels": sum(1 for found in labels.values() if len(found) > 1),
    }


def _retrieval_extra(data: RetrievalData) -> dict[str, int]:
    """Judgements that point at a duplicate document (a document whose text another document
    also has: retrieving either is the same text, judged apart)."""
    first: dict[str, str] = {}
    duplicates = set()
    for doc_id, text in zip(data.corpus_ids, data.corpus_texts, strict=True):
        if text in first:
            duplicates.update({doc_id, first[text]})
        else:
            first[text] = doc_id
    judged = sum(1 for docs in data.qrels.values() for d in docs if d in duplicates)
    return {"judgements_on_duplicates": judged}


def data_quality(data: Mapping[str, Mapping[str, SplitData]]) -> dict[str, Any]:
    """The data-quality record of a task's data (``{subset: {split: data}}``): per split its
    counts (``split_quality``), per pair of splits the distinct texts both hold, and the
    canonical molecules written in more than one way across the task (RDKit; ``UNAVAILABLE``
    without it). Subsets other than ``default`` prefix their splits' names."""
    by_split: dict[str, list[Row]] = {}
    extra: dict[str, dict[str, int]] = {}
    for subset, splits in data.items():
        for split, split_data in splits.items():
            name = split if subset == "default" else f"{subset}/{split}"
            for part, rows in ROWS[type(split_data)](split_data, name).items():
                by_split.setdefault(part, []).extend(rows)
            if isinstance(split_data, RetrievalData):
                extra[name] = _retrieval_extra(split_data)
    splits_out = {name: split_quality(rows) for name, rows in by_split.items()}
    for name, more in extra.items():
        splits_out.setdefault(f"{name} documents", {}).update(more)
    texts = {name: {t for t, _ in rows} for name, rows in by_split.items()}
    overlap = {f"{a}&{b}": len(texts[a] & texts[b]) for a, b in itertools.combinations(texts, 2)}
    return {
        "splits": splits_out,
        "overlap": overlap,
        "same_molecule": _same_molecule(set().union(*texts.values()) if texts else set()),
    }


def _same_molecule(texts: set[str]) -> int | str:
    """Canonical molecules (RDKit's canonical SMILES) that the task's SMILES-class texts write
    in more than one way (each side of a pair is a text of its own)."""
    if not rdkit_available():
        return UNAVAILABLE
    spellings: dict[str, set[str]] = defaultdict(set)
    for text in {side for t in texts for side in t.split(PAIR)}:
        if classify(text) == "smiles":
            canonical = canonical_smiles(text)
            if canonical is not None:
                spellings[canonical].add(text)
    return sum(1 for found in spellings.values() if len(found) > 1)
