"""Answer extraction for ChemBench completions: tags, option letters, numbers, refusals.

Every rule, with an example, is in ``metrics/chembench/README.md``; ``tests/test_chembench_parse.py``
checks each one and each defect of the reference parser (chembench 0.3.0) it fixes. The rules
never guess: text that could mean two answers gives no answer (counted as a parse failure), not
the first or a merge of both.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .confidence_text import extract_confidence, without_confidence

__all__ = [
    "Extraction",
    "extract_confidence",
    "extract_mcq",
    "extract_number",
    "find_tagged",
    "is_keyword_refusal",
    "parse_letters",
    "parse_number",
    "without_confidence",
    "word_number",
]


@dataclass(frozen=True)
class Extraction:
    """What was read from a completion.

    Args:
        value: the option letters (a sorted tuple) or the number; ``None`` when nothing could
            be read.
        method: ``tag`` (inside answer tags), ``untagged`` (an answer phrase or a bare answer),
            ``llm`` (the extractor callable), or ``none``.
        reason: why nothing was read (``no answer found``, ``conflicting tagged answers``, ...);
            empty when a value was read.
        raw: the text the value was read from.
    """

    value: tuple[str, ...] | float | None
    method: str
    reason: str = ""
    raw: str = ""


# -- tags ------------------------------------------------------------------------------------

# [ANSWER] [ANS] <ANSWER> <ANS>, any case; the closing tag's slash is optional.
_OPEN = r"(?:\[(?:ANSWER|ANS)\]|<(?:ANSWER|ANS)>)"
_CLOSE = r"(?:\[/?(?:ANSWER|ANS)\]|</?(?:ANSWER|ANS)>)"
_TAGGED = re.compile(rf"{_OPEN}(.*?){_CLOSE}", re.IGNORECASE | re.DOTALL)
# An explicit closer ([/ANSWER], </ANS>) with the nearest opener before it: the body holds no
# other opener, so "[ANSWER]  The correct answer is [ANSWER]C[/ANSWER]" reads C.
_CLOSED = re.compile(
    rf"{_OPEN}((?:(?!{_OPEN}).)*?)(?:\[/(?:ANSWER|ANS)\]|</(?:ANSWER|ANS)>)",
    re.IGNORECASE | re.DOTALL,
)
_OPEN_ONLY = re.compile(rf"{_OPEN}([^\n\[<]*)", re.IGNORECASE)


def find_tagged(text: str) -> list[str]:
    """The bodies of all answer tags, in order. Explicitly closed tags (``[/ANSWER]``) come
    first, each with the opener nearest before its closer (an unclosed opener before them is
    left out); else tags closed by a second opener (``[ANSWER]B[ANSWER]``); else an opening tag
    that is never closed, up to the end of its line (``[ANSWER] B`` at the end of a reply)."""
    for pattern in (_CLOSED, _TAGGED):
        bodies = [m.group(1) for m in pattern.finditer(text)]
        if bodies:
            return bodies
    return [m.group(1) for m in _OPEN_ONLY.finditer(text)]


# -- text clean-up ---------------------------------------------------------------------------

_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻", "0123456789+-")
_LATEX_UNWRAP = re.compile(
    r"\\(?:text|mathrm|textrm|mathbf|textbf|boxed|ce|pu|mbox|operatorname)\s*\{([^{}]*)\}"
)
_FRAC = re.compile(r"\\[dt]?frac\s*\{\s*([^{}]+?)\s*\}\s*\{\s*([^{}]+?)\s*\}")


def _clean(text: str) -> str:
    """Markup a model wraps answers in, removed: LaTeX delimiters and wrappers, bold, code,
    Unicode minus signs and spaces."""
    text = text.replace("\u2212", "-").replace("\u2012", "-").replace("\u2013", "-")
    text = text.replace("\u00a0", " ").replace("\u2009", " ").replace("\u202f", " ")
    # a JSON escape left undecoded in a reply: "5.3 \\u00d7 10^2"
    text = text.replace("\\u00d7", "\u00d7").replace("\\u2212", "-")
    for _ in range(3):  # nested wrappers, e.g. \boxed{\text{B}}
        text = _LATEX_UNWRAP.sub(r"\1", text)
    text = _FRAC.sub(r"\1/\2", text)
    text = re.sub(r"\\[,;:! ]|~", " ", text)
    text = re.sub(r"\\(?:left|right)\b", "", text)
    text = text.replace("\\(", " ").replace("\\)", " ").replace("\\[", " ").replace("\\]", " ")
    text = text.replace("$", " ").replace("**", " ").replace("__", " ").replace("`", " ")
    return text.strip()


# -- option letters --------------------------------------------------------------------------

# A capital letter standing alone ("or B", "(C)", "A,"), not inside a word or formula.
_LONE_LETTER = re.compile(r"(?<![\w\[(=#@+\-/\\])\(?[A-Z][).]?(?![\w\]=#@+\-(/\\])")
_LETTER_SEPARATORS = re.compile(r"\s*(?:,|;|/|&|\+|\band\b|\s)\s*", re.IGNORECASE)
_LETTER_TOKEN = re.compile(r"^\(?([A-Za-z])[).:]?$")
_OPTION_WORDS = re.compile(
    r"^(?:the\s+)?(?:correct\s+)?(?:answers?|options?|choices?)\s*(?:is|are|:)?\s*", re.IGNORECASE
)


def parse_letters(body: str, options: Sequence[str]) -> tuple[tuple[str, ...] | None, str]:
    """Option letters from an answer body: ``"A, C"``, ``"A C"``, ``"a and c"``, ``"(B)"``,
    ``"Options A and D"``; or an option's own text (``"doubled"``), or a letter followed by
    its option's text (``"A. doubled"``).

    Args:
        body: the text inside the tags (or after an answer phrase).
        options: the option texts, in lettered order (A is ``options[0]``).

    Returns:
        The sorted letters, or ``None`` and why.
    """
    letters = [chr(65 + i) for i in range(len(options))]
    text = _clean(body).strip().strip(".").strip()
    if not text:
        return None, "empty answer"
    lowered = {" ".join(o.lower().split()): letters[i] for i, o in enumerate(options)}
    # Letters first: an option whose text is itself a letter never shadows a letter answer.
    stripped = _OPTION_WORDS.sub("", text)
    tokens = [t for t in _LETTER_SEPARATORS.split(stripped) if t]
    found, problem = [], ""
    for token in tokens:
        tm = _LETTER_TOKEN.match(token)
        if tm is None:
            problem = f"{token!r} is not an option letter"
            break
        letter = tm.group(1).upper()
        if letter not in letters:
            problem = f"{letter} is not one of the options {letters[0]}-{letters[-1]}"
            break
        found.append(letter)
    if found and not problem:
        return tuple(sorted(set(found))), ""
    key = " ".join(text.lower().split())
    if key in lowered:  # the option's own text
        return (lowered[key],), ""
    # "A. doubled" / "A) doubled": one letter followed by its own option text; or by any text
    # that names no other letter ("E, ICP-OES", "C. CC(N)=O, SC1=CC=C(...)C=C1": the option's
    # content, full of capitals but never a lone letter).
    m = re.match(r"^\(?([A-Za-z])(?:[).:,]|\s+-)\s+(.+)$", text, re.DOTALL)
    if m and m.group(1).upper() in letters:
        rest = " ".join(m.group(2).strip().strip(".").lower().split())
        if rest == " ".join(options[letters.index(m.group(1).upper())].lower().split()):
            return (m.group(1).upper(),), ""
        words = re.findall(r"[A-Za-z]+", m.group(2))
        if any(len(w) > 1 for w in words) and not _LONE_LETTER.search(m.group(2)):
            return (m.group(1).upper(),), ""
    return None, problem or "no option letter"


# An explicit answer phrase in free text: "The answer is B", "Answer: A and C",
# "the correct options are (A), (C)". The letters must end the phrase (end of line or sentence).
_MCQ_PHRASE = re.compile(
    r"(?:final\s+answer|correct\s+answers?|correct\s+options?|correct\s+choices?|answers?)"
    r"\s*(?:(?:is|are|would\s+be)\s*[:=]?|[:=])\s*(?:options?\s+|choices?\s+)?"
    r"((?:\(?[A-Za-z][).]?)(?:\s*(?:,|;|&|and|\s)\s*\(?[A-Za-z][).]?)*)"
    r"\s*(?=$|[.\n!;]|\s+(?:because|since|as)\b)",
    re.IGNORECASE | re.MULTILINE,
)
# "I think A is right", "I believe (C) is the correct answer": one capital letter, judged.
_JUDGED = re.compile(
    r"\bI\s+(?:think|believe)\s+(?:that\s+)?(?:option\s+|choice\s+)?\(?([A-Z])\)?\s+(?:is|would\s+be)"
    r"\s+(?:right|correct|the\s+(?:right|correct|best)\s+(?:answer|option|choice))\b"
)
# A completion that starts with its answer (completion prompts end with "Answer:"): " B",
# "B, C", "B.", "(B)" — letters followed by the end, a new line, or ".", ")" then a space.
_LEADING_LETTERS = re.compile(
    r"^\s*\(?([A-Za-z](?:\s*(?:,|and|&)\s*[A-Za-z])*)\s*(?:$|\n|[.)](?:\s|$))", re.IGNORECASE
)


def extract_mcq(
    text: str,
    options: Sequence[str],
    *,
    prefer: str = "tags",
    llm_extractor: Callable[[str], str | None] | None = None,
) -> Extraction:
    """The chosen option letters of a completion.

    Order of attempts: answer tags (all of them: identical answers count once, different ones
    are a conflict and give no answer); then, untagged, a completion that is only letters, one
    that starts with its letters (completion prompts), or the last explicit answer phrase
    ("the answer is B"); then ``llm_extractor`` (text -> a tagged or bare answer), if given.
    Free-standing capitals are never read as answers (the pronoun "I", "A catalyst").

    Args:
        text: the completion.
        options: the option texts in lettered order.
        prefer: ``tags`` (instruction prompts) or ``leading`` (completion prompts: a leading
            answer is tried before the tags).
        llm_extractor: a callable for completions nothing else reads.
    """
    text = without_confidence(text)
    tagged = find_tagged(text)
    if prefer == "leading":
        lead = _leading_letters(text, options)
        if lead is not None:
            return lead
    tag_reason = ""
    if tagged:
        parsed = [parse_letters(body, options) for body in tagged]
        values = {v for v, _ in parsed if v is not None}
        if len(values) == 1:
            return Extraction(values.pop(), "tag", raw="|".join(tagged))
        if len(values) > 1:
            return Extraction(None, "none", "conflicting tagged answers", "|".join(tagged))
        # Only unreadable tags (e.g. an echoed "<answer>" placeholder): read the rest untagged.
        tag_reason = parsed[0][1]
    untagged = _untagged_letters(_TAGGED.sub(" ", text), options)
    if untagged is not None:
        return untagged
    if llm_extractor is not None:
        answer = llm_extractor(text)
        if answer:
            inner = find_tagged(answer) or [answer]
            value, reason = parse_letters(inner[0], options)
            return Extraction(value, "llm" if value else "none", reason, answer)
    why = f": {tag_reason}" if tag_reason else ""
    return Extraction(None, "none", f"no answer found{why}", text[:200])


def _leading_letters(text: str, options: Sequence[str]) -> Extraction | None:
    cleaned = _clean(text)
    # [ \t]*, not \s*: a line start that may eat newlines rescans every blank line after it
    # (20,000 blank lines took 10-20 s).
    if len(re.findall(r"^[ \t]*\(?[A-Za-z][.)]\s", cleaned, re.MULTILINE)) >= 2:
        return None  # a walk through the options ("A. wrong ... B. right"), not an answer
    # "1. A", "1. A, B": the question's number, then the answer (completion prompts)
    m = _LEADING_LETTERS.match(re.sub(r"^\s*\d+[.)]\s+(?=\(?[A-Za-z]\b)", "", cleaned, count=1))
    if m:
        value, _ = parse_letters(m.group(1), options)
        if value is not None:
            return Extraction(value, "untagged", raw=m.group(0).strip())
    return None


def _untagged_letters(text: str, options: Sequence[str]) -> Extraction | None:
    cleaned = _clean(text)
    short = len(cleaned) <= 40 and "\n" not in cleaned
    whole, _ = parse_letters(cleaned, options) if short else (None, "")
    if whole is not None:
        return Extraction(whole, "untagged", raw=cleaned)
    lead = _leading_letters(text, options)
    if lead is not None:
        return lead
    for m in reversed(list(_MCQ_PHRASE.finditer(cleaned))):
        value, _ = parse_letters(m.group(1), options)
        if value is not None:
            return Extraction(value, "untagged", raw=m.group(0).strip())
    judged = {m.group(1) for m in _JUDGED.finditer(cleaned)}
    if len(judged) == 1 and (letter := judged.pop()) in _letters(options):
        return Extraction((letter,), "untagged", raw=letter)
    return None


def _letters(options: Sequence[str]) -> list[str]:
    return [chr(65 + i) for i in range(len(options))]


# -- numbers ---------------------------------------------------------------------------------

_UNITS = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen",
]  # fmt: skip
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_SCALES = {
    "hundred": 100,
    "thousand": 10**3,
    "million": 10**6,
    "billion": 10**9,
    "trillion": 10**12,
}
_NUMBER_WORD = "|".join([*_UNITS, *_TENS, *_SCALES])
# Whole words only: "none", "often", "fourteen" are not "one", "ten", "four".
_WORDS = re.compile(
    rf"\b(?:{_NUMBER_WORD})(?:(?:[\s-]+|\s+and\s+)(?:{_NUMBER_WORD}))*\b", re.IGNORECASE
)


_DIGIT_WORD = "|".join(_UNITS[:10])
_SPELLED_DECIMAL = re.compile(
    rf"\b((?:{_NUMBER_WORD})(?:[\s-]+(?:{_NUMBER_WORD}))*)\s+point((?:\s+(?:{_DIGIT_WORD}))+)\b",
    re.IGNORECASE,
)


def word_number(phrase: str) -> int | None:
    """``"one hundred and five"`` -> 105, ``"twenty-three"`` -> 23, ``"Two"`` -> 2; ``None`` for
    a phrase that is not one number (``"one two"``)."""
    words = [w for w in re.split(r"[\s-]+", phrase.lower()) if w and w != "and"]
    total, current, last = 0, 0, None
    for word in words:
        if word in _UNITS:
            value = _UNITS.index(word)
            if last in ("unit", "teen") or (last == "tens" and value >= 10):
                return None
            current += value
            last = "teen" if value >= 10 else "unit"
        elif word in _TENS:
            if last in ("unit", "teen", "tens"):
                return None
            current += 10 * (_TENS.index(word) + 2)
            last = "tens"
        elif word in _SCALES:
            scale = _SCALES[word]
            if scale == 100:
                current = (current or 1) * 100
            else:
                total += (current or 1) * scale
                current = 0
            last = "scale"
        else:
            return None
    return total + current


_MANTISSA = re.compile(
    # not after a letter and a sign: "e-10" (no mantissa) and "cm-1" (a unit) are not numbers
    r"(?<![\w.^/])(?<![A-Za-z][+-])(?P<sign>[+-]?)\s?(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d,])|\d+(?:\.\d*)?|\.\d+)"
)
_EXPONENT = re.compile(
    r"\s*(?:"
    r"(?:[eE]|exp)\s?(?P<e>[+-]?\d+)"  # 4.67e5, 4.67E-5, 1exp10
    r"|(?:\u00d7|x|X|\*|\\times|\u00b7|\\cdot)\s*10\s*(?:"
    r"\^\s*\{?\s*\(?\s*(?P<p>[+-]?\d+)\s*\)?\s*\}?"  # x 10^2, \times 10^{-3}, * 10^(-3)
    r"|\*\*\s*\(?(?P<q>[+-]?\d+)\)?"  # * 10**-3
    r"|(?P<s>[⁺⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)"  # × 10⁻³
    r"|(?P<d>[+-]\d+)(?![\d.])"  # × 10-3 (a lost caret: after "× 10" it can only be a power)
    r"))"
)
_POWER_ONLY = re.compile(
    r"(?<![\w.^])(?P<sign>[+-]?)10\s*(?:\^\s*\{?\s*\(?\s*(?P<p>[+-]?\d+)\s*\)?\s*\}?|(?P<s>[⁺⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+))"
)
_FRACTION_TAIL = re.compile(r"\s*/\s*(?P<den>\d+(?:\.\d+)?)(?![\w.])")
_RANGE = re.compile(r"^\s*(?:-|to|or|and|~)\s*[+-]?\d", re.IGNORECASE)


@dataclass(frozen=True)
class _Found:
    value: float
    start: int
    end: int


def _numbers(text: str) -> list[_Found]:
    """Every number in ``text``, scientific notation, thousands and fractions read whole."""
    found: list[_Found] = []
    pos = 0
    while True:
        power = _POWER_ONLY.search(text, pos)
        mant = _MANTISSA.search(text, pos)
        if power and (mant is None or power.start() <= mant.start()):
            exp = power.group("p") or power.group("s").translate(_SUPERSCRIPTS)
            # float("1e<exp>") never raises: a huge exponent is inf (then dropped below).
            value = float(f"1e{exp}") * (-1 if power.group("sign") == "-" else 1)
            if math.isfinite(value):
                found.append(_Found(value, power.start(), power.end()))
            pos = power.end()
            continue
        if mant is None:
            return found
        number = float(mant.group("num").replace(",", ""))
        if mant.group("sign") == "-":
            number = -number
        end = mant.end()
        exp_match = _EXPONENT.match(text, end)
        if exp_match:
            # at most two factors: "3.27e-22*10^{10}" is 3.27e-12
            for _ in range(2):
                if exp_match is None:
                    break
                number *= float(f"1e{_exponent(exp_match)}")
                end = exp_match.end()
                exp_match = _EXPONENT.match(text, end)
        else:
            frac = _FRACTION_TAIL.match(text, end)
            if frac and float(frac.group("den")) != 0:
                number /= float(frac.group("den"))
                end = frac.end()
        if math.isfinite(number):  # out-of-range numbers ("1e400", 400 nines) are not answers
            found.append(_Found(number, mant.start(), end))
        pos = end


def _exponent(found: re.Match[str]) -> str:
    exp = found.group("e") or found.group("p") or found.group("q") or found.group("d")
    return exp if exp is not None else found.group("s").translate(_SUPERSCRIPTS)


def parse_number(body: str) -> tuple[float | None, str]:
    """One number from an answer body, in any form a model writes it.

    ``4.67e5``, ``5.4 x 10^2``, ``5.4 * 10^{2}``, ``5.4 \\times 10^{2}``, ``1.2 × 10⁻³``,
    ``−3`` (Unicode minus), ``1,234`` (thousands), ``1/2``, ``\\frac{1}{2}``, ``eleven``,
    ``one hundred``; units and labels around it are ignored (``pH = 4.5``, ``58.44 g/mol``,
    ``298 K``, ``cm-1``). Two different numbers (``4.5 or 5``, a range ``4-5``) give none;
    ``a ± b`` gives ``a``.

    Returns:
        The number, or ``None`` and why.
    """
    text = _clean(body)
    if not text:
        return None, "empty answer"
    # "x ± y": the value is x.
    text = re.split(r"±|\+/-|\\pm", text)[0]
    numbers = _numbers(text)
    if not numbers:
        spelled = _SPELLED_DECIMAL.search(text)
        if spelled:  # "fifty-eight point four four" -> 58.44
            whole = word_number(spelled.group(1))
            digits = "".join(str(_UNITS.index(d.lower())) for d in spelled.group(2).split())
            if whole is not None:
                return float(f"{whole}.{digits}"), ""
        words = [m.group(0) for m in _WORDS.finditer(text)]
        values = {word_number(w) for w in words} - {None}
        if len(values) == 1:
            value = values.pop()
            assert value is not None
            return float(value), ""
        return None, "no number" if not values else "several numbers"
    first = numbers[0]
    if len(numbers) > 1:
        after = text[first.end :]
        if _RANGE.match(after):
            return None, "a range, not one number"
        # Labels with an "=" before the answer ("ΔG = -237 kJ/mol", "n = 2, so E = 13.6"):
        # the number after the last "=" or "≈" is the answer.
        eq = max(text.rfind("="), text.rfind("≈"))
        if eq >= 0:
            tail = [n for n in numbers if n.start > eq]
            if tail:
                first = tail[0]
                rest = [n for n in tail[1:] if n.value != first.value]
                if not rest or all(_is_unit_exponent(text, n) for n in rest):
                    return first.value, ""
        distinct = {n.value for n in numbers if not _is_unit_exponent(text, n)}
        if len(distinct) > 1:
            return None, "several numbers"
        if distinct:
            return distinct.pop(), ""
    return first.value, ""


def _is_unit_exponent(text: str, found: _Found) -> bool:
    # "mol-1", "m^2", "s^-1": digits glued to a unit after a letter, caret or sign.
    before = text[max(0, found.start - 3) : found.start]
    return bool(re.search(r"(?:[A-Za-z]|\^)[-+]?$", before))


_NUMBER_PHRASE = re.compile(
    r"(?:final\s+answer|answer|result|value|approximately|≈|=)\s*(?:is|:|=|of|would\s+be)?\s*"
    r"(?:approximately|about|around|roughly|~)?\s*([^\n]{1,80})",
    re.IGNORECASE,
)


_TRAILING_VALUE = re.compile(
    r"\b(?:is|are|was|equals|of)\s+([+-]?(?:\d|\.\d)[^\s]*(?:\s+[^\s\d]{1,12})?)\s*\.?\s*$",
    re.IGNORECASE,
)


def extract_number(
    text: str,
    *,
    prefer: str = "tags",
    llm_extractor: Callable[[str], str | None] | None = None,
) -> Extraction:
    """The numeric answer of a completion.

    Order of attempts: answer tags (identical values count once; different ones are a
    conflict); a completion that is only a number (with units); one that starts with its number
    on its own line (completion prompts); the last "answer is ..." / "= ..." phrase; number
    words in such a phrase; then ``llm_extractor``, if given.
    """
    text = without_confidence(text)
    tagged = find_tagged(text)
    if prefer == "leading":
        lead = _leading_number(text)
        if lead is not None:
            return lead
    reasons = []
    if tagged:
        parsed = [parse_number(body) for body in tagged]
        values = {v for v, _ in parsed if v is not None}
        if len(values) == 1:
            return Extraction(values.pop(), "tag", raw="|".join(tagged))
        if len(values) > 1:
            return Extraction(None, "none", "conflicting tagged answers", "|".join(tagged))
        reasons = [r for _, r in parsed]
    rest = _TAGGED.sub(" ", text)
    short = len(rest.strip()) <= 40 and "\n" not in rest.strip()
    whole, _ = parse_number(rest) if short else (None, "")
    if whole is not None:
        return Extraction(whole, "untagged", raw=rest.strip())
    lead = _leading_number(rest)
    if lead is not None:
        return lead
    for m in reversed(list(_NUMBER_PHRASE.finditer(_clean(rest)))):
        # The phrase's own sentence: up to a full stop that is not a decimal point.
        sentence = re.split(r"\.(?!\d)|;|,\s+(?:so|which|and)\b", m.group(1))[0]
        value, _ = parse_number(sentence)
        if value is not None:
            return Extraction(value, "untagged", raw=m.group(0).strip())
    # A completion that ends with its value: "The oxidation state of Fe in Fe2(SO4)3 is +3."
    tail = _TRAILING_VALUE.search(_clean(rest))
    if tail is not None:
        value, _ = parse_number(tail.group(1))
        if value is not None:
            return Extraction(value, "untagged", raw=tail.group(0).strip())
    if llm_extractor is not None:
        answer = llm_extractor(text)
        if answer:
            inner = find_tagged(answer) or [answer]
            value, reason = parse_number(inner[0])
            return Extraction(value, "llm" if value is not None else "none", reason, answer)
    why = f": {reasons[0]}" if reasons else ""
    return Extraction(None, "none", f"no answer found{why}", text[:200])


def _leading_number(text: str) -> Extraction | None:
    first_line = _clean(text).split("\n", 1)[0]
    if len(first_line) > 60 or re.match(r"^\s*\d+[.)]\s+[A-Za-z]", first_line):
        return None  # long prose, or a numbered list ("1. Compute the moles")
    starts = rf"^\s*(?:[+-]?(?:\d|\.\d)|(?:{_NUMBER_WORD})\b)"
    if not re.match(starts, first_line, re.IGNORECASE):
        return None
    value, _ = parse_number(first_line)
    return Extraction(value, "untagged", raw=first_line.strip()) if value is not None else None


# -- refusals --------------------------------------------------------------------------------

# First-person refusals only. The reference's bare "Sorry", "I do not", "Hello!",
# "Unfortunately,", "unethical" or "OpenAI" also fire on genuine answers ("Unfortunately, the
# yield drops...", "I do not expect a shift...", "dumping it is unethical and illegal").
REFUSAL_PATTERNS = (
    r"\bI(?:'m| am)\s+(?:really\s+|very\s+|truly\s+|so\s+)?sorry\b",
    r"\b(?:I\s+)?apologi[sz]e,?\s+but\b",
    r"\bmy\s+apologies\b",
    r"\bas\s+an\s+AI\b",
    r"\bas\s+an?\s+(?:large\s+)?language\s+model\b",
    r"\bas\s+an?\s+(?:AI\s+)?assistant\b",
    r"\bI\s+(?:cannot|can't|can\s+not|won't|will\s+not|must\s+not|am\s+not\s+able\s+to|'m\s+not\s+able\s+to|am\s+unable\s+to|'m\s+unable\s+to)\s+"
    r"(?:help|assist|provide|answer|comply|support|create|fulfil|fulfill|share|give|do\s+that|engage|participate|respond)\b",
    r"\bI(?:'m| am)\s+unable\b",
    r"\bI\s+(?:must|have\s+to|need\s+to)\s+(?:decline|refuse)\b",
    r"\bI(?:'m| am)\s+not\s+(?:comfortable|allowed|permitted|going)\s+to\b",
    r"\b(?:cannot|can't)\s+(?:help|assist)\s+with\s+(?:that|this)\b",
    r"\bagainst\s+(?:my|our)\s+(?:guidelines|policies|policy|principles)\b",
)
_REFUSAL = re.compile("|".join(REFUSAL_PATTERNS), re.IGNORECASE)


def is_keyword_refusal(text: str) -> bool:
    """Whether ``text`` contains a first-person refusal phrase (``REFUSAL_PATTERNS``)."""
    return bool(_REFUSAL.search(text.replace("\u2019", "'")))
