"""Run a benchmark: tasks -> data -> engine -> scoring -> MTEB-layout result files.

``run`` (``stages.py``) orders the stages, each a module: ``plan.py`` (what is pending, what is
stale), ``load.py`` (the model, each task's data), ``encode.py``, ``score.py`` and ``write.py``;
``values.py`` holds what they hand each other. ``kinds.py`` holds, per task type, the texts a
split needs embedded and how it is scored.
"""

from __future__ import annotations

from typing import Any

from .kinds import Embeddings, ScoreContext, score_split
from .kinds import split_texts as _groups
from .stages import Plan, RunReport, run, select

__all__ = ["Plan", "RunReport", "_groups", "_score", "run", "select"]


def _score(data: Any, emb: Embeddings, context: ScoreContext | None = None) -> dict[str, Any]:
    """A split's scores alone (``score_split`` without its per-item evidence)."""
    out = score_split(data, emb, context)
    out.pop("items", None)
    return out
