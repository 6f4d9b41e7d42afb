"""ChemTEB clustering: mini-batch k-means scored by V-measure (an evaluate module)."""

import evaluate

from chemteb_eval import metric_docs  # From: chemteb-eval
from chemteb_eval.evaluate_support import DirectCompute, metric_info  # From: chemteb-eval
from chemteb_eval.scoring import score_clustering  # From: chemteb-eval

_DESCRIPTION = """\
Scores text embeddings on a clustering task the way ChemTEB (through MTEB) does: mini-batch
k-means with as many clusters as there are labels (batch size 500, one k-means++ initialisation,
seed 42), then the V-measure between the true labels and the clusters.
"""

_KWARGS_DESCRIPTION = metric_docs.inputs_description(
    score_clustering,
    """\
    references: true labels (ints or strings), one per row of embeddings.
    embeddings: (n, dim) array, tensor or list of embeddings.""",
    "    v_measure, homogeneity, completeness, main_score (v_measure).",
)


class Clustering(DirectCompute, evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return metric_info(_DESCRIPTION, _KWARGS_DESCRIPTION, "references", ("int64", "string"))

    def _compute(self, references, embeddings=None, **protocol):
        return score_clustering(embeddings, references, **protocol)
