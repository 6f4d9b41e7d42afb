"""NER: entity-level precision, recall and F-beta (micro and per type), seqeval-compatible
(an evaluate module)."""

import datasets
import evaluate

from chemteb_eval import metric_docs  # From: chemteb-eval
from chemteb_eval.evaluate_support import DirectCompute  # From: chemteb-eval
from chemteb_eval.metric_docs import CHEMTEB_CITATION  # From: chemteb-eval
from chemteb_eval.scoring.ner import check_sentences, score_ner  # From: chemteb-eval

_DESCRIPTION = """\
Entity-level precision, recall and F-beta of predicted tag sequences (IOB1/IOB2/IOBES), micro
over all entities and per entity type, plus token accuracy: the numbers seqeval gives. Default
chunking is conlleval's (an I- tag after O starts an entity); mode="strict" reads strict IOB2.
"""

_KWARGS_DESCRIPTION = metric_docs.inputs_description(
    score_ner,
    """\
    predictions: predicted tag sequences, one list of tags per sentence.
    references: gold tag sequences, same shapes.""",
    "    per entity type {precision, recall, f1 (the F-beta), number}, overall_precision,\n"
    "    overall_recall, overall_f1, overall_accuracy, macro_f1, weighted_f1, main_score.",
)


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

    def _compute(self, predictions, references, beta=1.0, mode=None):
        return score_ner(predictions, references, beta=beta, mode=mode)
