"""Test cases in evaluate-cli's template format: compute's arguments and part of its result
(checked by tests/test_evaluate_harness.py)."""

test_cases = [
    {
        # No references: source row i belongs to target row i; every nearest target is right.
        "source_embeddings": [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.6, 0.8, 0.0]],
        "target_embeddings": [[0.9, 0.1, 0.0], [0.0, 0.9, 0.1], [0.1, 0.0, 0.9], [0.5, 0.9, 0.0]],
        "result": {"accuracy": 1.0, "f1": 1.0, "main_score": 1.0},
    },
    {
        # Gold indices: sources 1 and 3 both belong to target 1.
        "source_embeddings": [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.6, 0.8, 0.0]],
        "target_embeddings": [[0.9, 0.1, 0.0], [0.0, 0.9, 0.1], [0.1, 0.0, 0.9]],
        "references": [0, 1, 2, 1],
        "result": {"accuracy": 1.0, "precision": 1.0, "recall": 1.0, "f1": 1.0},
    },
    {
        # Gold targets swapped for sources 0 and 2: only source 1 is matched.
        "source_embeddings": [[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]],
        "target_embeddings": [[0.9, 0.1], [0.1, 0.9], [0.6, 0.8]],
        "references": [2, 1, 0],
        "result": {"accuracy": 0.3333333333333333, "f1": 0.3333333333333333},
    },
]
