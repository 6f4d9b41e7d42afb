"""Run a benchmark: tasks -> data -> engine -> scoring -> MTEB-layout result files.

``run`` (``stages.py``) goes through named stages; ``kinds.py`` holds, per task type, the texts a
split needs embedded and how it is scored.
"""

from .kinds import score_split as _score
from .kinds import split_texts as _groups
from .stages import Plan, RunReport, run, select

__all__ = ["Plan", "RunReport", "_groups", "_score", "run", "select"]
