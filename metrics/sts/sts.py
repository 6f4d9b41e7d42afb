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
)


class Sts(DirectCompute, evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return metric_info(_DESCRIPTION, _KWARGS_DESCRIPTION, "references", ("float64",))

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Correlate; see the card for the inputs and the OOV policy."""
        # Embeddings, NaN predictions and the gold scores (a 400-digit int would overflow
        # Arrow's float64 before the function could name it) go to the function as they are.
        if predictions is not None:
            kwargs["similarities"] = predictions
        return super().compute(references=references, **kwargs)

    def _compute(
        self, references, embeddings1=None, embeddings2=None, similarities=None, **options
    ):
        return score_sts(references, embeddings1, embeddings2, similarities, **options)
