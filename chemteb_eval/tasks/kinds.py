"""One record per task type: every fact about a type that code outside its scoring function needs.

Results, the leaderboard, the CLI, the model-card code and the runner read these records; none of
them keeps its own table of types, and no code compares a type's name (``tests/test_structure.py``
forbids it). Adding a task type is one ``TaskKind`` here, one data class (``data/types.py``), one
``HUB_LOADERS`` entry (``data/loader.py``), one scoring function with its items record beside it
(``scoring/<type>.py``) and its runner entry (``runner/kinds.py``): see ``docs/extending.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

__all__ = ["CHEMTEB_TYPES", "KINDS", "RANKED_TYPES", "TASK_TYPES", "TaskKind", "TaskType", "kind"]

TaskType = Literal[
    "Classification",
    "Clustering",
    "PairClassification",
    "BitextMining",
    "Retrieval",
    "STS",
    "NER",
    "WordSimilarity",
]


@dataclass(frozen=True)
class TaskKind:
    """The facts of one task type.

    Args:
        name: MTEB's type name (``PairClassification``).
        label: how tables and tabs name it (``Pair classification``).
        short: a column header of at most 6 characters (``chemteb rank``).
        hf_task: the Hub task category of its model-card entries (MTEB's map).
        main_scores: the keys its scoring function reports that may rank models on a task.
        paper_metric: the metric the ChemTEB paper ranks this type by (``None``: not in ChemTEB).
        detail_keys: the scores shown beside the main score (tables, model cards), in order.
        data_class: the name of its split data class in ``chemteb_eval.data.types``.
        chemteb: one of ChemTEB's five types (the leaderboard's tabs).
        mteb_metric: MTEB's main score for this type (its leaderboard's metric: the axes of the
            ChemTEB-vs-MTEB comparison); ``None`` where it has none.
        in_mteb_eng_v1: MTEB(eng, v1) has tasks of this type; with ``chemteb``, the type is an
            axis of the ChemTEB-vs-MTEB comparison (``results.mteb_scores.DOMAIN_TYPES``).
        mean_of_items: the main scores that are means over items (queries, test texts), so
            that a bootstrap over items recomputes them with a gather and a mean (affordable
            for every model on every resample); threshold sweeps, weighted F1 and k-means
            metrics are not.
        needs_train: its tasks name a train split (the probe's training data).
        probe_options: its tasks may set probe options (``Task.probe``).
        file_columns: the columns of a user's file of rows of this type (``--task-file``),
            canonical names first; empty: the type is not loaded from a user's files.
            Retrieval's are the corpus and query files' (BEIR's ``_id`` or ``id``, ``text``).
        file_layout: how a user's files of this type are laid out: ``rows`` (one file of rows
            per split) or ``corpus`` (a corpus, queries and judgements: BEIR's layout).
        ranks_documents: its tasks rank a corpus for each query, so a search model without
            vectors (BM25) scores them and two rankings of them can be fused (a hybrid).
    """

    name: TaskType
    label: str
    short: str
    hf_task: str
    main_scores: frozenset[str]
    paper_metric: str | None
    detail_keys: tuple[str, ...]
    data_class: str
    chemteb: bool = True
    mteb_metric: str | None = None
    in_mteb_eng_v1: bool = False
    mean_of_items: frozenset[str] = frozenset()
    needs_train: bool = False
    probe_options: bool = False
    file_columns: tuple[str, ...] = ()
    file_layout: Literal["rows", "corpus"] = "rows"
    ranks_documents: bool = False

    def __post_init__(self) -> None:
        if len(self.short) > 6:
            raise ValueError(f"short: {self.short!r} is longer than 6 characters.")
        for name, metric in (
            ("paper_metric", self.paper_metric),
            ("mteb_metric", self.mteb_metric),
        ):
            if metric is not None and metric not in self.main_scores:
                raise ValueError(f"{name}: {metric!r} is not a main score.")
        if self.in_mteb_eng_v1 and self.mteb_metric is None:
            raise ValueError("in_mteb_eng_v1: MTEB ranks the type by a metric; name mteb_metric.")
        if not self.mean_of_items <= self.main_scores:
            raise ValueError(
                f"mean_of_items: {sorted(self.mean_of_items)} are not all main scores."
            )


_KINDS = (
    TaskKind(
        name="Classification",
        label="Classification",
        short="Class",
        hf_task="text-classification",
        main_scores=frozenset({"accuracy", "f1", "f1_weighted", "ap"}),
        paper_metric="f1",
        detail_keys=("accuracy", "f1", "f1_weighted", "ap"),
        data_class="ClassificationData",
        file_columns=("text", "label"),
        mteb_metric="accuracy",
        in_mteb_eng_v1=True,
        mean_of_items=frozenset({"accuracy"}),
        needs_train=True,
        probe_options=True,
    ),
    TaskKind(
        name="Clustering",
        label="Clustering",
        short="Clust",
        hf_task="text-classification",
        main_scores=frozenset({"v_measure"}),
        paper_metric="v_measure",
        detail_keys=("v_measure",),
        data_class="ClusteringData",
        file_columns=("text", "label"),
        mteb_metric="v_measure",
        in_mteb_eng_v1=True,
    ),
    TaskKind(
        name="PairClassification",
        label="Pair classification",
        short="PairCl",
        hf_task="text-classification",
        main_scores=frozenset({"max_f1", "max_ap", "max_accuracy", "cosine_f1", "cosine_ap"}),
        paper_metric="max_f1",
        detail_keys=("max_f1", "max_ap", "max_accuracy", "cosine_f1", "cosine_ap"),
        data_class="PairClassificationData",
        file_columns=("sentence1", "sentence2", "label"),
        mteb_metric="max_ap",
        in_mteb_eng_v1=True,
    ),
    TaskKind(
        name="BitextMining",
        label="Bitext mining",
        short="Bitext",
        hf_task="translation",
        main_scores=frozenset({"f1", "accuracy"}),
        paper_metric="f1",
        # precision and recall are shown, but never rank: they are weighted over target indices
        detail_keys=("f1", "accuracy", "precision", "recall"),
        data_class="BitextData",
        file_columns=("sentence1", "sentence2"),
        mteb_metric="f1",
    ),
    TaskKind(
        name="Retrieval",
        label="Retrieval",
        short="Retr",
        hf_task="text-retrieval",
        main_scores=frozenset({"ndcg_at_10", "map_at_10", "recall_at_10", "mrr_at_10"}),
        paper_metric="ndcg_at_10",
        detail_keys=("ndcg_at_10", "map_at_10", "recall_at_10", "mrr_at_10", "ndcg_at_1"),
        data_class="RetrievalData",
        file_columns=("id", "text"),
        file_layout="corpus",
        ranks_documents=True,
        mteb_metric="ndcg_at_10",
        in_mteb_eng_v1=True,
        # every retrieval score is a mean over queries
        mean_of_items=frozenset({"ndcg_at_10", "map_at_10", "recall_at_10", "mrr_at_10"}),
    ),
    TaskKind(
        name="STS",
        label="STS",
        short="STS",
        hf_task="sentence-similarity",
        main_scores=frozenset({"cosine_spearman", "cosine_pearson", "spearman", "pearson"}),
        paper_metric=None,
        # coverage is shown (a word model's share of pairs with a similarity), never ranked
        detail_keys=("cosine_spearman", "cosine_pearson", "coverage"),
        data_class="StsData",
        file_columns=("sentence1", "sentence2", "score"),
        mteb_metric="cosine_spearman",
        in_mteb_eng_v1=True,
        chemteb=False,
    ),
    TaskKind(
        # term pairs (UMNSRS): each term embedded as the model's text input; a word-vector model
        # averages its words, and pairs it cannot embed count as similarity 0 (coverage says how
        # many). The study's primary metric is Pearson; Spearman stands beside it.
        name="WordSimilarity",
        label="Word similarity",
        short="WrdSim",
        hf_task="sentence-similarity",
        main_scores=frozenset({"cosine_pearson", "cosine_spearman", "pearson", "spearman"}),
        paper_metric=None,
        detail_keys=("cosine_pearson", "cosine_spearman", "coverage"),
        data_class="WordPairData",
        chemteb=False,
    ),
    TaskKind(
        name="NER",
        label="NER",
        short="NER",
        hf_task="token-classification",
        main_scores=frozenset({"overall_f1", "overall_precision", "overall_recall"}),
        paper_metric=None,
        # coverage: the share of words with a vector (a word model's vocabulary), never ranked
        detail_keys=(
            "overall_f1",
            "overall_precision",
            "overall_recall",
            "overall_accuracy",
            "coverage",
        ),
        data_class="NerData",
        needs_train=True,
        chemteb=False,
    ),
)

KINDS: Mapping[str, TaskKind] = MappingProxyType({k.name: k for k in _KINDS})
TASK_TYPES: tuple[TaskType, ...] = tuple(k.name for k in _KINDS)
# ChemTEB's five (the leaderboard's tabs); STS and NER belong to the scientific-text suite.
CHEMTEB_TYPES: tuple[TaskType, ...] = tuple(k.name for k in _KINDS if k.chemteb)
# The types BM25 scores and a hybrid fuses: those whose tasks rank a corpus (retrieval).
RANKED_TYPES: tuple[TaskType, ...] = tuple(k.name for k in _KINDS if k.ranks_documents)


def kind(name: str) -> TaskKind:
    """The record of task type ``name``; ``ValueError`` naming the known types otherwise."""
    try:
        return KINDS[name]
    except KeyError:
        raise ValueError(f"type: {name!r} is not a task type; use one of {list(KINDS)}.") from None
