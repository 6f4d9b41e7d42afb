"""The scientific-text suite: STS, word-similarity and NER tasks for comparing static and
contextual embeddings.

The study followed is Ahmed et al. 2025, "Evaluating Embedding Frameworks for Scientific Domain"
(arXiv:2510.06244): Pearson is the primary similarity metric (Spearman beside it), entity F1 for
NER, macro F1 for document classification. Hub ids are the ones MTEB's task metadata names (mteb
2.x); revisions are ``None`` (unpinned: ``../shared`` gives none, and none is invented), so those
tasks do not load from the Hub until someone pins one. The tasks with ``builder="shared"`` run
offline on the local copies in ``../shared/data`` (UMNSRS, SemEval STS 2012-2016, the STS
benchmark, SciERC, BC5CDR, Reuters-12); the restricted sets (Clinical STS, CoNLL-2003, CHEMDNER)
have ``builder="local"``: a user who holds a copy passes ``--data-path``.
"""

from __future__ import annotations

from .records import Task

# The SemEval STS English test subsets of ../shared/data/semeval_sts, per year (its README;
# 2012 MSRvid and 2013 SMT are not redistributable and absent), with their pair counts.
SEMEVAL_PAIRS: dict[int, dict[str, int]] = {
    2012: {"MSRpar": 750, "OnWN": 750, "SMTeuroparl": 459, "SMTnews": 399},
    2013: {"FNWN": 189, "OnWN": 561, "headlines": 750},
    2014: {
        "OnWN": 750,
        "deft-forum": 450,
        "deft-news": 300,
        "headlines": 750,
        "images": 750,
        "tweet-news": 750,
    },
    2015: {
        "answers-forums": 375,
        "answers-students": 750,
        "belief": 375,
        "headlines": 750,
        "images": 750,
    },
    2016: {
        "answer-answer": 254,
        "headlines": 249,
        "plagiarism": 230,
        "postediting": 244,
        "question-question": 209,
    },
}


def _semeval(year: int) -> Task:
    pairs = SEMEVAL_PAIRS[year]
    return Task(
        name=f"SemEvalSTS{year}",
        type="STS",
        hf_path=None,
        revision=None,
        eval_splits=("test",),
        main_score="cosine_pearson",
        collection="scitext",
        subsets=tuple(pairs),
        # The official STS figure of a year: Pearson per subset, then the mean weighted by the
        # subsets' pair counts (not MTEB's STS12-16, which correlate the pooled pairs once).
        subset_weight_key="n_pairs",
        builder="shared",
        category="s2s",
        source=f"SemEval/*SEM STS {year} English test subsets (brmson/dataset-sts); your copy in "
        "CHEMTEB_SHARED_DATA/semeval_sts",
        license="mixed per subset (research use; each subset's licence travels with it)",
        n_samples=sum(pairs.values()),
        split_sizes={"test": str(sum(pairs.values()))},
        description=f"Sentence similarity (0-5), {len(pairs)} subsets: Pearson of cosine "
        "similarity per subset; the year's figure is the pair-weighted mean.",
    )


# The formats --data-path expects for the restricted sets (docs/scitext.md has conversions).
_STS_FORMAT = (
    "DIR/test.tsv, UTF-8, header sentence1<TAB>sentence2<TAB>score, scores 0-5 (paste the "
    "organisers' pair file beside their gold-score file: (printf 'sentence1\\tsentence2\\tscore"
    "\\n'; paste PAIRS GOLD) > DIR/test.tsv)"
)
_NER_FORMAT = (
    "DIR/train.tsv and DIR/test.tsv, UTF-8, one token<TAB>IOB2-tag per line, a blank line "
    "between sentences (CoNLL-2003's IOB1 files convert with `python -m "
    "chemteb_eval.data.convert conll2003 eng.train DIR/train.tsv`)"
)


def _restricted_ner(name: str, *, source: str, license: str, description: str, obtain: str) -> Task:
    return Task(
        name=name,
        type="NER",
        hf_path=None,
        revision=None,
        eval_splits=("test",),
        main_score="overall_f1",
        collection="scitext",
        builder="local",
        train_split="train",
        source=source,
        license=license,
        description=description,
        obtain=obtain,
    )


def _clinical_sts(year: int, where: str) -> Task:
    return Task(
        name=f"ClinicalSTS{year}",
        type="STS",
        hf_path=None,
        revision=None,
        eval_splits=("test",),
        main_score="cosine_pearson",
        collection="scitext",
        builder="local",
        category="s2s",
        source=f"Clinical STS {year} (de-identified clinical notes); under a data-use agreement",
        license="n2c2 data-use agreement (not redistributable)",
        description="Clinical sentence similarity (0-5) by Pearson correlation with cosine "
        "similarity.",
        obtain=f"{where}. Expected: {_STS_FORMAT}.",
    )


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
        "copy in CHEMTEB_SHARED_DATA/umnsrs",
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
        source="STS benchmark (captions, news, forums); your copy in CHEMTEB_SHARED_DATA/stsb",
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
        "your copy in CHEMTEB_SHARED_DATA/scierc",
        license="Apache-2.0",
        n_samples=551,
        description="Scientific-entity NER (Task, Method, Metric, Material, "
        "OtherScientificTerm, Generic) by a logistic-regression probe on frozen word "
        "embeddings; entity-level F1 overall and per type.",
    ),
    *(_semeval(year) for year in SEMEVAL_PAIRS),
    Task(
        name="Reuters12Classification",
        type="Classification",
        hf_path=None,
        revision=None,
        eval_splits=("test",),
        # the study's document-classification score: macro F1 (accuracy beside it)
        main_score="f1",
        collection="scitext",
        builder="shared",
        train_split="train",
        # document classification: one probe on the whole training split (5,882 documents),
        # not MTEB's 10 x 8-per-label undersampling
        probe={"full_train": True},
        category="p2p",
        source="Reuters-21578 ModApte, the 12 most frequent single-label topics (a documented "
        "reconstruction); your copy in CHEMTEB_SHARED_DATA/reuters12",
        license="Reuters-21578: research use only",
        n_samples=2289,
        split_sizes={"train": "5882", "test": "2289"},
        description="12-topic news classification by a logistic-regression probe trained on all "
        "5,882 training documents; macro F1 (F-beta with --beta), accuracy too.",
    ),
    _clinical_sts(
        2018,
        "BioCreative/OHNLP 2018 ClinicalSTS: request it from the organisers (Mayo Clinic) "
        "under their data-use agreement",
    ),
    _clinical_sts(
        2019,
        "n2c2/OHNLP 2019 Track 1 (clinical STS): register at the n2c2 data portal "
        "(https://portal.dbmi.hms.harvard.edu) and sign its data-use agreement",
    ),
    _restricted_ner(
        "CoNLL2003NER",
        source="CoNLL-2003 English (Reuters RCV1 news); PER, LOC, ORG, MISC",
        license="Reuters RCV1 copyright (not redistributable)",
        description="General-domain NER (four types) by the probe; entity F1 overall and per type.",
        obtain="CoNLL-2003 English: the annotations from https://www.clips.uantwerpen.be/"
        "conll2003/ner/ applied to Reuters Corpus RCV1 (request it from NIST: "
        "https://trec.nist.gov/data/reuters/reuters.html), eng.train and eng.testb. Expected: "
        f"{_NER_FORMAT}; types PER, LOC, ORG, MISC",
    ),
    _restricted_ner(
        "CHEMDNERNER",
        source="BioCreative IV CHEMDNER (PubMed abstracts, chemical mentions)",
        license="no licence to redistribute",
        description="Chemical NER by the probe; entity F1.",
        obtain="BioCreative IV CHEMDNER: the corpus from the BioCreative resources page "
        "(https://biocreative.bioinformatics.udel.edu/resources/), its abstracts and offset "
        "annotations converted to tokens with IOB2 tags (the common BC4CHEMD token files are "
        f"already in this format). Expected: {_NER_FORMAT}; one type, Chemical",
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
        source="BC5CDR chemical mentions (PubMed abstracts); your copy in CHEMTEB_SHARED_DATA/bc5cdr",
        license="CC-BY-4.0",
        description="Chemical NER by a logistic-regression probe on frozen word embeddings "
        "(first sub-token per word); entity-level F1 (conlleval chunking).",
    ),
)

# SciEmbed: the study's tasks that run offline, grouped by type as its tables are.
SCIEMBED_TASKS: tuple[str, ...] = (
    "UMNSRSSimilarity",
    "UMNSRSRelatedness",
    "UMNSRSSimilarityMod",
    "UMNSRSRelatednessMod",
    *(f"SemEvalSTS{year}" for year in SEMEVAL_PAIRS),
    "STSBenchmark",
    "SciERCNER",
    "BC5CDRChemicalNER",
    "Reuters12Classification",
)
