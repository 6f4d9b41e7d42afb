"""Two small ChemBench questions (one numeric, one multiple choice) shared by the adversarial
tests."""

from __future__ import annotations

QUESTION = {
    "name": "q-num",
    "uuid": "u-num",
    "keywords": ["requires-calculation", "difficulty-basic"],
    "metrics": ["mae"],
    "preferred_score": "mae",
    "examples": [{"input": "What is 2 + 3?", "target": 5}],
}
MCQ = {
    "name": "q-mcq",
    "uuid": "u-mcq",
    "keywords": ["requires-knowledge", "difficulty-basic"],
    "metrics": ["multiple_choice_grade"],
    "preferred_score": "multiple_choice_grade",
    "examples": [{"input": "Pick one", "target_scores": {"yes": 1, "no": 0}}],
}
