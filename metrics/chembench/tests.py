"""Test cases in evaluate-cli's template format: compute's arguments and part of its result
(checked by tests/test_evaluate_harness.py)."""

_MCQ = {
    "name": "rate",
    "keywords": ["requires-reasoning", "difficulty-basic"],
    "metrics": ["multiple_choice_grade"],
    "examples": [
        {
            "input": "To double the rate of radical polymerization, how must the initiator "
            "concentration change?",
            "target_scores": {"doubled": 0, "quadrupled": 1, "tripled": 0},
        }
    ],
}
_NUMERIC = {
    "name": "atoms",
    "keywords": ["requires-calculation", "difficulty-basic"],
    "metrics": ["mae"],
    "examples": [{"input": "How many atoms are in one water molecule?", "target": 3}],
}

test_cases = [
    {
        "predictions": ["[ANSWER]B[/ANSWER]", "[ANSWER]3[/ANSWER]"],
        "references": [_MCQ, _NUMERIC],
        "result": {"fraction_correct": 1.0, "n_correct": 2, "numeric_mae": 0.0},
    },
    {
        # Completion mode: a leading answer is read; 3.1 is outside 1% of 3.
        "predictions": ["B", "3.1"],
        "references": [_MCQ, _NUMERIC],
        "prompt_mode": "completion",
        "result": {
            "fraction_correct": 0.5,
            "mcq_multiple_choice_grade": 1.0,
            "numeric_mae": 0.10000000000000009,
            "by_type": {"numeric": {"n_correct": 0}},
        },
    },
    {
        "predictions": ["I cannot help with that.", "The answer is three."],
        "references": [_MCQ, _NUMERIC],
        "prompt_mode": "completion",
        "result": {"fraction_correct": 0.5, "n_refusals": 1, "fraction_correct_answered": 1.0},
    },
]
