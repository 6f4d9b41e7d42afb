"""The scientific-text suite: STS, word-similarity and NER tasks for comparing static and
contextual embeddings.

Hub ids are the ones MTEB's task metadata names (mteb 2.x); revisions are ``None`` (unpinned:
``../shared`` gives none, and none is invented), so those tasks do not load from the Hub until
someone pins one. Two tasks run offline on the local copies in ``../shared/data``
(``builder="shared"``): the STS benchmark, BC5CDR chemical NER and the four UMNSRS term-pair sets.
"""

from __future__ import annotations

from .records import Task


def _umnsrs(name: str, what: str, n_pairs: int, note: str) -> Task:
    return Task(
        name=name,
        type="WordSimilarity",
        hf_path=None,
        revision=None,
        eval_splits=("test",),
        # the study's primary similarity metric (Ahmed et al. 2025); Spearman is reported beside
        main_score="cosine_pearson",
        collection="scitext",
        builder="shared",
        category="p2p",
        source="UMNSRS (University of Minnesota, clinical term pairs rated by residents); local "
        "copy ../shared/data/umnsrs",
        license="CC0-1.0",
        n_samples=n_pairs,
        description=f"Medical term-pair {what} (0-1600) by Pearson correlation with cosine "
        f"similarity; {note}",
    )


SCITEXT_TASKS: tuple[Task, ...] = (
    Task(
        name="STSBenchmark",
        type="STS",
        hf_path="mteb/stsbenchmark-sts",
        revision=None,  # unpinned: no source in ../shared gives one
        eval_splits=("test",),
        main_score="cosine_spearman",
        collection="scitext",
        builder="shared",
        category="s2s",
        source="STS benchmark (captions, news, forums); local copy ../shared/data/stsb",
        license="CC-BY-SA-4.0",
        n_samples=1379,
        description="Sentence similarity (0-5) by Spearman correlation with cosine similarity.",
    ),
    Task(
        name="BIOSSES",
        type="STS",
        hf_path="mteb/biosses-sts",
        revision=None,  # unpinned: no source in ../shared gives one
        eval_splits=("test",),
        main_score="cosine_spearman",
        collection="scitext",
        category="s2s",
        source="biomedical sentence pairs (BIOSSES)",
        description="Biomedical sentence similarity; needs a pinned revision to load.",
    ),
    _umnsrs("UMNSRSSimilarity", "similarity", 566, "20 pairs hold a multi-word term."),
    _umnsrs("UMNSRSRelatedness", "relatedness", 587, "21 pairs hold a multi-word term."),
    _umnsrs(
        "UMNSRSSimilarityMod", "similarity", 449, "Pakhomov et al. 2016's single-token subset."
    ),
    _umnsrs(
        "UMNSRSRelatednessMod", "relatedness", 458, "Pakhomov et al. 2016's single-token subset."
    ),
    Task(
        name="SciERCNER",
        type="NER",
        hf_path=None,
        revision=None,
        eval_splits=("test",),
        main_score="overall_f1",
        collection="scitext",
        builder="shared",
        train_split="train",
        source="SciERC (AI-paper abstracts, six scientific entity types) via allenai/scibert; "
        "local copy ../shared/data/scierc",
        license="Apache-2.0",
        n_samples=551,
        description="Scientific-entity NER (Task, Method, Metric, Material, "
        "OtherScientificTerm, Generic) by a logistic-regression probe on frozen word "
        "embeddings; entity-level F1 overall and per type.",
    ),
    Task(
        name="BC5CDRChemicalNER",
        type="NER",
        hf_path=None,
        revision=None,
        eval_splits=("test",),
        main_score="overall_f1",
        collection="scitext",
        builder="shared",
        train_split="train",
        source="BC5CDR chemical mentions (PubMed abstracts); local copy ../shared/data/bc5cdr",
        license="CC-BY-4.0",
        description="Chemical NER by a logistic-regression probe on frozen word embeddings "
        "(first sub-token per word); entity-level F1 (conlleval chunking).",
    ),
)
