"""ChemTEB bitext mining: top-1 cosine matching of sources to targets (an evaluate module)."""

import evaluate

from chemteb_eval import metric_docs  # From: chemteb-eval
from chemteb_eval.evaluate_support import DirectCompute, metric_info  # From: chemteb-eval
from chemteb_eval.scoring import score_bitext_mining  # From: chemteb-eval

_DESCRIPTION = """\
Scores bitext mining the way ChemTEB (through MTEB) does: every source embedding (e.g. a SMILES
string) is matched to its most cosine-similar target (e.g. a name, description or formula); the
accuracy and scikit-learn's weighted precision, recall and F1 over target indices are reported.
With one gold target per label, a target that attracts many sources is punished, which is why
published F1 values on ChemTEB's SMILES tasks are near 0.002.
"""

_KWARGS_DESCRIPTION = metric_docs.inputs_description(
    score_bitext_mining,
    """\
    source_embeddings: (n_source, dim) embeddings of the source texts.
    target_embeddings: (n_target, dim) embeddings of the candidate targets.
    references (optional): the gold target index of every source row; default row i -> target i.""",
    "    accuracy, precision, recall, f1, main_score (f1).",
)


class BitextMining(DirectCompute, evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return metric_info(_DESCRIPTION, _KWARGS_DESCRIPTION, "references", ("int64",))

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Score bitext mining; ``references`` (gold target indices) are optional.\n\n"""
        # evaluate needs one declared feature per call: without gold indices, row i -> target i.
        aligned = references is None
        if aligned:
            source = kwargs.get("source_embeddings")
            if source is None:
                raise ValueError(
                    "source_embeddings: missing; pass an array of shape (n_rows, dim)."
                )
            references = list(range(len(source)))
        return super().compute(
            predictions=predictions, references=references, aligned=aligned, **kwargs
        )

    def _compute(
        self, references, source_embeddings=None, target_embeddings=None, aligned=False, **protocol
    ):
        gold = None if aligned else references
        return score_bitext_mining(source_embeddings, target_embeddings, gold, **protocol)
