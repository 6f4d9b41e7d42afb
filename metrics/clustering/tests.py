"""Test cases in evaluate-cli's template format: compute's arguments and part of its result
(checked by tests/test_evaluate_harness.py)."""

test_cases = [
    {
        # Three tight pairs, one per label: a perfect clustering.
        "references": [0, 0, 1, 1, 2, 2],
        "embeddings": [[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9], [-1.0, 0.0], [-0.9, -0.1]],
        "result": {"v_measure": 1.0, "homogeneity": 1.0, "completeness": 1.0, "main_score": 1.0},
    },
    {
        # Two clusters asked for, labels that split the middle pair.
        "references": ["a", "a", "a", "b", "b", "b"],
        "embeddings": [[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9], [-1.0, 0.0], [-0.9, -0.1]],
        "n_clusters": 2,
        "batch_size": 4,
        "result": {
            "v_measure": 0.4787039713856801,
            "homogeneity": 0.45914791702724483,
            "completeness": 0.5,
        },
    },
]
