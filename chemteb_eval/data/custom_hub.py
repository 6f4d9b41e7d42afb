"""A task file's data written back in the Hub layout its registered tasks use
(``publish-dataset``): one entry per type a task file may declare."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from chemteb_eval.tasks import Task

from .types import ClassificationData, ClusteringData, RetrievalData, SplitData, TaskData

__all__ = ["HUB_CONFIGS", "Configs", "hub_configs"]

Configs = dict[str, dict[str, dict[str, list[Any]]]]  # config -> split -> column -> values


def _classification_configs(task: Task, data: Mapping[str, SplitData]) -> Configs:
    out: dict[str, dict[str, list[Any]]] = {}
    for split, d in data.items():
        assert isinstance(d, ClassificationData) and task.train_split is not None
        out[split] = {"text": list(d.test_texts), "label": list(d.test_labels)}
        out[task.train_split] = {"text": list(d.train_texts), "label": list(d.train_labels)}
    return {"default": out}


def _clustering_configs(task: Task, data: Mapping[str, SplitData]) -> Configs:
    out: dict[str, dict[str, list[Any]]] = {}
    for split, d in data.items():
        assert isinstance(d, ClusteringData)
        texts = [t for s in d.sets for t in s.texts]
        out[split] = {"sentences": texts, "labels": [x for s in d.sets for x in s.labels]}
    return {"default": out}


def _columns(*pairs: tuple[str, str]) -> Callable[[Task, Mapping[str, SplitData]], Configs]:
    """A type whose split data is parallel lists: each (Hub column, attribute) pair a column."""

    def configs(task: Task, data: Mapping[str, SplitData]) -> Configs:
        return {
            "default": {
                split: {column: list(getattr(d, attr)) for column, attr in pairs}
                for split, d in data.items()
            }
        }

    return configs


def _retrieval_configs(task: Task, data: Mapping[str, SplitData]) -> Configs:
    corpus: dict[str, str] = {}
    queries: dict[str, str] = {}
    qrels: dict[str, dict[str, list[Any]]] = {}
    for split, d in data.items():
        assert isinstance(d, RetrievalData)
        corpus.update(zip(d.corpus_ids, d.corpus_texts, strict=True))
        queries.update(zip(d.query_ids, d.query_texts, strict=True))
        pairs = [(q, doc, g) for q, docs in d.qrels.items() for doc, g in docs.items()]
        qrels[split] = {
            "query-id": [q for q, _, _ in pairs],
            "corpus-id": [doc for _, doc, _ in pairs],
            "score": [g for _, _, g in pairs],
        }
    return {
        "corpus": {"corpus": {"_id": list(corpus), "text": list(corpus.values())}},
        "queries": {"queries": {"_id": list(queries), "text": list(queries.values())}},
        "default": qrels,
    }


#: Each type's data written back in the Hub layout its registered tasks use (and its
#: ``HUB_LOADERS`` entry reads): one entry per type a task file may declare.
HUB_CONFIGS: Mapping[str, Callable[[Task, Mapping[str, SplitData]], Configs]] = {
    "Classification": _classification_configs,
    "Clustering": _clustering_configs,
    "PairClassification": _columns(
        ("sentence1", "sentences1"), ("sentence2", "sentences2"), ("labels", "labels")
    ),
    "BitextMining": _columns(("sentence1", "sources"), ("sentence2", "targets")),
    "Retrieval": _retrieval_configs,
    "STS": _columns(("sentence1", "sentences1"), ("sentence2", "sentences2"), ("score", "scores")),
}


def hub_configs(task: Task, data: TaskData) -> Configs:
    """A task's data (one subset) as ``write_hub_dataset`` takes it."""
    return HUB_CONFIGS[task.type](task, data["default"])
