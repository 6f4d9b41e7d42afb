"""Test cases in evaluate-cli's template format: compute's arguments and part of its result
(checked by tests/test_evaluate_harness.py)."""

test_cases = [
    {
        # q1 finds a first; q2 finds b then c (both relevant); q3's document d is ranked last.
        "query_embeddings": [[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]],
        "corpus_embeddings": [[0.9, 0.1], [0.1, 0.9], [0.6, 0.8], [-1.0, 0.0]],
        "query_ids": ["q1", "q2", "q3"],
        "corpus_ids": ["a", "b", "c", "d"],
        "qrels": {"q1": {"a": 1}, "q2": {"b": 1, "c": 1}, "q3": {"d": 1}},
        "k_values": [1, 2, 4],
        "result": {
            "ndcg_at_1": 0.66667,
            "recall_at_1": 0.5,
            "recall_at_4": 1.0,
            "mrr_at_4": 0.75,
            "map_at_4": 0.75,
        },
    },
    {
        # Integer ids, graded relevance, unrounded values.
        "query_embeddings": [[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]],
        "corpus_embeddings": [[0.9, 0.1], [0.1, 0.9], [0.6, 0.8], [-1.0, 0.0]],
        "query_ids": [1, 2, 3],
        "corpus_ids": [10, 20, 30, 40],
        "qrels": {1: {10: 2, 30: 1}, 2: {20: 1}, 3: {30: 3}},
        "k_values": [1, 3],
        "decimals": None,
        "result": {
            "ndcg_at_1": 1.0,
            "map_at_1": 0.8333333333333334,
            "precision_at_3": 0.4444444444444444,
            "main_score": 1.0,
        },
    },
]
