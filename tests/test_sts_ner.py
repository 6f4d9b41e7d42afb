"""STS (with its OOV policy) and NER entity F-beta: hand-checked values, seqeval differential."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import pearsonr, spearmanr

from chemteb_eval.scoring.ner import entities, score_ner
from chemteb_eval.scoring.sts import score_sts

# -- STS -------------------------------------------------------------------------------------


def test_sts_hand_checked() -> None:
    # Cosines of the pairs: 1, 0, -1 (exactly), gold 5, 2.5, 0: a perfect monotone relation.
    e1 = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    e2 = np.array([[2.0, 0.0], [0.0, 3.0], [-1.0, 0.0]])
    out = score_sts([5.0, 2.5, 0.0], e1, e2)
    assert out["cosine_pearson"] == pytest.approx(1.0) and out["spearman"] == pytest.approx(1.0)
    assert out["main_score"] == out["cosine_spearman"] == out["spearman"]
    assert (out["n_pairs"], out["n_missing"], out["coverage"]) == (3, 0, 1.0)
    assert {"manhattan_spearman", "euclidean_pearson"} <= set(out)


def test_sts_matches_scipy_on_random_data(rng: np.random.Generator) -> None:
    e1, e2 = rng.standard_normal((50, 8)), rng.standard_normal((50, 8))
    gold = rng.uniform(0, 5, 50)
    cos = (e1 * e2).sum(1) / np.linalg.norm(e1, axis=1) / np.linalg.norm(e2, axis=1)
    out = score_sts(gold, e1, e2)
    assert out["pearson"] == pytest.approx(pearsonr(gold, cos).statistic, abs=1e-12)
    assert out["spearman"] == pytest.approx(spearmanr(gold, cos).statistic, abs=1e-12)
    assert score_sts(gold, predictions=cos)["spearman"] == pytest.approx(out["spearman"], abs=1e-12)


def test_oov_policies() -> None:
    gold = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    e1 = np.array([[1.0, 0.0]] * 5)
    e2 = np.array([[-1.0, 0.0], [0.0, 1.0], [np.nan, np.nan], [1.0, 1.0], [1.0, 0.0]])
    with pytest.raises(ValueError, match="1 of 5 pairs have no similarity"):
        score_sts(gold, e1, e2)
    dropped = score_sts(gold, e1, e2, oov_policy="drop")
    assert (dropped["n_pairs"], dropped["n_missing"], dropped["coverage"]) == (5, 1, 0.8)
    # Covered pairs: cosines -1, 0, 0.707, 1 for gold 0, 1, 3, 4: monotone.
    assert dropped["spearman"] == pytest.approx(1.0)
    zero = score_sts(gold, e1, e2, oov_policy="zero")
    # Cosines -1, 0, 0, 0.707, 1: ranks 1, 2.5, 2.5, 4, 5 against 1..5.
    assert zero["spearman"] == pytest.approx(spearmanr(gold, [-1, 0, 0, 0.7071, 1]).statistic)
    assert zero["spearman"] < dropped["spearman"]  # what dropping silently would inflate
    zero_vector = score_sts(gold, e1, np.where(np.isnan(e2), 0.0, e2), oov_policy="drop")
    assert zero_vector["n_missing"] == 1  # a zero vector has no direction: no similarity either
    nan_pred = score_sts(gold, predictions=[0.0, 0.1, np.nan, 0.5, 0.9], oov_policy="drop")
    assert nan_pred["n_missing"] == 1 and nan_pred["spearman"] == pytest.approx(1.0)


def test_sts_bad_input() -> None:
    with pytest.raises(ValueError, match="oov_policy"):
        score_sts([1, 2], predictions=[1, 2], oov_policy="ignore")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="references: 1 value"):
        score_sts([1, np.nan, 3], predictions=[1, 2, 3])
    with pytest.raises(ValueError, match="gold scores are all equal"):
        score_sts([2, 2, 2], predictions=[1, 2, 3])
    with pytest.raises(ValueError, match="length mismatch"):
        score_sts([1, 2, 3], predictions=[1, 2])
    with pytest.raises(ValueError, match="either predictions or embeddings"):
        score_sts([1, 2], embeddings1=[[1.0]], predictions=[1, 2])
    with pytest.raises(ValueError, match="every similarity is the same"):
        score_sts([1, 2, 3], predictions=[1, 1, 1])


# -- NER -------------------------------------------------------------------------------------


def test_conlleval_chunking_edge_cases() -> None:
    assert entities(["B-C", "I-C", "O", "B-D"]) == [("C", 0, 1), ("D", 3, 3)]
    assert entities(["O", "I-C", "I-C"]) == [("C", 1, 2)]  # I after O starts an entity
    assert entities(["B-C", "I-D"]) == [("C", 0, 0), ("D", 1, 1)]  # a type change ends one
    assert entities(["B-C", "B-C"]) == [("C", 0, 0), ("C", 1, 1)]
    assert entities(["S-C", "B-C", "E-C", "I-C"]) == [("C", 0, 0), ("C", 1, 2), ("C", 3, 3)]
    assert entities(["B", "I"]) == [("_", 0, 1)]


def test_strict_iob2_chunking() -> None:
    assert entities(["O", "I-C", "I-C"], mode="strict") == []  # no B: no entity
    assert entities(["B-C", "I-C", "I-D", "B-D"], mode="strict") == [("C", 0, 1), ("D", 3, 3)]
    with pytest.raises(ValueError, match="'E-C' is not a tag"):
        entities(["B-C", "E-C"], mode="strict")
    with pytest.raises(ValueError, match="mode"):
        entities(["O"], mode="lenient")


def test_ner_hand_checked() -> None:
    gold = [["B-Chem", "I-Chem", "O", "B-Dis"], ["B-Chem", "O"]]
    pred = [["B-Chem", "I-Chem", "O", "O"], ["B-Chem", "B-Dis"]]
    out = score_ner(pred, gold)
    # Chem: 2 gold, 2 predicted, 2 right. Dis: 1 gold, 1 predicted (sentence 2), 0 right.
    assert out["Chem"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0, "number": 2}
    assert out["Dis"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "number": 1}
    assert out["overall_precision"] == pytest.approx(2 / 3) and out[
        "overall_recall"
    ] == pytest.approx(2 / 3)
    assert out["overall_accuracy"] == pytest.approx(4 / 6)
    f2 = score_ner(pred, gold, beta=2.0)["overall_f1"]
    assert f2 == pytest.approx(5 * (2 / 3) * (2 / 3) / (4 * (2 / 3) + 2 / 3))
    assert out["macro_f1"] == 0.5 and out["weighted_f1"] == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="sentence 1 has 1 predicted and 2 gold"):
        score_ner([["O"], ["O"]], [["O"], ["O", "O"]])
    with pytest.raises(ValueError, match="'X-Chem' is not a tag"):
        score_ner([["X-Chem"]], [["O"]])
    with pytest.raises(ValueError, match="beta"):
        score_ner([["O"]], [["O"]], beta=0)


TAGS = st.sampled_from(["O", "O", "B-A", "I-A", "B-B", "I-B", "I"])


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.lists(st.tuples(TAGS, TAGS), min_size=1, max_size=12), min_size=1, max_size=6),
    st.sampled_from([None, "strict"]),
    st.sampled_from([0.5, 1.0, 2.0]),
)
def test_ner_equals_seqeval(
    pairs: list[list[tuple[str, str]]], mode: str | None, beta: float
) -> None:
    pytest.importorskip("seqeval")
    import warnings

    from seqeval.metrics import accuracy_score, classification_report, sequence_labeling, v1
    from seqeval.scheme import IOB2

    gold = [[g for g, _ in sent] for sent in pairs]
    pred = [[p for _, p in sent] for sent in pairs]
    if mode == "strict":
        # seqeval's strict IOB2 rejects a bare "I" (no type); so do we, with a clear message.
        gold = [[t if t != "I" else "O" for t in s] for s in gold]
        pred = [[t if t != "I" else "O" for t in s] for s in pred]
    ours = score_ner(pred, gold, beta=beta, mode=mode)

    def prfs(average: str | None) -> tuple:
        if mode == "strict":
            return v1.precision_recall_fscore_support(
                gold, pred, average=average, beta=beta, zero_division=0, scheme=IOB2
            )
        return sequence_labeling.precision_recall_fscore_support(
            gold, pred, average=average, beta=beta, zero_division=0
        )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kwargs = {"mode": "strict", "scheme": IOB2} if mode == "strict" else {}
        report = classification_report(gold, pred, output_dict=True, zero_division=0, **kwargs)
        p, r, f, support = prfs(None)
        mp, mr, mf, _ = prfs("micro")
        _, _, macro, _ = prfs("macro")
    types = sorted(k for k in report if not k.endswith(" avg"))
    assert types == sorted(k for k, v in ours.items() if isinstance(v, dict))
    for i, t in enumerate(types):
        assert ours[t]["precision"] == pytest.approx(p[i]) and ours[t]["recall"] == pytest.approx(
            r[i]
        )
        assert ours[t]["f1"] == pytest.approx(f[i]) and ours[t]["number"] == support[i]
    assert (ours["overall_precision"], ours["overall_recall"]) == (
        pytest.approx(mp),
        pytest.approx(mr),
    )
    assert ours["overall_f1"] == pytest.approx(mf)
    assert ours["overall_accuracy"] == pytest.approx(accuracy_score(gold, pred))
    if types:  # with no entity at all seqeval's macro mean is NaN; ours is 0.0, never NaN
        assert ours["macro_f1"] == pytest.approx(macro)
    else:
        assert ours["macro_f1"] == 0.0


def test_evaluate_modules_equal_the_functions(rng: np.random.Generator) -> None:
    evaluate = pytest.importorskip("evaluate")
    from .conftest import REPO_ROOT

    sts = evaluate.load(str(REPO_ROOT / "metrics" / "sts"))
    e1, e2 = rng.standard_normal((20, 6)), rng.standard_normal((20, 6))
    gold = rng.uniform(0, 5, 20).tolist()
    assert sts.compute(references=gold, embeddings1=e1, embeddings2=e2) == score_sts(gold, e1, e2)
    preds = [float(x) for x in rng.uniform(0, 1, 20)]
    preds[3] = float("nan")
    got = sts.compute(references=gold, predictions=preds, oov_policy="drop")
    assert got == score_sts(gold, predictions=preds, oov_policy="drop") and got["n_missing"] == 1
    ner = evaluate.load(str(REPO_ROOT / "metrics" / "ner"))
    gold_tags = [["B-C", "I-C", "O"], ["O", "B-D"]]
    pred_tags = [["B-C", "O", "O"], ["O", "B-D"]]
    assert ner.compute(predictions=pred_tags, references=gold_tags, beta=2.0) == score_ner(
        pred_tags, gold_tags, beta=2.0
    )
    for name in ("sts", "ner"):
        for f in (f"{name}.py", "README.md", "app.py", "requirements.txt"):
            assert (REPO_ROOT / "metrics" / name / f).is_file()
