"""Entity-level precision, recall and F-beta for sequence labelling, as ``seqeval`` computes them.

Two ways to read entities from tags, both seqeval's:

- default (``mode=None``, conlleval's rules, seqeval's default): ``B/I/E/S`` prefixes are
  understood; an ``I-`` after ``O`` or after another type starts an entity, a type change ends
  one;
- ``mode="strict"`` with a ``scheme`` (seqeval's ``mode="strict"``, ``scheme=...``): ``IOB1``,
  ``IOB2`` (the default), ``IOE1``, ``IOE2``, ``IOBES`` or ``BILOU``. An entity is what the
  scheme's rules make of the tags, exactly as seqeval's ``seqeval.scheme`` reads them: a start
  pattern (previous tag, current tag), then tags the scheme calls inside, kept only if the tag
  after them ends it by the scheme's end patterns. So ``O I-C I-C`` has no entity in IOB2, and a
  chunk that is not closed the scheme's way (IOE1's ``I-A E-A I-B``) is no entity at all.

An entity counts as found only if its type, start and end all match. ``tests/test_sts_ner.py``
checks every key against seqeval over random tag sequences, in both modes, for every scheme
and several betas.

Tags are ``O``, a bare prefix (``B``: type ``_``, as seqeval) or a prefix, ``-`` and a type.
A prefix the mode does not read is a ``ValueError`` naming the argument, sentence and tag. In
strict mode that is seqeval's rule too (it raises "Invalid token is found: E-C. Allowed prefixes
are: I|O|B." for IOB2, or a ``KeyError`` for a letter that is no prefix of any scheme); in the
default mode seqeval only warns and reads such a tag by its first letter, which here is an error,
as is a tag without the hyphen (``BChem``) or an ``O`` with a type (``O-Chem``), which seqeval
reads too: each is far more often a mistake than a tag set.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from ._validation import check_beta

__all__ = ["PREFIXES", "SCHEMES", "check_scheme", "check_sentences", "entities", "score_ner"]

Entity = tuple[str, int, int]  # type, first token, last token (inclusive), sentence offsets
Tag = tuple[str, str]  # prefix ("O", "B", ...), type ("_" for none)

#: The schemes of seqeval's strict mode, in the order seqeval's error message lists them.
SCHEMES = ("IOB1", "IOB2", "IOE1", "IOE2", "IOBES", "BILOU")

# seqeval.scheme's patterns, written as "previous current type": a prefix letter (or several,
# or * for any) for each tag, then = (same type), ! (another type) or * (any type).
_RULES: dict[str, tuple[str, ...]] = {
    "IOB1": (
        "O I *; I I !; B I *; I B =; B B =",  # start
        "B I =; I I =",  # inside
        "I I !; I O *; I B *; B O *; B I !; B B =",  # end
    ),
    "IOE1": (
        "O I *; I I !; E I *; E E =",
        "I I =; I E =",
        "I I !; I O *; I E !; E I =; E E =",
    ),
    "IOB2": ("* B *", "B I =; I I =", "I O *; I I !; I B *; B O *; B I !; B B *"),
    "IOE2": ("O I *; O E *; E I *; E E *; I I !; I E !", "I E =; I I =", "E * *"),
    "IOBES": ("* B *; * S *", "B I =; B E =; I I =; I E =", "S * *; E * *"),
    "BILOU": ("* B *; * U *", "B I =; B L =; I I =; I L =", "U * *; L * *"),
}
_ANY = "IOBESUL"


def _patterns(text: str) -> tuple[tuple[str, str, str], ...]:
    rules = []
    for rule in text.split(";"):
        prev, cur, kind = rule.split()
        rules.append((_ANY if prev == "*" else prev, _ANY if cur == "*" else cur, kind))
    return tuple(rules)


_PATTERNS = {name: tuple(_patterns(t) for t in rules) for name, rules in _RULES.items()}
#: The prefixes each scheme allows (seqeval's ``allowed_prefix``).
PREFIXES = {
    "IOB1": "IOB",
    "IOB2": "IOB",
    "IOE1": "IOE",
    "IOE2": "IOE",
    "IOBES": "IOBES",
    "BILOU": "BILOU",
}
_CONLLEVAL_PREFIXES = "BIES"


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


def check_scheme(mode: Any, scheme: Any) -> str | None:
    """The scheme strict mode reads (``IOB2`` unless given), or ``None`` for conlleval.

    A scheme without ``mode="strict"`` is an error: seqeval ignores it there (its default mode
    is always conlleval), so passing one alone would silently score something else.
    """
    if mode not in (None, "strict"):
        raise ValueError(f"mode: {mode!r}; use None (conlleval) or 'strict' (a scheme's rules).")
    if scheme is not None and (not isinstance(scheme, str) or scheme not in SCHEMES):
        raise ValueError(f"scheme: should be one of [{', '.join(SCHEMES)}], got {scheme!r}.")
    if mode is None:
        if scheme is not None:
            raise ValueError(
                f"scheme: {scheme!r} is read in strict mode only (seqeval ignores a scheme "
                "otherwise); pass mode='strict' too, or leave scheme out for conlleval chunking."
            )
        return None
    return scheme or "IOB2"


def _parse(tags: Sequence[str], scheme: str | None, name: str, sentence: int | None) -> list[Tag]:
    """``(prefix, type)`` of each tag; a ValueError naming the argument, sentence and tag for
    a tag the mode (conlleval, or the strict scheme) does not read."""
    allowed = _CONLLEVAL_PREFIXES if scheme is None else PREFIXES[scheme].replace("O", "")
    allowed = "".join(c for c in "BIESLU" if c in allowed)  # as error messages list them
    out = []
    for i, tag in enumerate(tags):
        if tag == "O":
            out.append(("O", "_"))
        elif tag[:1] and tag[:1] in allowed and (len(tag) == 1 or tag[1] == "-"):
            # seqeval: conlleval's type is what follows "P-"; strict mode strips hyphens.
            out.append((tag[0], (tag[2:] if scheme is None else tag[1:].strip("-")) or "_"))
        else:
            of = "" if scheme is None else f" of the {scheme} scheme"
            at = f"tag {i}" if sentence is None else f"sentence {sentence}, tag {i}"
            raise ValueError(
                f"{name}: {tag!r} is not a tag{of} ({at}); use 'O' or a prefix "
                f"({'/'.join(allowed)}) and a type, like 'B-Chemical'."
            )
    return out


def _conlleval(parsed: Sequence[Tag]) -> list[Entity]:
    found: list[Entity] = []
    prev_tag, prev_type, begin = "O", "", 0
    for i, (prefix, type_) in enumerate([*parsed, ("O", "")]):
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


def _matches(rules: tuple[tuple[str, str, str], ...], prev: Tag, cur: Tag) -> bool:
    for prev_prefixes, cur_prefixes, kind in rules:
        if prev[0] in prev_prefixes and cur[0] in cur_prefixes:
            if kind == "*" or (kind == "=") == (prev[1] == cur[1]):
                return True
    return False


def _strict(parsed: Sequence[Tag], scheme: str) -> list[Entity]:
    starts, inside, ends = _PATTERNS[scheme]
    tags = [*parsed, ("O", "_")]  # an O after the last tag closes what is open
    found: list[Entity] = []
    prev: Tag = ("O", "_")
    i = 0
    while i < len(tags):
        if _matches(starts, prev, tags[i]):
            j = i + 1
            while _matches(inside, tags[j - 1], tags[j]):  # the final O is never inside
                j += 1
            if _matches(ends, tags[j - 1], tags[j]):
                found.append((tags[i][1], i, j - 1))
            i = j  # a start not closed the scheme's way is no entity; reading goes on at j
        else:
            i += 1
        prev = tags[i - 1]
    return found


def entities(
    tags: Sequence[str], *, mode: str | None = None, scheme: str | None = None
) -> list[Entity]:
    """The entities of one tag sequence: ``(type, first, last)`` with inclusive token indices.

    Args:
        tags: e.g. ``["B-Chemical", "I-Chemical", "O"]``.
        mode: ``None`` (conlleval) or ``"strict"`` (the scheme's rules).
        scheme: in strict mode, one of ``SCHEMES`` (default ``IOB2``); an error without it.
    """
    strict = check_scheme(mode, scheme)
    parsed = _parse(tags, strict, "tags", None)
    return _conlleval(parsed) if strict is None else _strict(parsed, strict)


def _fbeta(p: float, r: float, beta: float) -> float:
    if p == 0 or r == 0:
        return 0.0
    b2 = beta * beta
    if b2 == float("inf"):  # beta = inf, as seqeval: recall; beta > 1.3e154 (seqeval: inf/inf,
        return r  # NaN): its limit, recall
    return (1 + b2) * p * r / (b2 * p + r)  # seqeval's arithmetic, so equal to the last bit


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
    scheme: str | None = None,
) -> dict[str, Any]:
    """Entity-level scores of predicted tag sequences against gold ones.

    Args:
        predictions: one tag sequence per sentence (lists, or a 2-D numpy array of tags).
        references: the gold tag sequences, same shapes.
        beta: the F-beta's beta (1: F1; 2 weighs recall higher).
        mode: ``None`` (conlleval chunking, seqeval's default) or ``"strict"`` (the scheme's
            rules, seqeval's ``mode="strict"``).
        scheme: strict mode's tagging scheme, one of ``IOB1``, ``IOB2``, ``IOE1``, ``IOE2``,
            ``IOBES``, ``BILOU``; ``None`` means ``IOB2``. Given without ``mode="strict"`` it is
            an error (seqeval would ignore it and score conlleval). Where seqeval's
            ``classification_report`` is called in strict mode with no scheme, it guesses one
            from the gold tags (and fails on all-``O`` data); here the default is IOB2.

    Returns:
        Per entity type ``{precision, recall, f1, number}`` (``f1`` is the F-beta, ``number`` the
        gold count), ``overall_precision``, ``overall_recall``, ``overall_f1`` (micro),
        ``overall_accuracy`` (tokens), ``macro_f1``, ``weighted_f1`` and ``main_score``
        (= overall_f1) — the keys of evaluate's ``seqeval`` module. A corpus with no entity at
        all (none gold, none predicted) scores 0.0 everywhere but token accuracy, as seqeval
        does with its default ``zero_division``; seqeval's macro mean is NaN there, ours 0.0.
    """
    beta = check_beta(beta)
    strict = check_scheme(mode, scheme)
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
        for name, tags, into in (("references", gold, true_ents), ("predictions", pred, pred_ents)):
            parsed = _parse(tags, strict, name, n)
            found = _conlleval(parsed) if strict is None else _strict(parsed, strict)
            into += [(n, e) for e in found]
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
