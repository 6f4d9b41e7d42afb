"""ChemTEB classification: a logistic-regression probe on frozen embeddings (an evaluate module)."""

import evaluate

from chemteb_eval import metric_docs  # From: chemteb-eval
from chemteb_eval.evaluate_support import DirectCompute, metric_info  # From: chemteb-eval
from chemteb_eval.scoring import score_classification  # From: chemteb-eval

_DESCRIPTION = """\
Scores text embeddings on a classification task the way ChemTEB (through MTEB) does: for each of
10 experiments, 8 training rows per label are drawn with a seeded shuffle, a logistic regression
is fitted on their embeddings and the whole test split is predicted. Accuracy, macro and weighted
F1/precision/recall (and average precision for binary tasks) are averaged over the experiments.
"""

_KWARGS_DESCRIPTION = metric_docs.inputs_description(
    score_classification,
    """\
    references: test labels (ints or strings), one per row of test_embeddings.
    test_embeddings: (n_test, dim) array, tensor or list of the test texts' embeddings.
    train_embeddings: (n_train, dim) embeddings of the training texts.
    train_labels: n_train training labels, of the same kind as references.""",
    "    accuracy, f1, precision, recall, f1_weighted, precision_weighted, recall_weighted,\n"
    "    ap and ap_weighted (binary tasks only), scores_per_experiment, main_score (accuracy).",
)


class Classification(DirectCompute, evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return metric_info(_DESCRIPTION, _KWARGS_DESCRIPTION, "references", ("int64", "string"))

    def _compute(
        self, references, train_embeddings=None, train_labels=None, test_embeddings=None, **protocol
    ):
        return score_classification(
            train_embeddings, train_labels, test_embeddings, references, **protocol
        )
