# ruff: noqa: RUF001  (Unicode minus, multiplication signs and superscripts are what is tested)
"""ChemBench scoring: every extraction rule, every reference defect, scoring rules, prompts,
questions and keywords, the hand-labelled fixture, and the real questions in ../shared."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chemteb_eval.chembench.load import load_questions
from chemteb_eval.chembench.parse import (
    extract_mcq,
    extract_number,
    find_tagged,
    is_keyword_refusal,
    parse_number,
    word_number,
)
from chemteb_eval.chembench.questions import keyword_problems
from chemteb_eval.chembench.score import (
    Question,
    build_prompt,
    option_order,
    score_chembench,
    score_question,
    strip_wrappers,
)

FIXTURE = Path(__file__).parent / "data" / "chembench_fixture.json"
OPTIONS = [
    "doubled",
    "quadrupled",
    "tripled",
    "halved",
    "PCC",
    "O3",
    "HNO3",
    "H2O2",
    "KMnO4",
]  # A-I


def mcq(scores: dict[str, float], **kw: Any) -> Question:
    return Question(
        name="q", input="Which?", metrics=("multiple_choice_grade",), target_scores=scores, **kw
    )


def num(target: float, **kw: object) -> Question:
    return Question(name="n", input="How much?", metrics=("mae",), target=target, **kw)  # type: ignore[arg-type]


# -- numbers -------------------------------------------------------------------------------

NUMBERS = [
    ("[ANSWER]4.67e5[/ANSWER]", 4.67e5),
    ("[ANSWER]4.67E-5[/ANSWER]", 4.67e-5),
    ("[ANSWER]5.4 x 10^2[/ANSWER]", 540.0),
    ("[ANSWER]5.4 * 10^{2}[/ANSWER]", 540.0),
    ("[ANSWER]5.4 \\times 10^{2}[/ANSWER]", 540.0),
    ("[ANSWER]1.2 × 10⁻³[/ANSWER]", 1.2e-3),
    ("[ANSWER]1.2 × 10^-3[/ANSWER]", 1.2e-3),  # reference: 1.2
    ("[ANSWER]1.2 × 10−3[/ANSWER]", 1.2e-3),  # a lost caret after "× 10"
    ("[ANSWER]1.2*10^(-3)[/ANSWER]", 1.2e-3),
    ("[ANSWER]10^-3[/ANSWER]", 1e-3),
    ("[ANSWER]−3[/ANSWER]", -3.0),  # Unicode minus
    ("[ANSWER]1,234[/ANSWER]", 1234.0),  # reference: 1.0
    ("[ANSWER]1,234,567.5[/ANSWER]", 1234567.5),
    ("[ANSWER]1/2[/ANSWER]", 0.5),  # reference: 1.0
    ("[ANSWER]\\frac{3}{4}[/ANSWER]", 0.75),
    ("[ANSWER]three[/ANSWER]", 3.0),  # reference: no answer
    ("[ANSWER]eleven[/ANSWER]", 11.0),
    ("[ANSWER]one hundred[/ANSWER]", 100.0),
    ("[ANSWER]Two[/ANSWER]", 2.0),
    ("[ANSWER]twenty-three[/ANSWER]", 23.0),
    ("[ANSWER]one hundred and five[/ANSWER]", 105.0),
    ("[ANSWER]fifty-eight point four four[/ANSWER]", 58.44),
    ("[ANSWER]58.44 g/mol[/ANSWER]", 58.44),
    ("[ANSWER]298 K[/ANSWER]", 298.0),
    ("[ANSWER]3500 cm-1[/ANSWER]", 3500.0),
    ("[ANSWER]-285.8 kJ mol^-1[/ANSWER]", -285.8),
    ("[ANSWER]8.314 J mol-1 K-1[/ANSWER]", 8.314),
    ("[ANSWER]pH = 4.5[/ANSWER]", 4.5),
    ("[ANSWER]approximately 4.5[/ANSWER]", 4.5),
    ("[ANSWER]5 ± 0.2[/ANSWER]", 5.0),
    ("[ANSWER]45%[/ANSWER]", 45.0),
    ("[ANSWER]$58.44$[/ANSWER]", 58.44),
    ("[ANSWER]\\(58.44\\,\\text{g/mol}\\)[/ANSWER]", 58.44),
    ("[ANSWER]\\boxed{7}[/ANSWER]", 7.0),
    ("<ANS>12</ANS>", 12.0),
    ("[ANSWER]12[ANSWER]", 12.0),  # closing slash optional
    ("[answer]12[/answer]", 12.0),
    ("The answer is 42 kJ/mol.", 42.0),
    ("M = 22.99 + 35.45 = 58.44 g/mol", 58.44),
    ("Step 1: add.\nFinal answer: 2.5 M", 2.5),
    (" 58.44\n\nbecause...", 58.44),
    ("eleven", 11.0),
]


@pytest.mark.parametrize(("text", "expected"), NUMBERS)
def test_numbers(text: str, expected: float) -> None:
    got = extract_number(text)
    assert got.value == pytest.approx(expected, rel=1e-12), got


NO_NUMBER = [
    ("It happens often.", "reference: 10 ('ten' inside 'often')"),
    ("none of them", "reference: 1 ('one' inside 'none')"),
    ("It is often quoted but I do not recall it.", "no answer"),
    ("[ANSWER]4.5 or 5[/ANSWER]", "two answers"),
    ("[ANSWER]4-5[/ANSWER]", "a range"),
    ("[ANSWER]2[/ANSWER] no wait [ANSWER]3[/ANSWER]", "conflicting tags are not merged"),
    ("1. Compute the moles.\n2. Divide by the volume.", "a numbered list is not an answer"),
    ("[ANSWER]<answer>[/ANSWER]", "an echoed placeholder"),
    ("[ANSWER]58,44[/ANSWER]", "a decimal comma is ambiguous with a list"),
    ("[ANSWER]1e400[/ANSWER]", "out of range: not an answer (and no OverflowError)"),
    ("[ANSWER]1.2 x 10^999[/ANSWER]", "out of range"),
    ("[ANSWER]10^5000[/ANSWER]", "out of range"),
    ("[ANSWER]1e" + "9" * 5000 + "[/ANSWER]", "an exponent beyond int conversion limits"),
]


@pytest.mark.parametrize(("text", "why"), NO_NUMBER)
def test_no_number(text: str, why: str) -> None:
    assert extract_number(text).value is None, why


def test_word_numbers_only_whole_words() -> None:
    assert parse_number("fourteen")[0] == 14.0  # reference: 4
    assert word_number("one two") is None
    assert word_number("twenty thirty") is None
    assert word_number("one thousand two hundred thirty-four") == 1234
    assert parse_number("often")[0] is None


def test_conflicting_tags_are_reported() -> None:
    got = extract_number("[ANSWER]2[/ANSWER] ... [ANSWER]3[/ANSWER]")
    assert got.value is None and got.reason == "conflicting tagged answers"
    same = extract_number("[ANSWER]2[/ANSWER] so again [ANSWER]2.0[/ANSWER]")
    assert same.value == 2.0  # identical answers count once


def test_completion_mode_prefers_the_leading_answer() -> None:
    text = " 4\n\nFor example [ANSWER]3[/ANSWER] would be wrong."
    assert extract_number(text, prefer="leading").value == 4.0
    assert extract_number(text).value == 3.0


def test_llm_extractor_is_the_last_resort() -> None:
    calls: list[str] = []

    def extractor(text: str) -> str:
        calls.append(text)
        return "[ANSWER]7[/ANSWER]"

    assert extract_number("[ANSWER]7[/ANSWER]", llm_extractor=extractor).method == "tag"
    assert calls == []
    got = extract_number("The result is somewhat unclear", llm_extractor=extractor)
    assert got.value == 7.0 and got.method == "llm" and len(calls) == 1


# -- letters -------------------------------------------------------------------------------

LETTERS = [
    ("[ANSWER]B[/ANSWER]", ("B",)),
    ("[ANSWER]A C[/ANSWER]", ("A", "C")),  # reference: no answer
    ("[ANSWER]a, c[/ANSWER]", ("A", "C")),  # reference: no answer (lower case)
    ("[ANSWER]a[/ANSWER]", ("A",)),
    ("[ANSWER]A and C[/ANSWER]", ("A", "C")),
    ("[ANSWER]C,A[/ANSWER]", ("A", "C")),
    ("[ANSWER](B)[/ANSWER]", ("B",)),
    ("[ANSWER]Options A and D[/ANSWER]", ("A", "D")),
    ("[ANSWER]quadrupled[/ANSWER]", ("B",)),  # the option's own text
    ("[ANSWER]B. quadrupled[/ANSWER]", ("B",)),
    ("<ANSWER>B</ANSWER>", ("B",)),
    ("[ANS]B[/ANS]", ("B",)),
    ("[ANSWER]I[/ANSWER]", ("I",)),  # a real option I (nine options)
    ("I would use the milder reagent.\n[ANSWER]I[/ANSWER]", ("I",)),
    ("The answer is B.", ("B",)),
    ("**Answer: (B)**", ("B",)),
    ("The final answer is: B", ("B",)),
    ("I think the correct option is B because of kinetics.", ("B",)),
    ("The correct answers are A and C.", ("A", "C")),
    ("B", ("B",)),
    ("A, C", ("A", "C")),
    (" B\n\nExplanation follows.", ("B",)),
    ("B) quadrupled", ("B",)),
    ("$\\boxed{B}$", ("B",)),
]


@pytest.mark.parametrize(("text", "expected"), LETTERS)
def test_letters(text: str, expected: tuple[str, ...]) -> None:
    got = extract_mcq(text, OPTIONS)
    assert got.value == expected, got


NO_LETTERS = [
    ("I believe it is correct.", "the pronoun I is not option I"),
    ("I think so.", "the pronoun I again"),
    ("A catalyst is needed.", "the article A is not option A"),
    ("[ANSWER]Z[/ANSWER]", "not an option"),
    ("[ANSWER]B or C[/ANSWER]", "hedged"),
    ("[ANSWER]A[/ANSWER] wait [ANSWER]B[/ANSWER]", "conflicting tags are not merged"),
    ("A. wrong\nB. right\nC. wrong", "a walk through the options"),
    ("[ANSWER]A, C, and maybe D[/ANSWER]", "a word that is not a letter"),
]


@pytest.mark.parametrize(("text", "why"), NO_LETTERS)
def test_no_letters(text: str, why: str) -> None:
    assert extract_mcq(text, OPTIONS).value is None, why


def test_letters_win_over_option_texts_that_are_letters() -> None:
    assert extract_mcq("[ANSWER]B[/ANSWER]", ["a", "b", "c"]).value == ("B",)
    assert extract_mcq("[ANSWER]c[/ANSWER]", ["x", "y", "c"]).value == ("C",)


def test_letters_out_of_range_say_so() -> None:
    got = extract_mcq("[ANSWER]E[/ANSWER]", OPTIONS[:4])
    assert got.value is None and "E is not one of the options A-D" in got.reason


def test_tags() -> None:
    assert find_tagged("x [ANSWER] 1 [/ANSWER] y <ans>2</ans>") == [" 1 ", "2"]
    assert find_tagged("reasoning...\n[ANSWER] B") == [" B"]  # unterminated: to the line's end
    assert find_tagged("no tags") == []


# -- refusals ------------------------------------------------------------------------------

REFUSALS = [
    "I'm sorry, but I can't help with that.",
    "I am sorry, I cannot assist with this request.",
    "As an AI language model, I cannot provide that information.",
    "I apologize, but I must decline.",
    "I'm unable to answer questions about weapons.",
    "I can’t help with that.",  # typographic apostrophe
    "This request goes against my guidelines.",
]
NOT_REFUSALS = [
    "Sorry for the confusion, the answer is B.",
    "Unfortunately, the yield drops above 80 °C.",
    "I do not expect a shift in the equilibrium.",
    "Hello! The answer is 4.",
    "Dumping it down the drain is unethical and illegal.",
    "OpenAI's models are not involved here; the pKa is 4.76.",
    "I'm an organic chemist at heart: the answer is B.",
    "It cannot be oxidized further.",
]


@pytest.mark.parametrize("text", REFUSALS)
def test_refusals(text: str) -> None:
    assert is_keyword_refusal(text)


@pytest.mark.parametrize("text", NOT_REFUSALS)
def test_not_refusals(text: str) -> None:
    assert not is_keyword_refusal(text)


def test_a_readable_answer_is_not_a_refusal() -> None:
    q = mcq({"x": 1, "y": 0})
    assert not score_question(q, "I'm sorry, I misread: [ANSWER]A[/ANSWER]").refused
    assert score_question(q, "I'm sorry, but I cannot help with that.").refused
    assert score_question(q, "   ").refused


def test_classifier_and_retries() -> None:
    q = mcq({"x": 1, "y": 0})
    flagged = score_question(q, "Nope.", refusal_classifier=lambda t: t == "Nope.")
    assert flagged.refused and not flagged.correct
    answers = iter(["I'm sorry, I can't answer that.", "[ANSWER]A[/ANSWER]"])
    result = score_question(
        q, "I'm sorry, but I cannot help.", retry=lambda question, n: next(answers), max_retries=3
    )
    assert result.correct and result.retries == 2


# -- scoring -------------------------------------------------------------------------------


def test_mcq_metrics_hand_checked() -> None:
    q = mcq({"p": 1, "q": 0, "r": 1, "s": 0})  # correct: A, C
    exact = score_question(q, "[ANSWER]A,C[/ANSWER]")
    assert exact.correct and exact.metrics == {
        "hamming": 0.0,
        "precision": 1.0,
        "recall": 1.0,
        "f1": 1.0,
        "multiple_choice_grade": 2.0,
    }
    partial = score_question(q, "[ANSWER]A,B[/ANSWER]")
    # hits 1, extra 1, missed 1: precision 1/2, recall 1/2, f1 1/2, hamming (1+1)/2.
    assert not partial.correct
    assert partial.metrics == {
        "hamming": 1.0,
        "precision": 0.5,
        "recall": 0.5,
        "f1": 0.5,
        "multiple_choice_grade": 1.0,
    }


def test_numeric_tolerance_rules() -> None:
    # 1% of |target|, inclusive.
    assert score_question(num(100.0), "[ANSWER]101[/ANSWER]").correct
    assert not score_question(num(100.0), "[ANSWER]101.01[/ANSWER]").correct
    # Negative targets can be right (the reference's 1% of the signed target never is).
    assert score_question(num(-285.8), "[ANSWER]-285.8[/ANSWER]").correct
    assert score_question(num(-285.8), "[ANSWER]-287[/ANSWER]").correct
    assert not score_question(num(-285.8), "[ANSWER]285.8[/ANSWER]").correct
    # A target of 0: the absolute floor (1e-6) accepts 0 (the reference's strict "<" never does).
    assert score_question(num(0.0), "[ANSWER]0[/ANSWER]").correct
    assert score_question(num(0.0), "[ANSWER]0.0000005[/ANSWER]").correct
    assert not score_question(num(0.0), "[ANSWER]0.01[/ANSWER]").correct
    # The question's own tolerance is relative, as its name says.
    own = num(200.0, relative_tolerance=0.1)
    assert score_question(own, "[ANSWER]219[/ANSWER]").correct
    assert not score_question(own, "[ANSWER]221[/ANSWER]").correct
    # The default can be changed.
    assert score_question(num(100.0), "[ANSWER]104[/ANSWER]", relative_tolerance=0.05).correct


def test_score_chembench_report() -> None:
    questions = [
        mcq({"x": 1, "y": 0}, topic="t1", keywords=("requires-knowledge", "difficulty-basic")),
        num(4.0, topic="t1", keywords=("requires-calculation", "difficulty-basic")),
        num(4.0, topic="t2"),
        mcq({"x": 0, "y": 1}, topic="t2"),
    ]
    completions = [
        "[ANSWER]A[/ANSWER]",
        "[ANSWER]4[/ANSWER]",
        "I'm sorry, but I cannot help with that.",
        "I have no idea.",
    ]
    out = score_chembench(completions, questions, return_details=True)
    assert out["main_score"] == out["fraction_correct"] == 0.5
    assert out["fraction_correct_answered"] == 1.0
    assert (out["n_questions"], out["n_correct"], out["n_refusals"], out["n_parse_failures"]) == (
        4,
        2,
        1,
        1,
    )
    assert out["by_topic"]["t1"]["fraction_correct"] == 1.0
    assert out["by_topic"]["t2"] == {
        "n_questions": 2,
        "n_correct": 0,
        "fraction_correct": 0.0,
        "n_refusals": 1,
        "n_parse_failures": 1,
    }
    assert out["by_type"]["mcq"]["n_questions"] == 2 and out["by_type"]["numeric"]["n_correct"] == 1
    assert out["by_keyword"]["difficulty-basic"]["n_correct"] == 2
    assert out["mcq_f1"] == 0.5 and out["numeric_mae"] == 0.0
    assert [d["refused"] for d in out["details"]] == [False, False, True, False]
    json.dumps(out)  # plain JSON


def test_bad_input_is_named() -> None:
    with pytest.raises(ValueError, match="completions: 1 completions for 2 questions"):
        score_chembench(["x"], [num(1.0), num(2.0)])
    with pytest.raises(ValueError, match="questions: none"):
        score_chembench([], [])
    with pytest.raises(ValueError, match="completions: item 0 is int"):
        score_chembench([3], [num(1.0)])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="examples: question x must have exactly one example"):
        Question.from_dict({"name": "x", "examples": []})
    with pytest.raises(ValueError, match="target: question x has 'abc'"):
        Question.from_dict(
            {"name": "x", "metrics": ["mae"], "examples": [{"input": "?", "target": "abc"}]}
        )
    with pytest.raises(ValueError, match="no option scored 1"):
        mcq({"x": 0, "y": 0})
    with pytest.raises(ValueError, match="question: not JSON"):
        Question.from_dict("{oops")


def test_hub_and_local_schemas_agree() -> None:
    local = {
        "name": "q1",
        "uuid": "u1",
        "metrics": ["multiple_choice_grade"],
        "keywords": ["requires-knowledge", "difficulty-basic"],
        "examples": [{"input": "Which?", "target_scores": {"x": 1, "y": 0}}],
    }
    hub = dict(
        local, examples=[{"input": "Which?", "target": None, "target_scores": '{"x": 1, "y": 0}'}]
    )
    hub["relative_tolerance"] = None  # type: ignore[assignment]
    assert Question.from_dict(local) == Question.from_dict(hub)
    numeric = Question.from_dict(
        {
            "name": "n",
            "metrics": ["mae"],
            "relative_tolerance": 0.05,
            "examples": [{"input": "?", "target": "-2"}],
        }
    )
    assert numeric.target == -2.0 and numeric.relative_tolerance == 0.05
    assert Question.from_dict(json.dumps(numeric.to_dict())) == numeric


def test_keyword_problems() -> None:
    assert keyword_problems(["requires-knowledge", "difficulty-basic", "polymers"]) == []
    assert keyword_problems(["requires-knowledge"]) == ["no difficulty keyword"]
    problems = keyword_problems(["requires-reasoning", "difficultly-basic"])
    assert any("misspelt difficulty" in p for p in problems) and "no difficulty keyword" in problems
    assert any("not a requirement keyword" in p for p in keyword_problems(["requires-intuition"]))
    assert any(
        "lowercase" in p for p in keyword_problems(["Requires-Knowledge", "difficulty-basic"])
    )


# -- prompts -------------------------------------------------------------------------------


def test_prompts() -> None:
    q = mcq({"\\ce{H2O}": 1, "$x^2$": 0, "[START_SMILES]CCO[END_SMILES]": 0}, uuid="u-1")
    prompt, options = build_prompt(q)
    assert "[ANSWER]" in prompt and "A. H2O\nB. x^2\nC. CCO" in prompt
    assert options == list(q.target_scores or {})
    kept, _ = build_prompt(q, keep_wrappers=True)
    assert "A. \\ce{H2O}" in kept
    completion, _ = build_prompt(q, mode="completion", cot=True)
    assert completion.rstrip().endswith("Answer:") and "step by step" in completion
    assert "You can choose from A, B, C" in completion
    numeric, opts = build_prompt(num(1.0))
    assert opts == [] and "one number" in numeric and "[ANSWER]" in numeric
    with pytest.raises(ValueError, match="mode"):
        build_prompt(q, mode="chat")  # type: ignore[arg-type]


def test_shuffled_options_score_consistently() -> None:
    q = mcq({f"opt{i}": float(i == 3) for i in range(6)}, uuid="shuffle-me")
    order = option_order(q, 7)
    assert sorted(order) == sorted(q.target_scores or {}) and order == option_order(q, 7)
    assert order != option_order(q, None) or order != option_order(q, 8)
    letter = chr(65 + order.index("opt3"))
    prompt, _ = build_prompt(q, shuffle_seed=7)
    assert f"{letter}. opt3" in prompt
    assert score_question(q, f"[ANSWER]{letter}[/ANSWER]", shuffle_seed=7).correct


def test_strip_wrappers() -> None:
    assert strip_wrappers("\\pu{1.5 mol L-1} of \\ce{NaCl}") == "1.5 mol L-1 of NaCl"
    assert strip_wrappers("[START_RXNSMILES]CC>>CO[END_RXNSMILES]") == "CC>>CO"


# -- the fixture and the real questions ----------------------------------------------------


def test_fixture_parse_and_refusal_rates() -> None:
    """126 hand-labelled completions: what we read must equal what a human reads, or nothing."""
    fixture = json.loads(FIXTURE.read_text(encoding="utf-8"))
    questions = {k: Question.from_dict(v) for k, v in fixture["questions"].items()}
    assert len(fixture["completions"]) >= 100
    right = wrong = invented = refusal_errors = answerable = 0
    for row in fixture["completions"]:
        result = score_question(questions[row["question"]], row["completion"])
        got = list(result.answer) if isinstance(result.answer, tuple) else result.answer
        refusal_errors += result.refused != row["refusal"]
        if row["expected"] is None:
            invented += got is not None
            continue
        answerable += 1
        if got is None:
            continue
        if isinstance(got, float):
            ok = got == pytest.approx(row["expected"], rel=1e-9, abs=1e-12)
        else:
            ok = got == row["expected"]
        right += ok
        wrong += not ok
    assert refusal_errors == 0 and wrong == 0 and invented == 0
    assert right / answerable >= 0.95  # measured 0.972 (benchmarks/bench_chembench_parsers.py)


def test_shared_questions_load_and_score(shared_dir: Path) -> None:
    loaded = load_questions(shared_dir / "data" / "chembench")
    assert len(loaded.questions) == 2788 and not loaded.skipped
    assert sum(q.is_mcq for q in loaded.questions) == 2544
    assert any("difficultly-basic" in p for _, p in loaded.keyword_problems)
    topics = {q.topic for q in loaded.questions}
    assert "safety" in topics and "safety/MSDS" not in topics
    # A perfect answer sheet scores 1; an empty one 0 with every question a refusal.
    perfect = []
    for q in loaded.questions:
        if q.is_mcq:
            letters = [
                chr(65 + i)
                for i, o in enumerate(option_order(q, None))
                if (q.target_scores or {})[o] == 1
            ]
            perfect.append(f"[ANSWER]{', '.join(letters)}[/ANSWER]")
        else:
            perfect.append(f"[ANSWER]{q.target!r}[/ANSWER]")
    out = score_chembench(perfect, loaded.questions)
    assert out["fraction_correct"] == 1.0 and out["n_parse_failures"] == 0
    negatives = [q for q in loaded.questions if not q.is_mcq and (q.target or 0) <= 0]
    assert len(negatives) == 12  # 9 negative targets and 3 zeros: all scorable here
