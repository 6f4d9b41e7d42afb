"""Test cases in evaluate-cli's template format: compute's arguments and part of its result
(checked by tests/test_evaluate_harness.py)."""

test_cases = [
    {
        # Cosines rise with the gold scores: Spearman 1.
        "references": [1.0, 2.0, 3.0, 4.0],
        "embeddings1": [[1.0, 0.0], [1.0, 0.0], [1.0, 0.0], [1.0, 0.0]],
        "embeddings2": [[-1.0, 0.1], [0.0, 1.0], [1.0, 1.0], [1.0, 0.0]],
        "result": {"spearman": 1.0, "cosine_pearson": 0.9734018430059981, "n_missing": 0},
    },
    {
        # A missing similarity scored as 0: ranks 3, 1, 2, 4 against 1..4, Spearman 0.4.
        "references": [1.0, 2.0, 3.0, 4.0],
        "predictions": [0.2, float("nan"), 0.1, 0.9],
        "oov_policy": "zero",
        "result": {"spearman": 0.4, "n_missing": 1, "coverage": 0.75, "oov_policy": "zero"},
    },
]
