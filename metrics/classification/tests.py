"""Test cases in evaluate-cli's template format: compute's arguments and part of its result
(checked by tests/test_evaluate_harness.py)."""

test_cases = [
    {
        # Two separable labels, 2 training rows per label drawn in each of 3 experiments.
        "references": ["acid", "base", "base", "acid"],
        "test_embeddings": [[0.7, 0.1], [0.2, 0.9], [0.5, 0.6], [0.9, 0.0]],
        "train_embeddings": [
            [1.0, 0.0],
            [0.9, 0.1],
            [0.8, 0.3],
            [0.0, 1.0],
            [0.1, 0.9],
            [0.3, 0.8],
        ],
        "train_labels": ["acid", "acid", "acid", "base", "base", "base"],
        "n_experiments": 3,
        "samples_per_label": 2,
        "result": {"accuracy": 1.0, "f1": 1.0, "ap": 1.0, "main_score": 1.0},
    },
    {
        # Trained once on all rows; the third test row ([0.5, 0.6], label 0) lands with label 1.
        "references": [0, 1, 0, 0],
        "test_embeddings": [[0.7, 0.1], [0.2, 0.9], [0.5, 0.6], [0.9, 0.0]],
        "train_embeddings": [
            [1.0, 0.0],
            [0.9, 0.1],
            [0.8, 0.3],
            [0.0, 1.0],
            [0.1, 0.9],
            [0.3, 0.8],
        ],
        "train_labels": [0, 0, 0, 1, 1, 1],
        "full_train": True,
        "result": {
            "accuracy": 0.75,
            "f1": 0.7333333333333334,
            "precision": 0.75,
            "recall": 0.8333333333333333,
            "ap": 0.5,
            "main_score": 0.75,
        },
    },
]
