"""ChemBench prompts: instruction prompts (answer inside [ANSWER] tags) and completion prompts
(ending with "Answer:"), optional chain of thought, seeded option shuffling that scoring undoes.
Pure string functions; imports nothing heavy."""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import replace
from typing import Any, Literal

from .questions import Question

__all__ = [
    "CONFIDENCE_LINE",
    "COT_LINE",
    "PromptMode",
    "build_prompt",
    "option_order",
    "strip_wrappers",
]

PromptMode = Literal["instruction", "completion"]
#: A prompt: text, or OpenAI-style content parts (text and ``image_url``) for a vision question.
Prompt = str | list[dict[str, Any]]


_WRAPPERS = (
    re.compile(r"\\ce\{((?:[^{}]|\{[^{}]*\})*)\}"),
    re.compile(r"\\pu\{((?:[^{}]|\{[^{}]*\})*)\}"),
    re.compile(r"\[START_SMILES\](.*?)\[END_SMILES\]", re.DOTALL),
    re.compile(r"\[START_RXNSMILES\](.*?)\[END_RXNSMILES\]", re.DOTALL),
    re.compile(r"\$([^$]+)\$"),
)


def strip_wrappers(text: str) -> str:
    """``\\ce{H2O}`` -> ``H2O``, ``\\pu{1 mol}`` -> ``1 mol``, ``$x$`` -> ``x``,
    ``[START_SMILES]CCO[END_SMILES]`` -> ``CCO`` (also reaction SMILES)."""
    for pattern in _WRAPPERS:
        text = pattern.sub(lambda m: m.group(1), text)
    return text


def option_order(question: Question, seed: int | None) -> list[str]:
    """The option texts in the order they are lettered: the file's order, or a shuffle seeded
    by ``seed`` and the question's key (so prompts and scoring agree without sharing state)."""
    options = list(question.target_scores or {})
    if seed is not None:
        digest = hashlib.sha256(f"{seed}:{question.key}".encode()).hexdigest()
        random.Random(int(digest[:16], 16)).shuffle(options)
    return options


_INSTRUCTION_MCQ = """The following is a multiple-choice question about chemistry. One or more options are correct.{cot}

Question: {question}

Options:
{options}

Give the letter(s) of the correct option(s) inside [ANSWER] and [/ANSWER], separated by commas if there are several, for example [ANSWER]{example}[/ANSWER]. Answer in exactly this format even if you are unsure; the answer is read automatically."""
_INSTRUCTION_NUMERIC = """The following is a question about chemistry. The answer is a number.{cot}

Question: {question}

Give the final answer as one number inside [ANSWER] and [/ANSWER], without units, using a dot as the decimal separator, for example [ANSWER]4.2[/ANSWER]. Answer in exactly this format even if you are unsure; the answer is read automatically."""
_COMPLETION_MCQ = """The following is a multiple-choice question about chemistry. One or more options are correct.{cot}

Question: {question}

Options:
{options}

Answer with only the letter(s) of the correct option(s), separated by commas. You can choose from {letters}.

Answer:"""
_COMPLETION_NUMERIC = """The following is a question about chemistry. The answer is a number.{cot}

Question: {question}

Answer with only one number, without units, using a dot as the decimal separator.

Answer:"""
COT_LINE = "Think step by step before giving the final answer."
# ChemBench's confidence study asks for a 1-5 rating; the tags make it machine-readable.
CONFIDENCE_LINE = (
    "After the answer, rate how confident you are that it is correct on a scale from 1 (not at "
    "all) to 5 (certain), as one whole number inside [CONFIDENCE] and [/CONFIDENCE], for example "
    "[CONFIDENCE]3[/CONFIDENCE]."
)


def build_prompt(
    question: Question,
    *,
    mode: PromptMode = "instruction",
    cot: bool = False,
    shuffle_seed: int | None = None,
    keep_wrappers: bool = False,
    confidence: bool = False,
) -> tuple[str, list[str]]:
    """The prompt for one question and the option texts in lettered order.

    Args:
        question: the question.
        mode: ``instruction`` (answer inside [ANSWER]...[/ANSWER]) or ``completion`` (ends with
            "Answer:").
        cot: add a chain-of-thought line.
        shuffle_seed: shuffle the options (``option_order``); ``None`` keeps the file's order.
        keep_wrappers: keep ``\\ce{}``, ``\\pu{}``, ``$...$`` and ``[START_SMILES]`` markup (for
            models trained on it); by default it is removed from question and options alike.
        confidence: also ask for a confidence on the 1-5 scale (``CONFIDENCE_LINE``; instruction
            prompts only: a completion prompt ends with "Answer:").

    Returns:
        The prompt and the options (A is the first).
    """
    if mode not in ("instruction", "completion"):
        raise ValueError(f"mode: {mode!r}; use 'instruction' or 'completion'.")
    if confidence and mode != "instruction":
        raise ValueError(
            "confidence: asked for with instruction prompts only (mode='instruction')."
        )
    fix = (lambda t: t) if keep_wrappers else strip_wrappers
    options = option_order(question, shuffle_seed) if question.is_mcq else []
    letters = [chr(65 + i) for i in range(len(options))]
    cot_text = f"\n{COT_LINE}" if cot else ""
    if question.is_mcq:
        template = _INSTRUCTION_MCQ if mode == "instruction" else _COMPLETION_MCQ
        prompt = template.format(
            cot=cot_text,
            question=fix(question.input),
            options="\n".join(
                f"{letter}. {fix(o)}" for letter, o in zip(letters, options, strict=True)
            ),
            letters=", ".join(letters),
            example=",".join(letters[:2]) if len(letters) > 1 else "A",
        )
    else:
        template = _INSTRUCTION_NUMERIC if mode == "instruction" else _COMPLETION_NUMERIC
        prompt = template.format(cot=cot_text, question=fix(question.input))
    if confidence:
        prompt = f"{prompt}\n\n{CONFIDENCE_LINE}"
    return prompt, options


_SLOT = "\x00question\x00"  # where the question's parts go in a vision prompt


def build_messages(
    question: Question,
    *,
    mode: PromptMode = "instruction",
    cot: bool = False,
    shuffle_seed: int | None = None,
    keep_wrappers: bool = False,
    confidence: bool = False,
) -> tuple[Prompt, list[str]]:
    """``build_prompt``'s prompt, or for a question that shows images (MaCBench-style
    ``{type1} {entry1}`` placeholders with image entries) the same prompt as OpenAI-style
    content parts: ``{"type": "text", "text": ...}`` and ``{"type": "image_url", "image_url":
    {"url": <data URL or http(s) URL>}}``, in the question's order. Vision questions need
    instruction prompts (a chat model)."""
    if not question.is_multimodal:
        text_only = question
        if question.entries is not None:  # text placeholders: substituted into plain text
            joined = " ".join(p["value"] for p in question.parts())
            text_only = replace(question, input=joined, entries=None)
        return build_prompt(
            text_only,
            mode=mode,
            cot=cot,
            shuffle_seed=shuffle_seed,
            keep_wrappers=keep_wrappers,
            confidence=confidence,
        )
    if mode != "instruction":
        raise ValueError(
            f"mode: question {question.name} shows an image; use instruction prompts (a chat "
            "model with vision)."
        )
    fix = (lambda t: t) if keep_wrappers else strip_wrappers
    slotted = replace(question, input=_SLOT, entries=None)
    text, options = build_prompt(
        slotted,
        mode=mode,
        cot=cot,
        shuffle_seed=shuffle_seed,
        keep_wrappers=keep_wrappers,  # the slot has no markup to strip
        confidence=confidence,
    )
    before, after = text.split(_SLOT)
    parts: list[dict[str, Any]] = [{"type": "text", "text": before}]
    for part in question.parts():
        if part["type"] == "image":
            parts.append({"type": "image_url", "image_url": {"url": part["value"]}})
        elif parts[-1]["type"] == "text":
            parts[-1]["text"] += fix(part["value"])
        else:
            parts.append({"type": "text", "text": fix(part["value"])})
    if parts[-1]["type"] == "text":
        parts[-1]["text"] += after
    else:
        parts.append({"type": "text", "text": after})
    return parts, options
