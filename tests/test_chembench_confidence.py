"""ChemBench confidence (prompt, parsing, calibration), refusal retries in generate and the LLM
fallback extractor, end to end through a loopback OpenAI-compatible server (issue 18). ~1 s."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar

import pytest
from scipy.stats import spearmanr

from chemteb_eval.chembench.calibration import calibration, spearman
from chemteb_eval.chembench.parse import extract_confidence, extract_number
from chemteb_eval.chembench.prompts import CONFIDENCE_LINE, build_prompt
from chemteb_eval.chembench.questions import Question
from chemteb_eval.chembench.score import score_chembench
from chemteb_eval.cli import main

from .helpers.loopback import chat_reply, read_json, serving
from .test_chembench_surfaces import MCQ, NUM


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[ANSWER]B[/ANSWER]\n[CONFIDENCE]4[/CONFIDENCE]", 4.0),
        ("[ANSWER]B[/ANSWER] <confidence> **5** </confidence>", 5.0),
        ("The answer is B. Confidence: 3/5", 3.0),
        ("My confidence level is 2 out of 5.", 2.0),
        ("[CONFIDENCE]4[/CONFIDENCE] ... [CONFIDENCE]4[/CONFIDENCE]", 4.0),
        ("[CONFIDENCE]high[/CONFIDENCE]", None),
        ("[CONFIDENCE]7[/CONFIDENCE]", None),
        ("[CONFIDENCE]0[/CONFIDENCE]", None),
        ("[CONFIDENCE]2[/CONFIDENCE] or [CONFIDENCE]4[/CONFIDENCE]", None),
        ("[ANSWER]B[/ANSWER]", None),
    ],
)
def test_confidence_is_read_robustly(text: str, expected: float | None) -> None:
    assert extract_confidence(text) == expected


def test_answer_readers_never_see_the_confidence() -> None:
    assert extract_number("6\n[CONFIDENCE]4[/CONFIDENCE]").value == 6.0
    assert extract_number("[CONFIDENCE]4[/CONFIDENCE]").value is None


@pytest.mark.parametrize(
    "text",
    [
        "Confidence: 4/10",  # another scale: not 4 on ours, and not rescaled (a guess)
        "[CONFIDENCE]4/10[/CONFIDENCE]",
        "My confidence is 7 out of 10.",
        "Confidence: 1e3",  # 1000, out of range; not 1 with "e3" left over
        "[CONFIDENCE]1e3[/CONFIDENCE]",
        "Confidence: 80%",
        "Confidence: 4/10x",
        "[CONFIDENCE]4[/CONFIDENCE] [CONFIDENCE]4/10[/CONFIDENCE]",  # one of them is off-scale
    ],
)
def test_item7_confidence_fraction_scale(text: str) -> None:
    assert extract_confidence(text) is None
    # on our scale the same forms still read
    assert extract_confidence("Confidence: 4/5") == 4.0
    assert extract_confidence("confidence is 3.5.") == 3.5


@pytest.mark.parametrize(
    "text",
    [
        "Confidence: 3",
        "Confidence: 3/5",
        "My confidence level is 3 out of 5.",
        "Confidence: 6/10",
        "Confidence: 3e0",
    ],
)
def test_item7_a_confidence_alone_is_no_answer(text: str) -> None:
    question = Question.from_dict(dict(NUM, examples=[{"input": "How many?", "target": "3"}]))
    assert extract_number(text).value is None
    out = score_chembench([text], [question.to_dict()], return_details=True)
    assert out["fraction_correct"] == 0.0 and out["n_parse_failures"] == 1
    # an answer next to the statement is still read, and the confidence is not taken for it
    assert extract_number(f"The answer is 6. {text}").value == 6.0
    assert extract_number(f"6\n{text}").value == 6.0


def test_the_prompt_asks_for_it_in_instruction_mode_only() -> None:
    question = Question.from_dict(MCQ)
    prompt, _ = build_prompt(question, confidence=True)
    assert prompt.endswith(CONFIDENCE_LINE)
    assert CONFIDENCE_LINE not in build_prompt(question)[0]
    with pytest.raises(ValueError, match="confidence: asked for with instruction prompts only"):
        build_prompt(question, mode="completion", confidence=True)


def test_calibration_by_hand() -> None:
    out = calibration([5, 4, 2, 1, None], [True, True, False, True, False])
    assert (out["n_with_confidence"], out["n_without_confidence"]) == (4, 1)
    assert out["mean_confidence_correct"] == pytest.approx(10 / 3)
    assert out["mean_confidence_wrong"] == 2.0
    # mapped (c - 1) / 4: 1, .75, .25, 0 against 1, 1, 0, 1
    assert out["brier"] == pytest.approx((0 + 0.0625 + 0.0625 + 1) / 4)
    # 5 bins of width 0.2; each level alone in its bin: |0 - 1|, |.25 - 0|, |.75 - 1|, |1 - 1|
    assert out["ece"] == pytest.approx((1 + 0.25 + 0.25 + 0) / 4)
    assert [b["n"] for b in out["bins"]] == [1, 1, 0, 1, 1]
    empty = calibration([None, None], [True, False])
    assert empty["ece"] is None and empty["brier"] is None and empty["n_without_confidence"] == 2


@pytest.mark.parametrize("seed", range(20))
def test_spearman_equals_scipy_with_ties(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(2, 30)
    x = [float(rng.randint(1, 5)) for _ in range(n)]
    y = [float(rng.random() < 0.5) for _ in range(n)]
    ours = spearman(x, y)
    if len(set(x)) == 1 or len(set(y)) == 1:
        assert ours is None
    else:
        assert ours == pytest.approx(float(spearmanr(x, y).statistic), abs=1e-12)


def test_scoring_with_confidences_reports_calibration_overall_and_by_topic() -> None:
    questions = [dict(MCQ), dict(NUM)]
    out = score_chembench(
        ["[ANSWER]A[/ANSWER]", "[ANSWER]7[/ANSWER]"],
        questions,
        confidences=[5, 3],
        return_details=True,
    )
    assert out["calibration"]["mean_confidence_correct"] == 5.0
    assert out["calibration"]["mean_confidence_wrong"] == 3.0
    assert set(out["calibration_by_topic"]) == {"unknown"}
    assert [d["confidence"] for d in out["details"]] == [5.0, 3.0]
    assert "calibration" not in score_chembench(["[ANSWER]A[/ANSWER]"], [MCQ])
    cases: list[tuple[list[Any], str]] = [
        ([6, 3], "entry 0 is 6, outside"),
        (["4", 3], "entry 0 is '4'"),
        ([True, 3], "entry 0 is True"),
        ([4], "1 given for 2"),
    ]
    for bad, message in cases:
        with pytest.raises(ValueError, match=message):
            score_chembench(["A", "7"], questions, confidences=bad)


# -- through a loopback server: confidence, refusal retries, the fallback extractor -----------


class _Scripted(BaseHTTPRequestHandler):
    """Refuses the multiple-choice question once, answers it with a confidence the second time;
    answers the numeric one in prose no rule reads; restates answers when asked to extract."""

    calls: ClassVar[list[str]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = read_json(self)
        prompt = body["messages"][0]["content"]
        type(self).calls.append(prompt)
        if prompt.startswith("Below is a model's response"):
            answer = "[ANSWER]6[/ANSWER]"
        elif "Options:" in prompt:
            asked = sum("Options:" in p for p in type(self).calls)
            answer = (
                "I'm sorry, I can't help with that."
                if asked == 1
                else "[ANSWER]A[/ANSWER]\n[CONFIDENCE]4[/CONFIDENCE]"
            )
        else:
            answer = (
                "Carbon sits in group 14 with six protons in every nucleus, as chemists know.\n"
                "[CONFIDENCE]2[/CONFIDENCE]"
            )
        chat_reply(self, answer)


@pytest.fixture
def scripted() -> Iterator[str]:
    _Scripted.calls = []
    with serving(_Scripted) as base:
        yield base


def test_generate_retries_refusals_and_score_reads_confidence_and_extracts(
    tmp_path: Path, scripted: str, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = tmp_path / "q"
    questions.mkdir()
    (questions / "mcq_1.json").write_text(json.dumps(MCQ))
    (questions / "num_1.json").write_text(json.dumps(NUM))
    out = tmp_path / "gen.jsonl"
    common = ["--questions", str(questions)]
    generate = ["chembench", "generate", *common, "-m", "openai:tiny", "--api-base", scripted]
    args = [*generate, "--out", str(out), "--confidence", "--max-retries", "2", "--quiet"]
    assert main(args) == 0
    assert all(CONFIDENCE_LINE in p for p in _Scripted.calls)
    rows = {r["key"]: r for r in map(json.loads, out.read_text().splitlines())}
    mcq = next(r for k, r in rows.items() if "mcq" in k)
    assert len(mcq["attempts"]) == 2 and mcq["attempts"][0].startswith("I'm sorry")
    capsys.readouterr()
    score = ["chembench", "score", *common, "--completions", str(out), "--confidence"]
    assert all(r["model"] == "openai:tiny" for r in rows.values())
    # --extractor without a model: the model under test, as generate recorded it
    assert main([*score, "--extractor", "--api-base", scripted]) == 0
    printed = capsys.readouterr().out
    assert "refusals re-asked: 1 question(s), 1 retries; still refused: 0" in printed
    assert "answers read by the extractor model: 1" in printed
    report = json.loads((tmp_path / "gen.report.json").read_text())
    assert report["fraction_correct"] == 1.0 and report["n_refusals"] == 0
    assert report["n_llm_extracted"] == 1
    assert [d["method"] for d in report["details"]].count("llm") == 1
    assert report["calibration"]["n_with_confidence"] == 2
    assert report["calibration"]["mean_confidence_correct"] == 3.0
    # without the extractor, the numeric answer is a parse failure
    assert main([*score, "--report", str(tmp_path / "plain.json")]) == 0
    plain = json.loads((tmp_path / "plain.json").read_text())
    assert plain["n_parse_failures"] == 1 and plain["n_llm_extracted"] == 0


def test_the_evaluate_module_takes_confidences() -> None:
    evaluate = pytest.importorskip("evaluate")
    from tests.conftest import REPO_ROOT

    module = evaluate.load(str(REPO_ROOT / "metrics" / "chembench"))
    completions = ["[ANSWER]A[/ANSWER]", "[ANSWER]7[/ANSWER]"]
    want = score_chembench(completions, [MCQ, NUM], confidences=[5, 2])
    got = module.compute(predictions=completions, references=[MCQ, NUM], confidences=[5, 2])
    assert got == want and got["calibration"]["mean_confidence_wrong"] == 2.0
    read = module.compute(
        predictions=["[ANSWER]A[/ANSWER] [CONFIDENCE]4[/CONFIDENCE]", "7"],
        references=[MCQ, NUM],
        read_confidence=True,
    )
    assert read["calibration"]["n_with_confidence"] == 1


def test_extractor_without_a_recorded_model_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = tmp_path / "q"
    questions.mkdir()
    (questions / "mcq_1.json").write_text(json.dumps(MCQ))
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"key": "u-mcq-1", "completion": "hmm"}) + "\n")
    args = ["chembench", "score", "--questions", str(questions), "--completions", str(answers)]
    assert main([*args, "--extractor"]) == 2
    assert "does not record the model that wrote it" in capsys.readouterr().err


def test_retries_judge_refusals_as_scoring_does(tmp_path: Path) -> None:
    """An apology around a readable answer is not re-asked; an empty reply is."""
    from chemteb_eval.chembench.run import generate_completions

    replies = iter(["Sorry for the confusion: [ANSWER]A[/ANSWER]", "", "[ANSWER]6[/ANSWER]"])
    calls: list[int] = []

    def generate(prompts: Any) -> list[str]:
        calls.append(len(prompts))
        return [next(replies) for _ in prompts]

    questions = [Question.from_dict(MCQ), Question.from_dict(NUM)]
    out = tmp_path / "gen.jsonl"
    generate_completions(questions, generate, out, max_retries=3, progress=False)
    assert calls == [2, 1]  # both asked, then only the empty one again
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [len(r["attempts"]) for r in rows] == [1, 2]
