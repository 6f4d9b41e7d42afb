"""Stated confidences in ChemBench completions (the 1-5 scale): read, or removed so that the
answer readers never see them. Part of the answer extraction (``parse.py`` re-exports both)."""

from __future__ import annotations

import re

__all__ = ["extract_confidence", "without_confidence"]


_CONFIDENCE_TAG = re.compile(
    r"(?:\[CONFIDENCE\]|<CONFIDENCE>)(.*?)(?:\[/CONFIDENCE\]|</CONFIDENCE>)",
    re.IGNORECASE | re.DOTALL,
)
# A stated number, read whole: "1e3" is 1000 (then out of range), never 1 with "e3" left over.
_CONF_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
# Any denominator is captured ("4/10", "7 out of 10"), so that one other than 5 is refused: it is
# a statement on another scale, and rescaling it would be a guess about what the model meant.
# "80%" is a percentage, not a level: captured too, so that it is refused (and removed).
_CONF_SCALE = rf"(?P<pct>\s*%)?(?:\s*(?:/|out\s+of)\s*(?P<den>{_CONF_NUMBER}))?"
_CONF_LEAD = r"\bconfidence(?:\s+(?:level|score|rating))?\s*(?:[:=]|is|of)\s*\**\s*"
_CONFIDENCE_PHRASE = re.compile(
    # not followed by more of a number: "4/10x" must not fall back to reading "4"
    rf"{_CONF_LEAD}(?P<num>{_CONF_NUMBER}){_CONF_SCALE}(?![\w%/]|\.\d)",
    re.IGNORECASE,
)
# What without_confidence removes: a statement with whatever is glued to its number, readable
# or not ("Confidence: 4/10x" is no confidence, and its 4 is no answer either).
_CONFIDENCE_STATEMENT = re.compile(rf"{_CONF_LEAD}{_CONF_NUMBER}{_CONF_SCALE}\S*", re.IGNORECASE)
_CONFIDENCE_VALUE = re.compile(rf"^\s*\**\s*(?P<num>{_CONF_NUMBER}){_CONF_SCALE}\s*\**\s*\.?\s*$")


def _on_scale(found: re.Match[str] | None) -> float | None:
    """The 1-5 value of one statement; ``None`` for a word, a scale other than 5, or a value
    outside 1-5 (``"1e3"``, ``"80%"``)."""
    if found is None:
        return None
    den = found.group("den")
    if found.group("pct") or (den is not None and float(den) != 5):
        return None
    value = float(found.group("num"))
    return value if 1 <= value <= 5 else None


# Where the clause of a "Confidence: 4" statement ends: a line, a tag, a bracket, a comma or
# semicolon, or a sentence's end (a full stop before a space: "3.5" goes on).
_CLAUSE_END = re.compile(r"[\n\[<(,;!?]|\.(?=\s|$)")
_PERCENT = re.compile(r"%|\bper\s?cent\b", re.IGNORECASE)


def _alone(text: str, found: re.Match[str]) -> bool:
    """Whether a "Confidence: 4" statement's number is the only number of its clause: one
    followed by more ("3-4", "3 to 4", "5 of the 6 options") is a range or a count, and one
    after a percentage ("95% confidence: 5") answers another question; reading the first number
    of either would be a guess (the tag form is whole or nothing already)."""
    starts = [m.end() for m in _CLAUSE_END.finditer(text, 0, found.start())]
    before = text[starts[-1] if starts else 0 : found.start()]
    end = _CLAUSE_END.search(text, found.end())
    after = text[found.end() : end.start() if end else len(text)]
    return not re.search(r"\d", after) and not _PERCENT.search(before + after)


def extract_confidence(text: str) -> float | None:
    """A stated confidence on the 1-5 scale: inside ``[CONFIDENCE]...[/CONFIDENCE]`` (or
    ``<CONFIDENCE>``) tags, else after "Confidence:" / "confidence level is"; ``4``, ``4/5``,
    ``4 out of 5``, ``**4**``. ``None`` when there is none, when it is outside 1-5 (``1e3``),
    on another scale (``4/10``), a range or a count (``3-4``, ``5 of the 6``) or after a
    percentage (``95% confidence: 5``), or when the completion states two different ones."""
    bodies = [m.group(1) for m in _CONFIDENCE_TAG.finditer(text)]
    if bodies:
        found = [_on_scale(_CONFIDENCE_VALUE.match(body)) for body in bodies]
    else:
        found = [
            _on_scale(m) if _alone(text, m) else None for m in _CONFIDENCE_PHRASE.finditer(text)
        ]
    # One unreadable statement among readable ones is still a doubt about which one is meant.
    if not found or None in found or len(set(found)) != 1:
        return None
    return found[0]


def without_confidence(text: str) -> str:
    """``text`` with its confidence statements removed, tags and "Confidence: 3" phrases alike,
    so that the answer readers never see them: a completion that states only a confidence has
    no answer (its "3" is not the answer to a numeric question)."""
    return _CONFIDENCE_STATEMENT.sub(" ", _CONFIDENCE_TAG.sub(" ", text))
