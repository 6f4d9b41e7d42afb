"""Can a task's data be trusted (issue 48)? Counts of what commonly spoils a benchmark, over the
texts the task scores (columns mapped, prompts not added): the same text twice in a split, a
text carrying two labels, texts shared between splits, one molecule written as two SMILES; for
retrieval, duplicate documents and queries and the judgements that point at a duplicate.

One table, ``ROWS``, keyed by the split data's type, says what a row is for each type: its
text and its label (a pair's text is both sides, as a tuple; a pair's label, its gold label or
score), and which parts are a task's train split (one for every scored split) or a retrieval
corpus (shared between splits by design).
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from .chemistry import canonical_smiles, is_cas, is_formula, rdkit_available
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

__all__ = ["ROWS", "UNAVAILABLE", "Part", "data_quality", "sides", "split_quality"]

UNAVAILABLE = "unavailable (pip install 'chemteb-eval[chem]' for RDKit)"

# A row's text (a pair's is its two sides, a tuple: no text can collide with a pair) and label.
Text = str | tuple[str, str]
Row = tuple[Text, Hashable | None]


@dataclass(frozen=True)
class Part:
    """The rows of one split as the quality counts see them.

    ``shared``: the same rows for every scored split (a classification task's ``train``):
    counted once per subset. ``corpus``: a retrieval split's documents, shared between splits
    and with its queries by design: their overlaps are reported, never warned about.
    ``extra``: counts only its type has (retrieval's ``judgements_on_duplicates``).
    """

    name: str
    rows: list[Row]
    shared: bool = False
    corpus: bool = False
    extra: Mapping[str, int] = field(default_factory=dict)  # counts of its own type's


def sides(text: Text) -> tuple[str, ...]:
    """A row's texts: a pair's two sides, else the text itself."""
    return text if isinstance(text, tuple) else (text,)


def _label(value: Any) -> Hashable:
    return value if isinstance(value, Hashable) else repr(value)


def _train(split: str, texts: Sequence[str], labels: Sequence[Any]) -> list[Part]:
    """A task's train split beside the scored ``split`` (none when it is the scored split)."""
    if split == "train":
        return []
    rows = [(t, _label(y)) for t, y in zip(texts, labels, strict=True)]
    return [Part("train", list(rows), shared=True)]


def _classification(data: ClassificationData, split: str) -> list[Part]:
    test = [(t, _label(y)) for t, y in zip(data.test_texts, data.test_labels, strict=True)]
    return [*_train(split, data.train_texts, data.train_labels), Part(split, list(test))]


def _clustering(data: ClusteringData, split: str) -> list[Part]:
    rows = [(t, _label(y)) for s in data.sets for t, y in zip(s.texts, s.labels, strict=True)]
    return [Part(split, list(rows))]


def _pairs(
    split: str, first: Sequence[str], second: Sequence[str], labels: Sequence[Any]
) -> list[Part]:
    rows = [((a, b), _label(y)) for a, b, y in zip(first, second, labels, strict=True)]
    return [Part(split, list(rows))]


def _ner(data: NerData, split: str) -> list[Part]:
    def rows(tokens: list[list[str]], tags: list[list[str]]) -> list[Row]:
        return [(" ".join(s), tuple(t)) for s, t in zip(tokens, tags, strict=True)]

    test = rows(data.test_tokens, data.test_tags)
    if split == "train":
        return [Part(split, test)]
    return [Part("train", rows(data.train_tokens, data.train_tags), shared=True), Part(split, test)]


def _retrieval(data: RetrievalData, split: str) -> list[Part]:
    return [
        Part(
            f"{split} documents",
            [(t, None) for t in data.corpus_texts],
            corpus=True,
            extra=_retrieval_extra(data),
        ),
        Part(f"{split} queries", [(t, None) for t in data.query_texts]),
    ]


#: Per split data type: ``parts(data, split name) -> [Part]``.
ROWS: Mapping[type, Callable[[Any, str], list[Part]]] = MappingProxyType(
    {
        ClassificationData: _classification,
        ClusteringData: _clustering,
        PairClassificationData: lambda d, s: _pairs(s, d.sentences1, d.sentences2, d.labels),
        BitextData: lambda d, s: _pairs(s, d.sources, d.targets, [None] * len(d.sources)),
        RetrievalData: _retrieval,
        StsData: lambda d, s: _pairs(s, d.sentences1, d.sentences2, d.scores),
        WordPairData: lambda d, s: _pairs(s, d.terms1, d.terms2, d.scores),
        NerData: _ner,
    }
)


def split_quality(rows: Sequence[Row]) -> dict[str, int]:
    """``rows``, ``duplicate_texts`` (rows whose text equals an earlier row's) and
    ``conflicting_labels`` (distinct texts carrying more than one label; unlabelled rows
    carry none)."""
    labels: dict[Text, set[Hashable]] = defaultdict(set)
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


def task_parts(data: Mapping[str, Mapping[str, SplitData]]) -> list[tuple[str, Part]]:
    """Each subset's parts (``ROWS``), a shared part once per subset; subsets other than
    ``default`` prefix their parts' names."""
    out: list[tuple[str, Part]] = []
    for subset, splits in data.items():
        taken: set[str] = set()
        for split, split_data in splits.items():
            for part in ROWS[type(split_data)](split_data, split):
                if part.shared and part.name in taken:
                    continue
                taken.add(part.name)
                name = part.name if subset == "default" else f"{subset}/{part.name}"
                out.append((subset, replace(part, name=name)))
    return out


def data_quality(
    data: Mapping[str, Mapping[str, SplitData]], *, molecules: bool = True
) -> dict[str, Any]:
    """The data-quality record of a task's data (``{subset: {split: data}}``): per split its
    counts (``split_quality``); per pair of splits the distinct texts both hold (``overlap``),
    and those of them that are faults (``leaks``: the pairs of one subset neither of which is a
    retrieval corpus); the canonical molecules written in more than one way across the task
    (RDKit; ``UNAVAILABLE`` without it; not computed with ``molecules=False``)."""
    parts = task_parts(data)
    by_split: dict[str, list[Row]] = {}
    for _, part in parts:
        by_split.setdefault(part.name, []).extend(part.rows)
    splits_out = {name: split_quality(rows) for name, rows in by_split.items()}
    for _, part in parts:
        splits_out[part.name].update(part.extra)
    texts = {name: {t for t, _ in rows} for name, rows in by_split.items()}
    overlap = {f"{a}&{b}": len(texts[a] & texts[b]) for a, b in itertools.combinations(texts, 2)}
    kinds = {part.name: (subset, part.corpus) for subset, part in parts}
    leaks = {
        f"{a}&{b}": overlap[f"{a}&{b}"]
        for a, b in itertools.combinations(texts, 2)
        if kinds[a][0] == kinds[b][0] and not kinds[a][1] and not kinds[b][1]
    }
    out: dict[str, Any] = {"splits": splits_out, "overlap": overlap, "leaks": leaks}
    if molecules:
        everything = {side for found in texts.values() for t in found for side in sides(t)}
        out["same_molecule"] = _same_molecule(everything)
    return out


def _same_molecule(texts: set[str]) -> int | str:
    """Canonical molecules (RDKit's canonical SMILES) that the task's SMILES-class texts write
    in more than one way (each side of a pair is a text of its own). Each text is
    canonicalised once (the SMILES test is that it canonicalises)."""
    if not rdkit_available():
        return UNAVAILABLE
    spellings: dict[str, set[str]] = defaultdict(set)
    for text in texts:
        if is_cas(text) or is_formula(text):
            continue
        canonical = canonical_smiles(text)
        if canonical is not None:
            spellings[canonical].add(text)
    return sum(1 for found in spellings.values() if len(found) > 1)
