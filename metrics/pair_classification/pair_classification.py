"""ChemTEB pair classification: best-threshold F1 over four similarity functions (an evaluate module)."""

import evaluate

from chemteb_eval import metric_docs  # From: chemteb-eval
from chemteb_eval.evaluate_support import DirectCompute, metric_info  # From: chemteb-eval
from chemteb_eval.scoring import score_pair_classification  # From: chemteb-eval

_DESCRIPTION = """\
Scores pairs of text embeddings against 0/1 labels the way ChemTEB (through MTEB) does: for cosine
similarity, dot product, euclidean and manhattan distance, the best-threshold accuracy and F1
(with precision, recall and thresholds) and the average precision; max_* is the best of the four.
By default the threshold sweep is the one behind the published results (it may cut between equal
scores); skip_tied_thresholds=True gives MTEB 2.x's sweep.
"""

_KWARGS_DESCRIPTION = metric_docs.inputs_description(
    score_pair_classification,
    """\
    references: 0/1 labels (1 = the two texts belong together), one per pair.
    embeddings1: (n, dim) embeddings of the first text of each pair.
    embeddings2: (n, dim) embeddings of the second text of each pair.""",
    "    {cosine,dot,euclidean,manhattan}_{accuracy,accuracy_threshold,f1,f1_threshold,precision,\n"
    "    recall,ap}, max_{accuracy,f1,precision,recall,ap}, main_score (max_f1).",
    """\
    Positive pairs point the same way; ``PairClassification()`` stands for
    ``evaluate.load("chemteb/pair_classification")`` (the class is what that call instantiates;
    the Hub is not needed to run these):

    >>> metric = PairClassification()  # evaluate.load("chemteb/pair_classification")
    >>> e1 = [[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0]]
    >>> e2 = [[0.9, 0.1], [0.1, 0.9], [0.0, 1.0], [1.0, 0.0]]
    >>> out = metric.compute(references=[1, 1, 0, 0], embeddings1=e1, embeddings2=e2)
    >>> round(out["max_f1"], 4), round(out["cosine_ap"], 4), round(out["cosine_f1_threshold"], 4)
    (1.0, 1.0, 0.4969)

    One positive pair is orthogonal: no threshold separates it from the negatives.

    >>> out = metric.compute(references=[1, 1, 0, 1], embeddings1=e1, embeddings2=e2)
    >>> round(out["cosine_accuracy"], 4), round(out["cosine_f1"], 4), round(out["cosine_ap"], 4)
    (0.75, 0.8, 0.9167)
""",
)
DEFAULTS = metric_docs.keyword_defaults(score_pair_classification)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class PairClassification(DirectCompute, evaluate.Metric):
    _renames = (("labels", "references"),)  # the scoring function's name for the input

    def _info(self) -> evaluate.MetricInfo:
        return metric_info(_DESCRIPTION, _KWARGS_DESCRIPTION, "references", ("int64", "string"))

    def _compute(
        self,
        references,
        embeddings1=None,
        embeddings2=None,
        skip_tied_thresholds=DEFAULTS["skip_tied_thresholds"],
        return_items=DEFAULTS["return_items"],
        zero_rows=DEFAULTS["zero_rows"],
    ):
        return score_pair_classification(
            embeddings1,
            embeddings2,
            references,
            skip_tied_thresholds=skip_tied_thresholds,
            return_items=return_items,
            zero_rows=zero_rows,
        )
