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
    """\
    Two tight groups; ``Clustering()`` stands for ``evaluate.load("chemteb/clustering")`` (the
    class is what that call instantiates; the Hub is not needed to run these):

    >>> metric = Clustering()  # evaluate.load("chemteb/clustering")
    >>> emb = [[1.0, 0.0], [0.95, 0.05], [0.0, 1.0], [0.05, 0.95]]
    >>> out = metric.compute(references=["acid", "acid", "base", "base"], embeddings=emb)
    >>> round(out["v_measure"], 4), out["main_score"] == out["v_measure"]
    (1.0, True)

    Labels that cut across the groups: the clusters say nothing about them.

    >>> out = metric.compute(references=[0, 1, 0, 1], embeddings=emb, batch_size=2)
    >>> round(out["v_measure"], 4), round(out["homogeneity"], 4)
    (0.0, 0.0)
""",
)
DEFAULTS = metric_docs.keyword_defaults(score_clustering)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Clustering(DirectCompute, evaluate.Metric):
    _renames = (("labels", "references"),)  # the scoring function's name for the input

    def _info(self) -> evaluate.MetricInfo:
        return metric_info(_DESCRIPTION, _KWARGS_DESCRIPTION, "references", ("int64", "string"))

    def _compute(
        self,
        references,
        embeddings=None,
        batch_size=DEFAULTS["batch_size"],
        seed=DEFAULTS["seed"],
        n_clusters=DEFAULTS["n_clusters"],
        return_items=DEFAULTS["return_items"],
    ):
        return score_clustering(
            embeddings,
            references,
            batch_size=batch_size,
            seed=seed,
            n_clusters=n_clusters,
            return_items=return_items,
        )
