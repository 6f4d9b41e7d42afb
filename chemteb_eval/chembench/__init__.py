"""ChemBench end to end, in one package: question records (``questions``), loading
(``load``), prompts (``prompts``), answer extraction (``parse``), scoring (``score``),
generation backends (``generate``), the refusal classifier (``refusal``), prompts-to-report
runs (``run``) and the ``chemteb chembench`` commands (``cli``).

``parse``, ``prompts``, ``questions`` and ``score`` import nothing heavy (no torch, datasets or
evaluate): the evaluate module and ``import chemteb_eval.chembench`` stay light.
"""

from .questions import Question, keyword_problems
from .score import QuestionResult, ScoringOptions, score_chembench, score_question

__all__ = [
    "Question",
    "QuestionResult",
    "ScoringOptions",
    "keyword_problems",
    "score_chembench",
    "score_question",
]
