"""A task inspected (issue 48, ``chemteb inspect``): its data loaded as a run loads it and its
quality counted (``data.quality``); with a model, how its tokenizer cuts the task's chemical
strings, per class of string (``data.chemistry``). The CLI only prints the record."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from chemteb_eval.data import load_task
from chemteb_eval.data.chemistry import CLASSES, classify, rdkit_available, word_entity
from chemteb_eval.data.quality import UNAVAILABLE as NO_RDKIT
from chemteb_eval.data.quality import data_quality, sides, task_parts
from chemteb_eval.data.types import SplitData
from chemteb_eval.models.base import Encoder
from chemteb_eval.tasks import Task

__all__ = [
    "UNKNOWN",
    "chemistry_block",
    "distinct_texts",
    "inspect_task",
    "quality_warning",
    "tokenization",
]

UNKNOWN = "unknown"  # a model whose tokenizer is not ours to call (an API)
_CHUNK = 4_096  # texts tokenised at once (bounded memory)


def inspect_task(
    task: Task, data_path: str | Path | None = None, encoder: Encoder | None = None
) -> dict[str, Any]:
    """``{"task", "type", "data_quality"}`` of ``task`` (a task file's with ``data_path``), and
    ``tokenization`` with an ``encoder``."""
    data = load_task(task, data_path=data_path)
    out: dict[str, Any] = {"task": task.name, "type": task.type, "data_quality": data_quality(data)}
    if encoder is not None:
        out["model"] = encoder.meta.name
        out["tokenization"] = chemistry_block(encoder, data)
    return out


def distinct_texts(data: Mapping[str, Mapping[str, SplitData]]) -> list[str]:
    """The task's distinct texts, each side of a pair its own, in first-seen order."""
    seen: dict[str, None] = {}
    for _, part in task_parts(data):
        for text, _ in part.rows:
            seen.update(dict.fromkeys(sides(text)))
    return list(seen)


def _stats(encoder: Any, texts: list[str]) -> dict[str, Any]:
    """``strings``, ``mean_tokens``, ``p95_tokens``, ``unk_share`` (unknown-token ids over all
    tokens) and ``cut_share`` (texts whose tokens and the model's special tokens exceed its
    max length) of ``texts``, tokenised alone without special tokens."""
    lengths: list[int] = []
    unknown = 0
    specials = 0
    for start in range(0, len(texts), _CHUNK):
        ids, unk, specials = encoder.token_ids(texts[start : start + _CHUNK])
        lengths += [len(x) for x in ids]
        if unk is not None:
            unknown += sum(1 for x in ids for i in x if i == unk)
    total = sum(lengths)
    limit = encoder.meta.max_tokens
    cut = sum(1 for n in lengths if limit and n + specials > limit)
    return {
        "strings": len(texts),
        "mean_tokens": float(np.mean(lengths)) if lengths else None,
        "p95_tokens": float(np.percentile(lengths, 95)) if lengths else None,
        "unk_share": unknown / total if total else None,
        "cut_share": cut / len(texts) if texts else None,
    }


def tokenization(encoder: Encoder, texts: Iterable[str]) -> dict[str, Any] | str:
    """Per class of string (``cas``, ``formula``, ``smiles``, ``text``; ``unavailable``: the
    texts RDKit would class without it), the model tokenizer's figures (``_stats``); inside
    ``text``, ``entities_in_text``: the same for the CAS numbers, formulas and SMILES named in
    its words. ``UNKNOWN`` for a model whose tokenizer is not ours to call."""
    if not hasattr(encoder, "token_ids"):
        return UNKNOWN
    by_class: dict[str, list[str]] = {}
    for text in texts:
        by_class.setdefault(classify(text), []).append(text)
    # the texts' distinct words, each classed once (named_entities' rule, word_entity)
    words: dict[str, None] = {}
    for text in by_class.get("text", []):
        words.update(dict.fromkeys(text.split()))
    entities: dict[str, dict[str, None]] = {}
    for word in words:
        named = word_entity(word)
        if named is not None:
            entities.setdefault(named[1], {})[named[0]] = None
    out: dict[str, Any] = {k: _stats(encoder, by_class.get(k, [])) for k in CLASSES}
    for kind in set(by_class) - set(CLASSES):
        out[kind] = _stats(encoder, by_class[kind])
    out["text"]["entities_in_text"] = {k: _stats(encoder, list(v)) for k, v in entities.items()}
    return _without_rdkit(out)


def _without_rdkit(out: dict[str, Any]) -> dict[str, Any]:
    """Without RDKit the SMILES class says so, never a count of 0 (its candidates are counted
    apart, as ``unavailable``)."""
    if not rdkit_available():
        out["smiles"] = NO_RDKIT
        if isinstance(out.get("text"), dict):
            out["text"].setdefault("entities_in_text", {})["smiles"] = NO_RDKIT
    return out


def chemistry_block(encoder: Encoder, data: Mapping[str, Mapping[str, SplitData]]) -> Any:
    """A result file's ``chemistry`` record: ``tokenization`` of the task's distinct texts for
    a model whose tokenizer we call; a word model's out-of-vocabulary share per class of
    string; ``"unknown"`` for any other (an API)."""
    texts = distinct_texts(data)
    if hasattr(encoder, "token_ids"):
        return tokenization(encoder, texts)
    count = getattr(encoder, "oov_counts", None)
    if count is None:
        return UNKNOWN
    by_class: dict[str, list[str]] = {}
    for text in texts:
        by_class.setdefault(classify(text), []).append(text)
    out = {}
    for kind, members in by_class.items():
        words, unknown = count(members)
        out[kind] = {"strings": len(members), "oov_share": unknown / words if words else None}
    return _without_rdkit(out)


def quality_warning(name: str, data: Mapping[str, Mapping[str, SplitData]]) -> str | None:
    """One line for a task file's run whose data shares texts between splits or gives a text
    two labels (the score is still computed); ``None`` when it does neither."""
    quality = data_quality(data, molecules=False)  # the run's warning needs no RDKit work
    shared = {pair: n for pair, n in quality["leaks"].items() if n}
    conflicting = {s: c["conflicting_labels"] for s, c in quality["splits"].items()}
    conflicting = {s: n for s, n in conflicting.items() if n}
    said = [f"{n:,} text(s) in both {pair.replace('&', ' and ')}" for pair, n in shared.items()]
    said += [f"{n:,} text(s) with two labels in {split}" for split, n in conflicting.items()]
    if not said:
        return None
    return (
        f"[warning] {name}: {'; '.join(said)}. Scored as given; chemteb inspect --task-file "
        "FILE counts them."
    )
