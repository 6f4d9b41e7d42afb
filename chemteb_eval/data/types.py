"""Typed, normalised task inputs: what the loader gives the runner, per task type."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

from chemteb_eval.tasks.kinds import TaskType


def _same_length(**named: list[Any]) -> None:
    lengths = {k: len(v) for k, v in named.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"length mismatch: {lengths}")


@dataclass(frozen=True)
class ClassificationData:
    """Texts and labels of a training split and of one evaluation split."""

    kind: ClassVar[TaskType] = "Classification"

    train_texts: list[str]
    train_labels: list[Any]
    test_texts: list[str]
    test_labels: list[Any]
    # the task's probe options (``Task.probe``: e.g. full_train for document classification)
    probe: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        _same_length(train_texts=self.train_texts, train_labels=self.train_labels)
        _same_length(test_texts=self.test_texts, test_labels=self.test_labels)


@dataclass(frozen=True)
class ClusterSet:
    """One set of texts to cluster, with their true labels."""

    texts: list[str]
    labels: list[Any]

    def __post_init__(self) -> None:
        _same_length(texts=self.texts, labels=self.labels)


@dataclass(frozen=True)
class ClusteringData:
    """The cluster sets of a split (ChemTEB's tasks have exactly one; MTEB averages over sets)."""

    kind: ClassVar[TaskType] = "Clustering"

    sets: tuple[ClusterSet, ...]


@dataclass(frozen=True)
class PairClassificationData:
    """Text pairs with 0/1 labels."""

    kind: ClassVar[TaskType] = "PairClassification"

    sentences1: list[str]
    sentences2: list[str]
    labels: list[int]

    def __post_init__(self) -> None:
        _same_length(sentences1=self.sentences1, sentences2=self.sentences2, labels=self.labels)


@dataclass(frozen=True)
class BitextData:
    """Aligned sources and targets: row i of ``sources`` translates to row i of ``targets``."""

    kind: ClassVar[TaskType] = "BitextMining"

    sources: list[str]
    targets: list[str]

    def __post_init__(self) -> None:
        _same_length(sources=self.sources, targets=self.targets)


@dataclass(frozen=True)
class RetrievalData:
    """A corpus, queries with at least one relevant document, and graded relevance."""

    kind: ClassVar[TaskType] = "Retrieval"

    corpus_ids: list[str]
    corpus_texts: list[str]
    query_ids: list[str]
    query_texts: list[str]
    qrels: Mapping[str, Mapping[str, int]]

    def __post_init__(self) -> None:
        _same_length(corpus_ids=self.corpus_ids, corpus_texts=self.corpus_texts)
        _same_length(query_ids=self.query_ids, query_texts=self.query_texts)


@dataclass(frozen=True)
class StsData:
    """Sentence pairs with gold similarity scores."""

    kind: ClassVar[TaskType] = "STS"

    sentences1: list[str]
    sentences2: list[str]
    scores: list[float]

    def __post_init__(self) -> None:
        _same_length(sentences1=self.sentences1, sentences2=self.sentences2, scores=self.scores)


@dataclass(frozen=True)
class WordPairData:
    """Term pairs (single words or short multi-word terms) with gold similarity scores."""

    kind: ClassVar[TaskType] = "WordSimilarity"

    terms1: list[str]
    terms2: list[str]
    scores: list[float]

    def __post_init__(self) -> None:
        _same_length(terms1=self.terms1, terms2=self.terms2, scores=self.scores)


@dataclass(frozen=True)
class NerData:
    """Tokenised sentences with IOB2 tags: a training split (for the probe) and an evaluation split."""

    kind: ClassVar[TaskType] = "NER"

    train_tokens: list[list[str]]
    train_tags: list[list[str]]
    test_tokens: list[list[str]]
    test_tags: list[list[str]]

    def __post_init__(self) -> None:
        _same_length(train_tokens=self.train_tokens, train_tags=self.train_tags)
        _same_length(test_tokens=self.test_tokens, test_tags=self.test_tags)
        for tokens, tags in zip(
            [*self.train_tokens, *self.test_tokens],
            [*self.train_tags, *self.test_tags],
            strict=True,
        ):
            if len(tokens) != len(tags):
                raise ValueError(
                    f"length mismatch: a sentence has {len(tokens)} tokens and {len(tags)} tags"
                )


SplitData = (
    ClassificationData
    | ClusteringData
    | PairClassificationData
    | BitextData
    | RetrievalData
    | StsData
    | WordPairData
    | NerData
)
#: ``{subset: {split: data}}``
TaskData = dict[str, dict[str, SplitData]]
#: The split data class of each task type (``TaskKind.data_class`` names it).
DATA_CLASSES: Mapping[str, type[SplitData]] = MappingProxyType(
    {
        cls.kind: cls
        for cls in (
            ClassificationData,
            ClusteringData,
            PairClassificationData,
            BitextData,
            RetrievalData,
            StsData,
            WordPairData,
            NerData,
        )
    }
)
