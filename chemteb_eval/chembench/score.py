"""ChemBench scoring: fraction correct of LLM answers, with refusals and parse failures counted.

Pure functions over strings and dicts (no files, no network, nothing heavy imported):
``load.py`` reads question files and the Hub copy; ``metrics/chembench`` and ``chemteb
chembench`` wrap ``score_chembench``. Answer extraction is ``parse.py``, prompts ``prompts.py``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .calibration import calibration, check_confidences
from .parse import (
    Extraction,
    extract_confidence,
    extract_mcq,
    extract_number,
    is_keyword_refusal,
)
from .prompts import PromptMode, build_prompt, option_order, strip_wrappers
from .questions import DIFFICULTY_KEYWORDS, REQUIREMENT_KEYWORDS, Question, keyword_problems

__all__ = [
    "DIFFICULTY_KEYWORDS",
    "REQUIREMENT_KEYWORDS",
    "Question",
    "QuestionResult",
    "ScoringOptions",
    "build_prompt",
    "check_completions",
    "is_refusal",
    "keyword_problems",
    "option_order",
    "score_chembench",
    "score_question",
    "strip_wrappers",
]

# -- scoring ---------------------------------------------------------------------------------

ABSOLUTE_FLOOR = 1e-6  # the smallest tolerance: makes a target of exactly 0 answerable


@dataclass
class QuestionResult:
    """How one answer scored."""

    key: str
    correct: bool
    refused: bool
    parsed: bool
    answer: tuple[str, ...] | float | None
    method: str
    reason: str = ""
    retries: int = 0
    metrics: dict[str, float | None] = field(default_factory=dict)
    confidence: float | None = None


@dataclass(frozen=True)
class ScoringOptions:
    """How answers are read and judged; ``score_chembench``'s keyword arguments of the same
    names document each one."""

    mode: PromptMode = "instruction"
    shuffle_seed: int | None = None
    relative_tolerance: float = 0.01
    absolute_floor: float = ABSOLUTE_FLOOR
    detect_refusals: bool = True
    refusal_classifier: Callable[[str], bool] | None = None
    retry: Callable[[Question, int], str] | None = None
    max_retries: int = 1
    llm_extractor: Callable[[str], str | None] | None = None
    read_confidence: bool = False

    def __post_init__(self) -> None:
        if self.mode not in ("instruction", "completion"):
            raise ValueError(f"mode: {self.mode!r}; use 'instruction' or 'completion'.")
        if not self.relative_tolerance >= 0 or not self.absolute_floor >= 0:
            raise ValueError("relative_tolerance, absolute_floor: must be >= 0.")


def score_question(
    question: Question,
    completion: str,
    options: ScoringOptions | None = None,
    **changes: Any,
) -> QuestionResult:
    """Score one completion under ``options``, with any field changed by keyword (see
    ``score_chembench`` for the options and the rules)."""
    opts = replace(options or ScoringOptions(), **changes) if changes else options
    opts = opts or ScoringOptions()
    mode, shuffle_seed = opts.mode, opts.shuffle_seed
    retries = 0
    refused = opts.detect_refusals and is_refusal(
        completion, question, mode, shuffle_seed, opts.refusal_classifier
    )
    while refused and opts.retry is not None and retries < opts.max_retries:
        retries += 1
        completion = opts.retry(question, retries)
        refused = is_refusal(completion, question, mode, shuffle_seed, opts.refusal_classifier)
    confidence = extract_confidence(completion) if opts.read_confidence else None
    if refused:
        result = QuestionResult(question.key, False, True, False, None, "none", "refused", retries)
        if question.is_mcq:
            result.metrics = dict(_mcq_metrics(question, (), shuffle_seed))
        result.confidence = confidence
        return result
    extraction = _extract(question, completion, mode, shuffle_seed, opts.llm_extractor)
    result = QuestionResult(
        question.key,
        False,
        False,
        extraction.value is not None,
        extraction.value,
        extraction.method,
        extraction.reason,
        retries,
        confidence=confidence,
    )
    if question.is_mcq:
        chosen = extraction.value if isinstance(extraction.value, tuple) else ()
        mcq_metrics = _mcq_metrics(question, chosen, shuffle_seed)
        result.metrics = dict(mcq_metrics)
        result.correct = result.parsed and mcq_metrics["hamming"] == 0
    elif isinstance(extraction.value, float):
        assert question.target is not None
        error = abs(extraction.value - question.target)
        rel = (
            question.relative_tolerance
            if question.relative_tolerance is not None
            else opts.relative_tolerance
        )
        tolerance = max(rel * abs(question.target), opts.absolute_floor)
        # Answers near float's limit (1e200, 1.7e308) are scored, just wrong: their squared
        # (or even plain) error leaves float's range, and a JSON report holds no inf.
        square = error * error
        result.metrics = {
            "mae": error if math.isfinite(error) else None,
            "mse": square if math.isfinite(square) else None,
            "tolerance": tolerance,
        }
        result.correct = error <= tolerance
    return result


def _extract(
    question: Question,
    completion: str,
    mode: str,
    seed: int | None,
    llm_extractor: Callable[[str], str | None] | None,
) -> Extraction:
    prefer = "leading" if mode == "completion" else "tags"
    if question.is_mcq:
        options = option_order(question, seed)
        return extract_mcq(completion, options, prefer=prefer, llm_extractor=llm_extractor)
    return extract_number(completion, prefer=prefer, llm_extractor=llm_extractor)


def is_refusal(
    completion: str,
    question: Question,
    mode: str,
    seed: int | None,
    classifier: Callable[[str], bool] | None,
) -> bool:
    """Whether ``completion`` refuses ``question``: empty, or flagged by the keyword rules (or
    ``classifier``) without a readable answer."""
    # An empty completion is a refusal to answer; a readable answer is never one, whatever
    # apology surrounds it ("Sorry for the confusion: [ANSWER]B[/ANSWER]").
    if not completion.strip():
        return True
    flagged = is_keyword_refusal(completion) or (classifier is not None and classifier(completion))
    if not flagged:
        return False
    return _extract(question, completion, mode, seed, None).value is None


def _mcq_metrics(question: Question, chosen: Sequence[str], seed: int | None) -> dict[str, float]:
    options = option_order(question, seed)
    scores = question.target_scores or {}
    letter_score = {chr(65 + i): scores[o] for i, o in enumerate(options)}
    expected = {k for k, v in letter_score.items() if v == 1}
    found = set(chosen)
    hits = len(expected & found)
    extra = len(found - expected)
    missed = len(expected - found)
    precision = hits / (hits + extra) if hits + extra else 0.0
    recall = hits / (hits + missed) if hits + missed else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "hamming": (missed + extra) / len(expected),
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "multiple_choice_grade": float(sum(letter_score.get(k, 0.0) for k in found)),
    }


def check_completions(completions: Any) -> list[str]:
    """``completions`` as a list of str; ``ValueError`` naming the first item that is not text
    (bytes, None, a number): the evaluate module runs this before Arrow, which would turn
    them into text and score what the function rejects."""
    if hasattr(completions, "tolist"):
        completions = completions.tolist()
    if completions is None or isinstance(completions, (str, bytes)):
        raise ValueError("completions: must be a list of strings, one per question.")
    try:
        items = list(completions)
    except TypeError:
        raise ValueError("completions: must be a list of strings, one per question.") from None
    for i, completion in enumerate(items):
        if not isinstance(completion, str):
            raise ValueError(f"completions: item {i} is {type(completion).__name__}, not text.")
    return items


def score_chembench(
    completions: Sequence[str],
    questions: Sequence[Question | Mapping[str, Any] | str],
    *,
    mode: PromptMode = "instruction",
    shuffle_seed: int | None = None,
    relative_tolerance: float = 0.01,
    absolute_floor: float = ABSOLUTE_FLOOR,
    detect_refusals: bool = True,
    refusal_classifier: Callable[[str], bool] | None = None,
    retry: Callable[[Question, int], str] | None = None,
    max_retries: int = 1,
    llm_extractor: Callable[[str], str | None] | None = None,
    confidences: Sequence[float | None] | None = None,
    read_confidence: bool = False,
    return_details: bool = False,
) -> dict[str, Any]:
    """Fraction correct of LLM answers to ChemBench questions, overall and broken down.

    Rules: a multiple-choice answer is correct iff the chosen letters equal the options scored
    1 (Hamming loss 0); precision, recall, F1, Hamming and multiple_choice_grade are reported
    too. A numeric answer is correct iff |answer - target| <= max(tol * |target|,
    ``absolute_floor``), where tol is the question's own ``relative_tolerance`` (read as relative,
    as its name says; the reference compares it to the absolute error) or
    ``relative_tolerance`` (1%). The reference uses 1% of the signed target with a strict "<", so
    negative targets and a target of 0 can never be correct; here they can. A refusal scores 0
    and is counted; so is an answer nothing could be read from.

    Args:
        completions: the model's answers, one per question.
        questions: ``Question`` objects, question-file dicts, or their JSON strings.
        mode: the prompt mode the completions answer (``completion`` tries a leading answer
            before tags).
        shuffle_seed: the seed the prompts' options were shuffled with (``None``: file order).
        relative_tolerance: the default numeric tolerance, relative to |target|.
        absolute_floor: the smallest tolerance.
        detect_refusals: check for refusals (keywords, and ``refusal_classifier`` if given).
        refusal_classifier: a callable text -> is a refusal (e.g. a classifier model).
        retry: a callable (question, attempt) -> a new completion, used on refusals.
        max_retries: how many times ``retry`` is called per refused question.
        llm_extractor: a callable text -> answer for completions nothing else reads.
        confidences: the model's confidence per question on the 1-5 scale (``None``: not
            stated); adds ``calibration`` and ``calibration_by_topic``.
        read_confidence: read each confidence from its completion
            (``[CONFIDENCE]4[/CONFIDENCE]``, "Confidence: 4/5"; prompts built with
            ``confidence=True`` ask for it); also adds the calibration.
        return_details: add ``details``: one dict per question.

    Returns:
        ``fraction_correct`` (= ``main_score``: correct / all questions),
        ``fraction_correct_answered`` (correct / questions neither refused nor unparsed),
        ``n_questions``, ``n_correct``, ``n_refusals``, ``n_parse_failures``,
        ``n_refusal_retries``, ``n_llm_extracted`` (answers read by ``llm_extractor``), the MCQ means (``mcq_hamming``, ``mcq_precision``, ``mcq_recall``,
        ``mcq_f1``, ``mcq_multiple_choice_grade``), the numeric ``numeric_mae`` over parsed
        answers, and ``by_topic``, ``by_keyword``, ``by_type`` breakdowns.
    """
    completions = check_completions(completions)
    if (
        questions is None
        or isinstance(questions, (str, bytes))
        or not hasattr(questions, "__len__")
    ):
        raise ValueError("questions: must be a list of questions, one per completion.")
    if len(completions) != len(questions):
        raise ValueError(
            f"completions: {len(completions)} completions for {len(questions)} questions; "
            "give one completion per question, in the same order."
        )
    if not questions:
        raise ValueError("questions: none given.")
    options = ScoringOptions(
        mode=mode,
        shuffle_seed=shuffle_seed,
        relative_tolerance=relative_tolerance,
        absolute_floor=absolute_floor,
        detect_refusals=detect_refusals,
        refusal_classifier=refusal_classifier,
        retry=retry,
        max_retries=max_retries,
        llm_extractor=llm_extractor,
        read_confidence=read_confidence,
    )
    stated = None if confidences is None else check_confidences(confidences, len(completions))
    parsed = [q if isinstance(q, Question) else Question.from_dict(q) for q in questions]
    results = [score_question(q, c, options) for q, c in zip(parsed, completions, strict=True)]
    for result, value in zip(results, stated or [], strict=False):
        result.confidence = value
    out = _summary(parsed, results)
    if stated is not None or read_confidence:
        out.update(_calibration(parsed, results))
    if return_details:
        out["details"] = [_detail(r) for r in results]
    return out


def _summary(parsed_questions: list[Question], results: list[QuestionResult]) -> dict[str, Any]:
    n = len(results)
    refusals = sum(r.refused for r in results)
    failures = sum(1 for r in results if not r.refused and not r.parsed)
    answered = n - refusals - failures
    correct = sum(r.correct for r in results)
    out: dict[str, Any] = {
        "main_score": correct / n,
        "fraction_correct": correct / n,
        "fraction_correct_answered": correct / answered if answered else 0.0,
        "n_questions": n,
        "n_correct": correct,
        "n_refusals": refusals,
        "n_parse_failures": failures,
        "n_refusal_retries": sum(r.retries for r in results),
        "n_llm_extracted": sum(r.method == "llm" for r in results),
    }
    mcq = [r for q, r in zip(parsed_questions, results, strict=True) if q.is_mcq]
    for key in ("hamming", "precision", "recall", "f1", "multiple_choice_grade"):
        out[f"mcq_{key}"] = sum(r.metrics[key] or 0.0 for r in mcq) / len(mcq) if mcq else None
    numeric = [
        r for q, r in zip(parsed_questions, results, strict=True) if not q.is_mcq and r.parsed
    ]
    errors = [r.metrics["mae"] for r in numeric if r.metrics["mae"] is not None]
    mae = sum(errors) / len(errors) if errors else None
    if mae is not None and not math.isfinite(mae):  # errors near 1e308: divide first, then add
        mae = sum(e / len(errors) for e in errors)
    out["numeric_mae"] = mae
    groups: dict[str, dict[str, list[QuestionResult]]] = {
        "by_topic": defaultdict(list),
        "by_keyword": defaultdict(list),
        "by_type": defaultdict(list),
    }
    for q, r in zip(parsed_questions, results, strict=True):
        groups["by_topic"][q.topic or "unknown"].append(r)
        groups["by_type"]["mcq" if q.is_mcq else "numeric"].append(r)
        for keyword in q.keywords:
            groups["by_keyword"][keyword].append(r)
    for name, grouped in groups.items():
        out[name] = {
            key: {
                "n_questions": len(rs),
                "n_correct": sum(r.correct for r in rs),
                "fraction_correct": sum(r.correct for r in rs) / len(rs),
                "n_refusals": sum(r.refused for r in rs),
                "n_parse_failures": sum(1 for r in rs if not r.refused and not r.parsed),
            }
            for key, rs in sorted(grouped.items())
        }
    return out


def _calibration(questions: list[Question], results: list[QuestionResult]) -> dict[str, Any]:
    by_topic: dict[str, list[QuestionResult]] = defaultdict(list)
    for q, r in zip(questions, results, strict=True):
        by_topic[q.topic or "unknown"].append(r)
    return {
        "calibration": calibration([r.confidence for r in results], [r.correct for r in results]),
        "calibration_by_topic": {
            topic: calibration([r.confidence for r in rs], [r.correct for r in rs])
            for topic, rs in sorted(by_topic.items())
        },
    }


def _detail(r: QuestionResult) -> dict[str, Any]:
    return {
        "key": r.key,
        "correct": r.correct,
        "refused": r.refused,
        "parsed": r.parsed,
        "answer": list(r.answer) if isinstance(r.answer, tuple) else r.answer,
        "method": r.method,
        "reason": r.reason,
        "retries": r.retries,
        "confidence": r.confidence,
        **r.metrics,
    }
