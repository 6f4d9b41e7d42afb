"""STS: Pearson and Spearman between gold scores and embedding similarities, with an explicit
out-of-vocabulary policy (an evaluate module)."""

import evaluate

from chemteb_eval import metric_docs  # From: chemteb-eval
from chemteb_eval.evaluate_support import DirectCompute, metric_info  # From: chemteb-eval
from chemteb_eval.scoring.sts import score_sts  # From: chemteb-eval

_DESCRIPTION = """\
Semantic textual similarity: the Pearson and Spearman correlation between gold similarity
scores and the cosine similarity of two embeddings per pair (or given predicted similarities).
Pairs without a similarity (a word model that knows none of a text's words gives NaN) follow an
explicit policy: error (default), drop (covered pairs only; coverage reported) or zero.
"""

_KWARGS_DESCRIPTION = metric_docs.inputs_description(
    score_sts,
    """\
    references: gold similarity scores, one per pair.
    embeddings1: (n, dim) embeddings of the first sentences (NaN rows: no vector).
    embeddings2: (n, dim) embeddings of the second sentences.
    predictions: predicted similarities instead of embeddings (NaN: none).""",
    "    pearson, spearman, cosine_/manhattan_/euclidean_ pearson and spearman (with embeddings),\n"
    "    n_pairs, n_missing, coverage, oov_policy, main_score (spearman).",
    """\
    Cosines 1, 0.7071 and -1 for gold scores 5, 2.5 and 0; ``Sts()`` stands for
    ``evaluate.load("chemteb/sts")`` (the class is what that call instantiates; the Hub is not
    needed to run these):

    >>> metric = Sts()  # evaluate.load("chemteb/sts")
    >>> e1 = [[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]]
    >>> e2 = [[2.0, 0.0], [1.0, 1.0], [-1.0, 0.0]]
    >>> out = metric.compute(references=[5.0, 2.5, 0.0], embeddings1=e1, embeddings2=e2)
    >>> round(out["spearman"], 4), round(out["pearson"], 4), out["coverage"]
    (1.0, 0.9258, 1.0)

    Predicted similarities, one missing (NaN), dropped by the OOV policy:

    >>> out = metric.compute(
    ...     references=[5.0, 2.5, 1.0, 0.0],
    ...     predictions=[0.9, 0.4, float("nan"), 0.1],
    ...     oov_policy="drop",
    ... )
    >>> round(out["spearman"], 4), out["n_missing"], out["coverage"]
    (1.0, 1, 0.75)
""",
)
DEFAULTS = metric_docs.keyword_defaults(score_sts)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Sts(DirectCompute, evaluate.Metric):
    _extra_arguments = ("predictions",)

    def _info(self) -> evaluate.MetricInfo:
        return metric_info(_DESCRIPTION, _KWARGS_DESCRIPTION, "references", ("float64",))

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Correlate; see the card for the inputs and the OOV policy."""
        self._check_arguments(kwargs)
        # Embeddings, NaN predictions and the gold scores (a 400-digit int would overflow
        # Arrow's float64 before the function could name it) go to the function as they are.
        if predictions is not None:
            if kwargs.get("similarities") is not None:
                raise ValueError("similarities: the same input as predictions; pass one of them.")
            kwargs["similarities"] = predictions
        return self._compute_checked(None, references, kwargs)

    def _compute(
        self,
        references,
        embeddings1=None,
        embeddings2=None,
        similarities=None,
        oov_policy=DEFAULTS["oov_policy"],
        return_items=DEFAULTS["return_items"],
    ):
        return score_sts(
            references,
            embeddings1,
            embeddings2,
            similarities,
            oov_policy=oov_policy,
            return_items=return_items,
        )
