"""Test cases in evaluate-cli's template format: compute's arguments and part of its result
(checked by tests/test_evaluate_harness.py)."""

test_cases = [
    {
        # The three positive pairs are near-parallel, the two negatives orthogonal-ish.
        "references": [1, 1, 1, 0, 0],
        "embeddings1": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, 0.0], [0.0, 1.0]],
        "embeddings2": [[1.0, 0.1], [0.1, 1.0], [1.0, 0.9], [0.0, 1.0], [1.0, 0.2]],
        "result": {"max_f1": 1.0, "cosine_ap": 1.0, "dot_f1_threshold": 0.6, "main_score": 1.0},
    },
    {
        # Labels that no threshold separates; MTEB 2.x's sweep (no cut between equal scores).
        "references": [1, 0, 1, 0, 1],
        "embeddings1": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, 0.0], [0.0, 1.0]],
        "embeddings2": [[1.0, 0.1], [0.1, 1.0], [1.0, 0.9], [0.0, 1.0], [1.0, 0.2]],
        "skip_tied_thresholds": True,
        "result": {
            "cosine_accuracy": 0.8,
            "cosine_f1": 0.8571428571428571,
            "cosine_precision": 0.75,
            "cosine_recall": 1.0,
            "cosine_ap": 0.8055555555555556,
            "main_score": 0.8571428571428571,
        },
    },
]
