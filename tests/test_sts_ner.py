"""STS (with its OOV policy) and NER entity F-beta: hand-checked values, seqeval differential."""

from __future__ import annotations

import math
import random
from typing import Any

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
    assert entities(["B-C", "I-C"], mode="strict", scheme="IOB2") == [("C", 0, 1)]
    with pytest.raises(ValueError, match=r"tags: 'E-C' is not a tag of the IOB2 scheme \(tag 1\)"):
        entities(["B-C", "E-C"], mode="strict")
    with pytest.raises(ValueError, match="mode"):
        entities(["O"], mode="lenient")


def test_each_scheme_hand_checked() -> None:
    def strict(tags: str, scheme: str) -> list[tuple[str, int, int]]:
        return entities(tags.split(), mode="strict", scheme=scheme)

    # IOB1: I- opens an entity; B- only where one follows another of the same type.
    assert strict("I-A I-A B-A O I-B", "IOB1") == [("A", 0, 1), ("A", 2, 2), ("B", 4, 4)]
    # A B- after O is not IOB1 (B- only follows an entity of its type): seqeval's rules open
    # nothing there, and the I-A after it opens an entity of its own.
    assert strict("B-A I-A", "IOB1") == [("A", 1, 1)]
    # IOE1: E- closes an entity that another of its type follows.
    assert strict("I-A E-A I-A O", "IOE1") == [("A", 0, 1), ("A", 2, 2)]
    # ...and seqeval's IOE1 gap, reproduced: an E- right after O opens nothing, so the single
    # token entity at 1 is lost (seqeval's scheme.py marks IOE1 "hasn't yet been able to handle
    # some cases"); I-A E-A I-B (E- before another type) is not closed, so it is no entity.
    assert strict("O E-A I-A", "IOE1") == [("A", 2, 2)]
    assert strict("I-A E-A I-B", "IOE1") == [("B", 2, 2)]
    # IOE2: every entity ends with E-.
    assert strict("I-A E-A E-A O I-B E-B", "IOE2") == [("A", 0, 1), ("A", 2, 2), ("B", 4, 5)]
    assert strict("I-A I-A O", "IOE2") == []  # never closed by E-: no entity
    # IOBES: S- single, B- I-* E- longer; a B- never closed by E- is no entity.
    assert strict("S-A B-B I-B E-B O B-A I-A", "IOBES") == [("A", 0, 0), ("B", 1, 3)]
    assert strict("B-A E-B", "IOBES") == []  # E- of another type does not close it
    # BILOU: U- single, B- I-* L-.
    assert strict("U-A B-B L-B O B-A I-A L-A", "BILOU") == [
        ("A", 0, 0),
        ("B", 1, 2),
        ("A", 4, 6),
    ]
    # strict mode's type: seqeval strips hyphens around it; a bare prefix is type "_".
    assert strict("B-A- I--A", "IOB2") == [("A", 0, 1)]
    assert strict("S", "IOBES") == [("_", 0, 0)]
    # conlleval keeps what follows "B-" as it is.
    assert entities(["B-A-", "I--A"]) == [("A-", 0, 0), ("-A", 1, 1)]


def test_scheme_and_mode_arguments() -> None:
    gold = [["B-C", "I-C", "O"]]
    assert score_ner(gold, gold, mode="strict") == score_ner(
        gold, gold, mode="strict", scheme="IOB2"
    )
    with pytest.raises(
        ValueError,
        match=r"^scheme: should be one of \[IOB1, IOB2, IOE1, IOE2, IOBES, BILOU\], got 'iob2'",
    ):
        score_ner(gold, gold, mode="strict", scheme="iob2")
    with pytest.raises(ValueError, match=r"^scheme: should be one of .* got 3"):
        score_ner(gold, gold, mode="strict", scheme=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^scheme: 'IOBES' is read in strict mode only"):
        score_ner(gold, gold, scheme="IOBES")
    with pytest.raises(ValueError, match=r"^mode: 'Strict'"):
        score_ner(gold, gold, mode="Strict")
    # A tag the scheme lacks names the argument, sentence and tag (seqeval: "Invalid token").
    with pytest.raises(
        ValueError,
        match=r"^predictions: 'B-C' is not a tag of the IOE2 scheme \(sentence 1, tag 0\); "
        r"use 'O' or a prefix \(I/E\)",
    ):
        score_ner([["O"], ["B-C"]], [["O"], ["O"]], mode="strict", scheme="IOE2")
    with pytest.raises(ValueError, match=r"^references: 'U-C' is not a tag of the IOBES scheme"):
        score_ner([["O"]], [["U-C"]], mode="strict", scheme="IOBES")
    for odd in ("BChem", "O-Chem", "", "X-Chem", "L-C"):  # L- is BILOU's only
        with pytest.raises(ValueError, match=r"^references: .* is not a tag"):
            score_ner([["O"]], [[odd]])


def test_a_corpus_without_entities_scores_as_seqeval_does() -> None:
    import warnings

    from seqeval.metrics import classification_report, sequence_labeling, v1
    from seqeval.scheme import IOB2

    tags = [["O", "O"], ["O"]]
    for mode, scheme in ((None, None), ("strict", "IOB2"), ("strict", "BILOU")):
        out = score_ner(tags, tags, mode=mode, scheme=scheme)
        assert out == {
            "overall_precision": 0.0,
            "overall_recall": 0.0,
            "overall_f1": 0.0,
            "overall_accuracy": 1.0,
            "macro_f1": 0.0,
            "weighted_f1": 0.0,
            "main_score": 0.0,
        }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = classification_report(tags, tags, output_dict=True)  # evaluate's seqeval
        strict = classification_report(tags, tags, output_dict=True, mode="strict", scheme=IOB2)
        macro = sequence_labeling.precision_recall_fscore_support(tags, tags, average="macro")
        weighted = v1.precision_recall_fscore_support(tags, tags, average="weighted", scheme=IOB2)
    for r in (report, strict):
        assert set(r) == {"micro avg", "macro avg", "weighted avg"}  # no entity type
        assert [r["micro avg"][k] for k in ("precision", "recall", "f1-score")] == [0, 0, 0]
    assert weighted[:3] == (0.0, 0.0, 0.0)
    assert np.isnan(macro[2])  # seqeval's macro mean of no types; ours is 0.0, never NaN


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


# -- differential: seqeval over every scheme --------------------------------------------------

SCHEMES = ("IOB1", "IOB2", "IOE1", "IOE2", "IOBES", "BILOU")
PREFIXES = {"IOB1": "IOB", "IOB2": "IOB", "IOE1": "IOE", "IOE2": "IOE", "IOBES": "IOBES"}
PREFIXES["BILOU"] = "BILOU"
CONLLEVAL_PREFIXES = "OBIES"
# types, with seqeval's odd spellings: a bare prefix (type "_"), hyphens around a type
TYPES = ("-A", "-A", "-B", "-B", "", "-A-", "--B")


def seqeval_scores(
    pred: list[list[str]], gold: list[list[str]], mode: str | None, scheme: str | None, beta: float
) -> dict[str, Any]:
    """seqeval's numbers under score_ner's keys: evaluate's seqeval route (classification_report)
    for the entity types, precision_recall_fscore_support for the beta and the averages."""
    import warnings

    import seqeval.scheme
    from seqeval.metrics import accuracy_score, classification_report, sequence_labeling, v1

    cls = None if scheme is None else getattr(seqeval.scheme, scheme)

    def prfs(average: str | None) -> Any:
        if mode == "strict":
            return v1.precision_recall_fscore_support(
                gold, pred, average=average, beta=beta, zero_division=0, scheme=cls
            )
        return sequence_labeling.precision_recall_fscore_support(
            gold, pred, average=average, beta=beta, zero_division=0
        )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kwargs: dict[str, Any] = {"mode": "strict", "scheme": cls} if mode == "strict" else {}
        report = classification_report(gold, pred, output_dict=True, zero_division=0, **kwargs)
        p, r, f, support = prfs(None)
        mp, mr, mf, _ = prfs("micro")
        _, _, macro, _ = prfs("macro")
        _, _, weighted, _ = prfs("weighted")
    types = sorted(k for k in report if not k.endswith(" avg"))
    out: dict[str, Any] = {
        t: {"precision": p[i], "recall": r[i], "f1": f[i], "number": support[i]}
        for i, t in enumerate(types)
    }
    if beta == 1.0:  # evaluate's route has F1 only: it must agree
        for t in types:
            assert report[t]["f1-score"] == pytest.approx(out[t]["f1"])
            assert report[t]["support"] == out[t]["number"]
    out.update(
        overall_precision=mp,
        overall_recall=mr,
        overall_f1=mf,
        # seqeval divides by zero on a corpus of empty sentences; ours is 0.0 there
        overall_accuracy=accuracy_score(gold, pred) if any(gold) else 0.0,
        macro_f1=macro if types else 0.0,  # seqeval: NaN with no type; ours 0.0
        weighted_f1=weighted,
        main_score=mf,
    )
    return out


def assert_same_scores(ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    assert set(ours) == set(theirs)
    for key, want in theirs.items():
        if isinstance(want, dict):
            assert set(ours[key]) == set(want)
            for k, v in want.items():
                assert ours[key][k] == pytest.approx(float(v), abs=1e-12), (key, k)
            assert isinstance(ours[key]["number"], int)
        else:
            assert ours[key] == pytest.approx(float(want), abs=1e-12), key


def random_tag(rng: random.Random, prefixes: str) -> str:
    prefix = rng.choice(prefixes + "O")
    return "O" if prefix == "O" else prefix + rng.choice(TYPES)


def random_pair(rng: random.Random, prefixes: str) -> tuple[list[list[str]], list[list[str]]]:
    """Gold sentences of random tags, and predictions of the same lengths, often the gold tag."""
    gold = [
        [random_tag(rng, prefixes) for _ in range(rng.randint(0, 10))]
        for _ in range(rng.randint(1, 5))
    ]
    pred = [[t if rng.random() < 0.6 else random_tag(rng, prefixes) for t in s] for s in gold]
    return pred, gold


@pytest.mark.parametrize("scheme", [None, *SCHEMES])
def test_every_key_equals_seqeval_on_random_tags(scheme: str | None) -> None:
    pytest.importorskip("seqeval")
    rng = random.Random(f"ner-{scheme}")
    mode = None if scheme is None else "strict"
    prefixes = CONLLEVAL_PREFIXES if scheme is None else PREFIXES[scheme]
    seen_types = 0
    for n in range(400):
        pred, gold = random_pair(rng, prefixes)
        beta = (1.0, 0.5, 2.0, math.inf)[n % 4]
        ours = score_ner(pred, gold, beta=beta, mode=mode, scheme=scheme)
        assert_same_scores(ours, seqeval_scores(pred, gold, mode, scheme, beta))
        seen_types += sum(isinstance(v, dict) for v in ours.values())
    assert seen_types > 400  # the corpora had entities to score


@pytest.mark.parametrize("scheme", SCHEMES)
def test_a_tag_the_scheme_lacks_is_an_error_as_in_seqeval(scheme: str) -> None:
    pytest.importorskip("seqeval")
    import seqeval.scheme
    from seqeval.metrics import classification_report

    rng = random.Random(f"bad-{scheme}")
    foreign = [c for c in "IOBESUL" if c not in PREFIXES[scheme]] + ["X"]
    for _ in range(60):
        pred, gold = random_pair(rng, PREFIXES[scheme])
        where = rng.choice([pred, gold])
        sentence = rng.randrange(len(where))
        where[sentence].insert(rng.randint(0, len(where[sentence])), rng.choice(foreign) + "-A")
        other = gold if where is pred else pred
        other[sentence].append("O")
        with pytest.raises((ValueError, KeyError)):  # seqeval: "Invalid token", or KeyError
            classification_report(
                gold, pred, mode="strict", scheme=getattr(seqeval.scheme, scheme), output_dict=True
            )
        name = "predictions" if where is pred else "references"
        with pytest.raises(ValueError, match=rf"^{name}: .* is not a tag of the {scheme} scheme"):
            score_ner(pred, gold, mode="strict", scheme=scheme)


def encode(spans: list[tuple[str, int, int]], n: int, scheme: str) -> list[str]:
    """Entities as a well-formed tag sequence of ``scheme`` (spans sorted, not overlapping)."""
    tags = ["O"] * n
    for k, (t, a, b) in enumerate(spans):
        follows_same = k > 0 and spans[k - 1][0] == t and spans[k - 1][2] == a - 1
        followed_by_same = k + 1 < len(spans) and spans[k + 1][0] == t and spans[k + 1][1] == b + 1
        tags[a : b + 1] = [f"I-{t}"] * (b + 1 - a)
        if scheme == "IOB2" or (scheme == "IOB1" and follows_same):
            tags[a] = f"B-{t}"
        elif scheme == "IOE2" or (scheme == "IOE1" and followed_by_same):
            tags[b] = f"E-{t}"
        elif scheme in ("IOBES", "BILOU"):
            single, first, last = ("S", "B", "E") if scheme == "IOBES" else ("U", "B", "L")
            if a == b:
                tags[a] = f"{single}-{t}"
            else:
                tags[a], tags[b] = f"{first}-{t}", f"{last}-{t}"
    return tags


def test_encode_writes_each_scheme() -> None:
    spans = [("A", 0, 1), ("A", 2, 2), ("B", 4, 4)]
    assert encode(spans, 5, "IOB1") == ["I-A", "I-A", "B-A", "O", "I-B"]
    assert encode(spans, 5, "IOB2") == ["B-A", "I-A", "B-A", "O", "B-B"]
    assert encode(spans, 5, "IOE1") == ["I-A", "E-A", "I-A", "O", "I-B"]
    assert encode(spans, 5, "IOE2") == ["I-A", "E-A", "E-A", "O", "E-B"]
    assert encode(spans, 5, "IOBES") == ["B-A", "E-A", "S-A", "O", "S-B"]
    assert encode(spans, 5, "BILOU") == ["B-A", "L-A", "U-A", "O", "U-B"]


@pytest.mark.parametrize("scheme", SCHEMES)
def test_well_formed_tags_decode_to_their_entities(scheme: str) -> None:
    pytest.importorskip("seqeval")
    import seqeval.scheme

    rng = random.Random(f"encode-{scheme}")
    lost = 0
    for _ in range(300):
        n, spans, i = rng.randint(1, 12), [], 0
        while i < n:
            if rng.random() < 0.5:
                last = min(n - 1, i + rng.randint(0, 2))
                spans.append((rng.choice("AB"), i, last))
                i = last + 1
            else:
                i += 1
        tags = encode(spans, n, scheme)
        ours = entities(tags, mode="strict", scheme=scheme)
        theirs = seqeval.scheme.Entities([tags], getattr(seqeval.scheme, scheme)).entities[0]
        assert ours == [(e.tag, e.start, e.end - 1) for e in theirs], tags
        if scheme == "IOE1":  # seqeval's gap: an entity opening with E- (after O) is lost
            lost += ours != spans
        else:
            assert ours == spans, tags
    assert lost > 0 if scheme == "IOE1" else lost == 0


@settings(max_examples=200, deadline=None)
@given(st.data(), st.sampled_from([None, *SCHEMES]), st.sampled_from([0.5, 1.0, 2.0]))
def test_ner_equals_seqeval(data: st.DataObject, scheme: str | None, beta: float) -> None:
    pytest.importorskip("seqeval")
    prefixes = CONLLEVAL_PREFIXES if scheme is None else PREFIXES[scheme]
    tag = st.builds(
        lambda c, t: "O" if c == "O" else c + t,
        st.sampled_from(prefixes + "O"),
        st.sampled_from(TYPES),
    )
    pairs = data.draw(
        st.lists(st.lists(st.tuples(tag, tag), min_size=1, max_size=12), min_size=1, max_size=6)
    )
    gold = [[g for g, _ in sent] for sent in pairs]
    pred = [[p for _, p in sent] for sent in pairs]
    mode = None if scheme is None else "strict"
    ours = score_ner(pred, gold, beta=beta, mode=mode, scheme=scheme)
    assert_same_scores(ours, seqeval_scores(pred, gold, mode, scheme, beta))


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
    iobes = [["B-C", "E-C", "O"], ["O", "S-D"]]
    got = ner.compute(predictions=pred_tags, references=iobes, mode="strict", scheme="IOBES")
    assert got == score_ner(pred_tags, iobes, mode="strict", scheme="IOBES")
    assert ner.compute(predictions=pred_tags, references=gold_tags, mode="strict") == score_ner(
        pred_tags, gold_tags, mode="strict", scheme="IOB2"
    )
    with pytest.raises(ValueError, match=r"^scheme: 'IOBES' is read in strict mode only"):
        ner.compute(predictions=pred_tags, references=iobes, scheme="IOBES")
    for name in ("sts", "ner"):
        for f in (f"{name}.py", "README.md", "app.py", "requirements.txt"):
            assert (REPO_ROOT / "metrics" / name / f).is_file()
