"""Test cases in evaluate-cli's template format: compute's arguments and part of its result
(checked by tests/test_evaluate_harness.py)."""

test_cases = [
    {
        # Chem: 2 gold, 2 predicted, 2 right. Dis: 1 gold, 1 predicted elsewhere, 0 right.
        "predictions": [["B-Chem", "I-Chem", "O", "O"], ["B-Chem", "B-Dis"]],
        "references": [["B-Chem", "I-Chem", "O", "B-Dis"], ["B-Chem", "O"]],
        "result": {
            "Chem": {"precision": 1.0, "recall": 1.0, "f1": 1.0, "number": 2},
            "Dis": {"precision": 0.0, "recall": 0.0, "f1": 0.0, "number": 1},
            "overall_precision": 0.6666666666666666,
            "overall_recall": 0.6666666666666666,
            "overall_f1": 0.6666666666666666,
            "overall_accuracy": 0.6666666666666666,
            "macro_f1": 0.5,
            "weighted_f1": 0.6666666666666666,
        },
    },
    {
        # Strict IOB2: I-C after O starts nothing, so only the last token is an entity.
        "predictions": [["O", "I-C", "I-C", "B-C"]],
        "references": [["O", "I-C", "I-C", "B-C"]],
        "mode": "strict",
        "result": {"C": {"number": 1}, "overall_f1": 1.0, "overall_accuracy": 1.0},
    },
    {
        # F2 of precision 1 and recall 1/2: 5 * 0.5 / (4 + 0.5) = 5/9.
        "predictions": [["B-C", "O", "O"]],
        "references": [["B-C", "O", "B-C"]],
        "beta": 2.0,
        "result": {"overall_recall": 0.5, "overall_f1": 0.5555555555555556},
    },
    {
        # Strict IOBES: the predicted B-D is never closed by E-D, so it is no entity.
        "predictions": [["B-C", "E-C", "O", "B-D"]],
        "references": [["B-C", "E-C", "O", "S-D"]],
        "mode": "strict",
        "scheme": "IOBES",
        "result": {
            "C": {"f1": 1.0, "number": 1},
            "D": {"precision": 0.0, "recall": 0.0, "number": 1},
            "overall_precision": 1.0,
            "overall_recall": 0.5,
        },
    },
    {
        # Strict BILOU: U- is a one-token entity, B- I- L- a longer one.
        "predictions": [["U-A", "B-B", "I-B", "L-B", "O"]],
        "references": [["U-A", "B-B", "I-B", "L-B", "U-A"]],
        "mode": "strict",
        "scheme": "BILOU",
        "result": {"A": {"recall": 0.5, "number": 2}, "B": {"f1": 1.0}, "overall_f1": 0.8},
    },
]
