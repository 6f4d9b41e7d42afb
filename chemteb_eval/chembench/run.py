"""ChemBench end to end: prompts to JSONL, completions from a model (resumable), scores to a
report. What ``chemteb chembench`` runs; the math is ``score.py``."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from chemteb_eval._files import parse_json, write_json_atomic

from .load import QuestionSet
from .prompts import Prompt, PromptMode, build_messages
from .questions import Question
from .score import score_chembench

__all__ = [
    "generate_completions",
    "read_attempts",
    "read_completions",
    "read_model",
    "score_completions",
    "write_prompts",
]


# Prompts per generation call (a model's batch, or concurrent API requests): not the embedding
# batch (texts per encoder call), so it has its own default.
GENERATION_BATCH_SIZE = 8


def write_prompts(
    questions: Sequence[Question],
    out: str | Path,
    *,
    mode: PromptMode = "instruction",
    cot: bool = False,
    shuffle_seed: int | None = None,
    keep_wrappers: bool = False,
    confidence: bool = False,
) -> int:
    """One JSON line per question: key, name, topic, mode, prompt, options (lettered order),
    shuffle_seed — what any inference server needs, and what scoring needs back (the key)."""
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for q in questions:
            prompt, options = build_messages(
                q,
                mode=mode,
                cot=cot,
                shuffle_seed=shuffle_seed,
                keep_wrappers=keep_wrappers,
                confidence=confidence,
            )
            row = {
                "key": q.key,
                "name": q.name,
                "topic": q.topic,
                "type": "mcq" if q.is_mcq else "numeric",
                "mode": mode,
                "prompt": prompt,
                "options": options,
                "shuffle_seed": shuffle_seed,
            }
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return len(questions)


def read_completions(path: str | Path) -> dict[str, str]:
    """``{key: completion}`` from JSONL lines with ``completion`` and ``key`` (or ``uuid`` or
    ``name``).

    Raises:
        ValueError: naming the line that is malformed or repeats a key.
    """
    found: dict[str, str] = {}
    try:
        handle = Path(path).open("rb")
    except OSError as exc:
        raise ValueError(f"completions: cannot read {path} ({exc.strerror or exc}).") from None
    with handle:
        for n, raw in enumerate(handle, start=1):
            where = f"line {n} of {path}"
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ValueError(
                    f"completions: {where} is not UTF-8 text (byte {exc.start}); write JSONL."
                ) from None
            if not line.strip():
                continue
            try:
                row = parse_json(line)
            except ValueError as exc:
                raise ValueError(f"completions: {where} is not JSON ({exc}).") from None
            key = None
            if isinstance(row, dict):
                # The first of key/uuid/name that is a non-empty string (or an integer id).
                key = next(
                    (
                        str(row[k])
                        for k in ("key", "uuid", "name")
                        if (isinstance(row.get(k), str) and row[k])
                        or (isinstance(row.get(k), int) and not isinstance(row[k], bool))
                    ),
                    None,
                )
            completion = row.get("completion") if isinstance(row, dict) else None
            if key is None or not isinstance(completion, str):
                raise ValueError(
                    f"completions: {where} needs 'key' (or 'uuid'/'name') as a string and a "
                    "'completion' string."
                )
            if key in found:
                raise ValueError(f"completions: {where} repeats key {key!r}.")
            found[key] = completion
    return found


def generate_completions(
    questions: Sequence[Question],
    generate: Callable[[Sequence[Prompt]], list[str]],
    out: str | Path,
    *,
    mode: PromptMode = "instruction",
    cot: bool = False,
    shuffle_seed: int | None = None,
    confidence: bool = False,
    max_retries: int = 0,
    refusal_classifier: Callable[[str], bool] | None = None,
    model: str | None = None,
    batch_size: int = GENERATION_BATCH_SIZE,
    progress: bool = True,
) -> int:
    """Ask the model every question not yet answered in ``out`` (JSONL, appended line by line,
    so an interrupted run keeps what it had and resumes). Returns how many were generated.

    With ``max_retries``, a completion judged a refusal as scoring judges it (empty, or a
    keyword refusal — or ``refusal_classifier``'s — with no readable answer) is asked again, up
    to ``max_retries`` more times; the line keeps
    every attempt (``attempts``, oldest first) and ``completion`` is the last one. ``model``
    (the generator's spec) is written on each line: ``score --extractor`` without a model asks
    the model under test."""
    from tqdm.auto import tqdm

    from .score import is_refusal

    if max_retries < 0:
        raise ValueError(f"max_retries: must be >= 0, got {max_retries}.")
    path = Path(out)
    done = read_completions(path) if path.exists() else {}
    todo = [q for q in questions if q.key not in done]
    path.parent.mkdir(parents=True, exist_ok=True)
    with (
        path.open("a", encoding="utf-8") as handle,
        tqdm(total=len(todo), disable=not progress, desc="generating", unit="q") as bar,
    ):
        for start in range(0, len(todo), batch_size):
            batch = todo[start : start + batch_size]
            prompts = [
                build_messages(
                    q, mode=mode, cot=cot, shuffle_seed=shuffle_seed, confidence=confidence
                )[0]
                for q in batch
            ]
            attempts = [[c] for c in generate(prompts)]
            for _ in range(max_retries):
                again = [
                    i
                    for i, (q, tries) in enumerate(zip(batch, attempts, strict=True))
                    if is_refusal(tries[-1], q, mode, shuffle_seed, refusal_classifier)
                ]
                if not again:
                    break
                for i, completion in zip(again, generate([prompts[i] for i in again]), strict=True):
                    attempts[i].append(completion)
            for q, tries in zip(batch, attempts, strict=True):
                row: dict[str, Any] = {"key": q.key, "completion": tries[-1]}
                if model is not None:
                    row["model"] = model
                if max_retries:
                    row["attempts"] = tries
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            handle.flush()
            bar.update(len(batch))
    return len(todo)


def read_model(path: str | Path) -> str | None:
    """The generator spec ``generate_completions`` recorded (the first line's ``model``)."""
    with Path(path).open("rb") as handle:
        for raw in handle:
            try:
                row = parse_json(raw)
            except ValueError:
                continue
            if isinstance(row, dict) and isinstance(row.get("model"), str):
                return str(row["model"])
    return None


def read_attempts(path: str | Path) -> dict[str, int]:
    """``{key: generation attempts}`` for the lines of a completions file that record them
    (``attempts``, written by ``generate_completions`` with ``max_retries``)."""
    found: dict[str, int] = {}
    with Path(path).open("rb") as handle:
        for raw in handle:
            try:
                row = parse_json(raw)
            except ValueError:
                continue  # read_completions names malformed lines
            if isinstance(row, dict) and isinstance(row.get("attempts"), list):
                key = row.get("key")
                if isinstance(key, str) and row["attempts"]:
                    found[key] = len(row["attempts"])
    return found


def score_completions(
    questions: QuestionSet,
    completions: dict[str, str],
    *,
    report: str | Path | None = None,
    only_answered: bool = False,
    attempts: dict[str, int] | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Score ``completions`` (by question key) and write the report (JSON) if asked.

    Args:
        questions: the loaded questions.
        completions: ``{key: completion}``.
        report: where to write the JSON report (scores, details, input problems).
        only_answered: score only the questions that have a completion (default: a missing
            completion is an error, so a partial run is never reported as complete).
        attempts: ``{key: generation attempts}`` (``read_attempts``): the report then counts
            the questions re-asked after a refusal and those still refused.
        options: ``score_chembench`` keyword arguments.
    """
    keys = {q.key for q in questions.questions}
    unknown = sorted(set(completions) - keys)
    if unknown:
        raise ValueError(
            f"completions: {len(unknown)} key(s) match no question (e.g. {unknown[0]!r}); are "
            "they from another question set?"
        )
    chosen = [q for q in questions.questions if q.key in completions]
    missing = len(questions.questions) - len(chosen)
    if missing and not only_answered:
        raise ValueError(
            f"completions: {missing} of {len(questions.questions)} questions have no completion; "
            "finish the run (chemteb chembench generate resumes) or pass --only-answered."
        )
    out = score_chembench(
        [completions[q.key] for q in chosen], chosen, return_details=True, **options
    )
    out["n_questions_without_completion"] = missing
    if attempts is not None:
        retried = {k for k, n in attempts.items() if n > 1}
        refused_keys = {d["key"] for d in out["details"] if d["refused"]}
        out["n_generation_retries"] = sum(n - 1 for n in attempts.values())
        out["n_questions_retried"] = len(retried)
        out["n_refusals_after_retries"] = len(retried & refused_keys)
    out["skipped_questions"] = [{"source": s, "reason": r} for s, r in questions.skipped]
    out["keyword_problems"] = [{"question": n, "problem": p} for n, p in questions.keyword_problems]
    out["questions_source"] = questions.source
    if report is not None:
        write_json_atomic(Path(report), out)
    return out
