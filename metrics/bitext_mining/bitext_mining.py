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
    """\
    Each source's nearest target is its own row; ``BitextMining()`` stands for
    ``evaluate.load("chemteb/bitext_mining")`` (the class is what that call instantiates; the
    Hub is not needed to run these):

    >>> metric = BitextMining()  # evaluate.load("chemteb/bitext_mining")
    >>> src = [[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]]
    >>> tgt = [[0.9, 0.1], [0.1, 0.9], [0.6, 0.8]]
    >>> out = metric.compute(source_embeddings=src, target_embeddings=tgt)
    >>> round(out["accuracy"], 4), round(out["f1"], 4)
    (1.0, 1.0)

    Gold targets given: source 0 belongs to target 2 and source 2 to target 0.

    >>> out = metric.compute(source_embeddings=src, target_embeddings=tgt, references=[2, 1, 0])
    >>> round(out["accuracy"], 4), round(out["f1"], 4)
    (0.3333, 0.3333)
""",
)
DEFAULTS = metric_docs.keyword_defaults(score_bitext_mining)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class BitextMining(DirectCompute, evaluate.Metric):
    _renames = (("gold", "references"),)  # the scoring function's name for the input
    _internal_arguments = ("aligned",)

    def _info(self) -> evaluate.MetricInfo:
        return metric_info(_DESCRIPTION, _KWARGS_DESCRIPTION, "references", ("int64",))

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Score bitext mining; ``references`` (gold target indices) are optional.\n\n"""
        self._check_arguments(kwargs)
        # evaluate needs one declared feature per call: without gold indices, row i -> target i;
        # gold indices added earlier (add_batch) or gathered from other processes are the gold
        aligned = references is None and self.writer is None and self.num_process == 1
        if aligned:
            source = kwargs.get("source_embeddings")
            if source is None:
                raise ValueError(
                    "source_embeddings: missing; pass an array of shape (n_rows, dim)."
                )
            references = list(range(len(source)))
        return self._compute_checked(predictions, references, {**kwargs, "aligned": aligned})

    def _compute(
        self,
        references,
        source_embeddings=None,
        target_embeddings=None,
        aligned=False,
        chunk_size=DEFAULTS["chunk_size"],
        return_items=DEFAULTS["return_items"],
        zero_rows=DEFAULTS["zero_rows"],
    ):
        gold = None if aligned else references
        return score_bitext_mining(
            source_embeddings,
            target_embeddings,
            gold,
            chunk_size=chunk_size,
            return_items=return_items,
            zero_rows=zero_rows,
        )
