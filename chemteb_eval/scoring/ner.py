"""Entity-level precision, recall and F-beta for sequence labelling, as ``seqeval`` computes them.

Two ways to read entities from tags, both seqeval's:

- default (conlleval): an ``I-`` after ``O`` or after another type starts an entity; ``B/I/E/S``
  prefixes (IOB1, IOB2, IOBES) are understood;
- ``mode="strict"`` (IOB2): an entity is a ``B-X`` followed by ``I-X`` tags; an ``I-X`` that does
  not continue a ``B-X``/``I-X`` belongs to no entity.

An entity counts as found only if its type, start and end all match. ``tests/test_ner.py``
checks every key against seqeval over random tag sequences, in both modes and for several betas.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from ._validation import check_beta

__all__ = ["check_sentences", "entities", "score_ner"]

Entity = tuple[str, int, int]  # type, first token, last token (inclusive), sentence offsets


def check_sentences(name: str, value: Any) -> list[list[str]]:
    """``value`` as lists of str tags; a clear error naming the sentence and tag otherwise."""
    if hasattr(value, "tolist"):  # numpy arrays (1-D of lists, or 2-D of tags)
        value = value.tolist()
    if value is None or isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise ValueError(f"{name}: must be a list of sentences, each a list of tags.")
    out = []
    for n, sentence in enumerate(value):
        if hasattr(sentence, "tolist"):
            sentence = sentence.tolist()
        if isinstance(sentence, (str, bytes)) or not isinstance(sentence, Sequence):
            raise ValueError(
                f"{name}: sentence {n} is a {type(sentence).__name__}, not a list of tags."
            )
        for i, tag in enumerate(sentence):
            if not isinstance(tag, str):
                raise ValueError(
                    f"{name}: tag {i} of sentence {n} is {tag!r} ({type(tag).__name__}); tags "
                    "are strings such as 'O' or 'B-Chemical'."
                )
        out.append(list(sentence))
    return out


def _split(tag: str, allowed: str) -> tuple[str, str]:
    if tag == "O":
        return "O", ""
    if len(tag) >= 1 and tag[0] in allowed and (len(tag) == 1 or tag[1] == "-"):
        return tag[0], tag[2:] or "_"
    raise ValueError(
        f"tags: {tag!r} is not a tag; use 'O' or a prefix ({'/'.join(allowed)}) and a type, "
        "like 'B-Chemical'."
    )


def _conlleval(tags: Sequence[str]) -> list[Entity]:
    found: list[Entity] = []
    prev_tag, prev_type, begin = "O", "", 0
    for i, tag in enumerate([*tags, "O"]):
        prefix, type_ = _split(tag, "BIES")
        end = (
            prev_tag in ("E", "S")
            or (prev_tag in ("B", "I") and prefix in ("B", "S", "O"))
            or (prev_tag != "O" and prev_type != type_)
        )
        start = (
            prefix in ("B", "S")
            or (prev_tag in ("E", "S") and prefix in ("E", "I"))
            or (prev_tag == "O" and prefix in ("E", "I"))
            or (prefix != "O" and prev_type != type_)
        )
        if end:
            found.append((prev_type, begin, i - 1))
        if start:
            begin = i
        prev_tag, prev_type = prefix, type_
    return found


def _strict_iob2(tags: Sequence[str]) -> list[Entity]:
    parsed = [_split(tag, "BI") for tag in tags]
    found: list[Entity] = []
    i = 0
    while i < len(parsed):
        prefix, type_ = parsed[i]
        if prefix != "B":
            i += 1
            continue
        j = i + 1
        while j < len(parsed) and parsed[j] == ("I", type_):
            j += 1
        found.append((type_, i, j - 1))
        i = j
    return found


def entities(tags: Sequence[str], *, mode: str | None = None) -> list[Entity]:
    """The entities of one tag sequence: ``(type, first, last)`` with inclusive token indices.

    Args:
        tags: e.g. ``["B-Chemical", "I-Chemical", "O"]``.
        mode: ``None`` (conlleval) or ``"strict"`` (IOB2).
    """
    if mode not in (None, "strict"):
        raise ValueError(f"mode: {mode!r}; use None (conlleval) or 'strict' (IOB2).")
    return _strict_iob2(tags) if mode == "strict" else _conlleval(tags)


def _fbeta(p: float, r: float, beta: float) -> float:
    if p == 0 or r == 0:
        return 0.0
    b2 = beta * beta  # inf for beta > 1.3e154: the limit below is then recall, exactly
    if b2 <= 1:
        return (1 + b2) * p * r / (b2 * p + r)
    # Divided through by beta**2, so that a huge beta gives recall (its limit), never inf/inf.
    return (1 / b2 + 1) * p * r / (p + r / b2)


def _prf(tp: int, n_pred: int, n_true: int, beta: float) -> tuple[float, float, float]:
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_true if n_true else 0.0
    return p, r, _fbeta(p, r, beta)


def score_ner(
    predictions: Sequence[Sequence[str]] | Any,
    references: Sequence[Sequence[str]] | Any,
    *,
    beta: float = 1.0,
    mode: str | None = None,
) -> dict[str, Any]:
    """Entity-level scores of predicted tag sequences against gold ones.

    Args:
        predictions: one tag sequence per sentence (lists, or a 2-D numpy array of tags).
        references: the gold tag sequences, same shapes.
        beta: the F-beta's beta (1: F1; 2 weighs recall higher).
        mode: ``None`` (conlleval chunking) or ``"strict"`` (IOB2).

    Returns:
        Per entity type ``{precision, recall, f1, number}`` (``f1`` is the F-beta, ``number`` the
        gold count), ``overall_precision``, ``overall_recall``, ``overall_f1`` (micro),
        ``overall_accuracy`` (tokens), ``macro_f1``, ``weighted_f1`` and ``main_score``
        (= overall_f1) — the keys of evaluate's ``seqeval`` module.
    """
    beta = check_beta(beta)
    predictions = check_sentences("predictions", predictions)
    references = check_sentences("references", references)
    if len(predictions) != len(references):
        raise ValueError(
            f"length mismatch: predictions has {len(predictions)} sentences, references "
            f"{len(references)}; they must be equal."
        )
    if not references:
        raise ValueError("references: no sentences.")
    true_ents: list[tuple[int, Entity]] = []
    pred_ents: list[tuple[int, Entity]] = []
    correct_tokens = total_tokens = 0
    for n, (pred, gold) in enumerate(zip(predictions, references, strict=True)):
        if len(pred) != len(gold):
            raise ValueError(
                f"length mismatch: sentence {n} has {len(pred)} predicted and {len(gold)} gold tags."
            )
        true_ents += [(n, e) for e in entities(gold, mode=mode)]
        pred_ents += [(n, e) for e in entities(pred, mode=mode)]
        correct_tokens += sum(p == g for p, g in zip(pred, gold, strict=True))
        total_tokens += len(gold)
    true_set, pred_set = set(true_ents), set(pred_ents)
    hits = Counter(e[0] for _, e in true_set & pred_set)
    n_true = Counter(e[0] for _, e in true_set)
    n_pred = Counter(e[0] for _, e in pred_set)
    out: dict[str, Any] = {}
    types = sorted(set(n_true) | set(n_pred))
    for type_ in types:
        p, r, f = _prf(hits[type_], n_pred[type_], n_true[type_], beta)
        out[type_] = {"precision": p, "recall": r, "f1": f, "number": n_true[type_]}
    p, r, f = _prf(sum(hits.values()), len(pred_set), len(true_set), beta)
    support = sum(n_true.values())
    out.update(
        {
            "overall_precision": p,
            "overall_recall": r,
            "overall_f1": f,
            "overall_accuracy": correct_tokens / total_tokens if total_tokens else 0.0,
            "macro_f1": sum(out[t]["f1"] for t in types) / len(types) if types else 0.0,
            "weighted_f1": sum(out[t]["f1"] * n_true[t] for t in types) / support
            if support
            else 0.0,
            "main_score": f,
        }
    )
    return out
