"""The ChemTEB metric math: pure functions that take arrays and return plain dicts.

This room imports numpy, scipy and scikit-learn only (never torch, datasets or evaluate), so
``import chemteb_eval.scoring`` stays fast.
"""

from .bitext_mining import score_bitext_mining
from .classification import score_classification
from .clustering import score_clustering
from .pair_classification import score_pair_classification
from .retrieval import score_retrieval

__all__ = [
    "score_bitext_mining",
    "score_classification",
    "score_clustering",
    "score_pair_classification",
    "score_retrieval",
]
