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
    """\
    Two labels, each a direction; ``Classification()`` stands for
    ``evaluate.load("chemteb/classification")`` (the class is what that call instantiates; the
    Hub is not needed to run these):

    >>> metric = Classification()  # evaluate.load("chemteb/classification")
    >>> train = [[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]]
    >>> test = [[0.8, 0.2], [0.2, 0.8], [0.6, 0.4]]
    >>> out = metric.compute(
    ...     references=["acid", "base", "acid"],
    ...     test_embeddings=test,
    ...     train_embeddings=train,
    ...     train_labels=["acid", "acid", "base", "base"],
    ... )
    >>> round(out["accuracy"], 4), round(out["f1"], 4), len(out["scores_per_experiment"])
    (1.0, 1.0, 10)

    A test row on the wrong side ([0.6, 0.4] labelled 1), two experiments:

    >>> out = metric.compute(
    ...     references=[0, 1, 1],
    ...     test_embeddings=test,
    ...     train_embeddings=train,
    ...     train_labels=[0, 0, 1, 1],
    ...     n_experiments=2,
    ... )
    >>> round(out["accuracy"], 4), round(out["precision"], 4), round(out["ap"], 4)
    (0.6667, 0.75, 0.8333)
""",
)
DEFAULTS = metric_docs.keyword_defaults(score_classification)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Classification(DirectCompute, evaluate.Metric):
    _renames = (("test_labels", "references"),)  # the scoring function's name for the input

    def _info(self) -> evaluate.MetricInfo:
        return metric_info(_DESCRIPTION, _KWARGS_DESCRIPTION, "references", ("int64", "string"))

    def _compute(
        self,
        references,
        train_embeddings=None,
        train_labels=None,
        test_embeddings=None,
        n_experiments=DEFAULTS["n_experiments"],
        samples_per_label=DEFAULTS["samples_per_label"],
        seed=DEFAULTS["seed"],
        max_iter=DEFAULTS["max_iter"],
        full_train=DEFAULTS["full_train"],
        beta=DEFAULTS["beta"],
        return_items=DEFAULTS["return_items"],
    ):
        return score_classification(
            train_embeddings,
            train_labels,
            test_embeddings,
            references,
            n_experiments=n_experiments,
            samples_per_label=samples_per_label,
            seed=seed,
            max_iter=max_iter,
            full_train=full_train,
            beta=beta,
            return_items=return_items,
        )
