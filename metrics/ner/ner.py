"""NER: entity-level precision, recall and F-beta (micro and per type), seqeval-compatible
(an evaluate module)."""

import datasets
import evaluate

from chemteb_eval import metric_docs  # From: chemteb-eval
from chemteb_eval.evaluate_support import DirectCompute  # From: chemteb-eval
from chemteb_eval.metric_docs import CHEMTEB_CITATION  # From: chemteb-eval
from chemteb_eval.scoring.ner import check_sentences, score_ner  # From: chemteb-eval

_DESCRIPTION = """\
Entity-level precision, recall and F-beta of predicted tag sequences, micro over all entities
and per entity type, plus token accuracy: the numbers seqeval gives. Default chunking is
conlleval's (B/I/E/S prefixes; an I- tag after O starts an entity); mode="strict" reads a
scheme's rules as seqeval's strict mode does: scheme= IOB1, IOB2 (the default), IOE1, IOE2,
IOBES or BILOU (a scheme without mode="strict" is an error).
"""

_KWARGS_DESCRIPTION = metric_docs.inputs_description(
    score_ner,
    """\
    predictions: predicted tag sequences, one list of tags per sentence.
    references: gold tag sequences, same shapes.
    mode: None (conlleval) or "strict"; scheme: strict mode's scheme (None = IOB2).""",
    "    per entity type {precision, recall, f1 (the F-beta), number}, overall_precision,\n"
    "    overall_recall, overall_f1, overall_accuracy, macro_f1, weighted_f1, main_score.",
    """\
    A missed Disease, and a Chemical that starts with I- after O; ``Ner()`` stands for
    ``evaluate.load("chemteb/ner")`` (the class is what that call instantiates; the Hub is not
    needed to run these):

    >>> metric = Ner()  # evaluate.load("chemteb/ner")
    >>> gold = [["B-Chemical", "I-Chemical", "O", "B-Disease"], ["O", "I-Chemical", "I-Chemical"]]
    >>> pred = [["B-Chemical", "I-Chemical", "O", "O"], ["O", "I-Chemical", "I-Chemical"]]
    >>> out = metric.compute(predictions=pred, references=gold)
    >>> round(out["overall_f1"], 4), out["Chemical"]["number"], round(out["overall_accuracy"], 4)
    (0.8, 2, 0.8571)

    Strict IOB2 reads no entity from I- after O (one Chemical left), and beta=2 weighs recall:

    >>> out = metric.compute(predictions=pred, references=gold, mode="strict", beta=2.0)
    >>> round(out["overall_recall"], 4), round(out["overall_f1"], 4), out["Chemical"]["number"]
    (0.5, 0.5556, 1)

    Strict IOBES: a B- that no E- closes is no entity (conlleval would read one):

    >>> gold = [["B-Chemical", "E-Chemical", "O", "S-Disease"]]
    >>> pred = [["B-Chemical", "E-Chemical", "O", "B-Disease"]]
    >>> out = metric.compute(predictions=pred, references=gold, mode="strict", scheme="IOBES")
    >>> round(out["overall_recall"], 4), round(out["Disease"]["f1"], 4)
    (0.5, 0.0)
    >>> round(metric.compute(predictions=pred, references=gold)["overall_recall"], 4)
    1.0
""",
)
DEFAULTS = metric_docs.keyword_defaults(score_ner)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Ner(DirectCompute, evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        sequence = datasets.Sequence(datasets.Value("string"))
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=CHEMTEB_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"predictions": sequence, "references": sequence}),
            reference_urls=["https://github.com/chakki-works/seqeval"],
        )

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add sentences; checked as the function checks them, before Arrow can coerce them."""
        check_sentences("predictions", predictions)
        check_sentences("references", references)
        return super().add_batch(predictions=predictions, references=references, **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Add one sentence's predicted and gold tags."""
        check_sentences("predictions", [prediction])
        check_sentences("references", [reference])
        return super().add(prediction=prediction, reference=reference, **kwargs)

    def _compute(
        self,
        predictions,
        references,
        beta=DEFAULTS["beta"],
        mode=DEFAULTS["mode"],
        scheme=DEFAULTS["scheme"],
    ):
        return score_ner(predictions, references, beta=beta, mode=mode, scheme=scheme)
