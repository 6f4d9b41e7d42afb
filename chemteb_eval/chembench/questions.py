"""ChemBench question records: one frozen, validated record per question, and keyword checks.

The question-file schema (local JSON) and the Hub's row schema (``jablonkagroup/ChemBench``) both
load through ``Question.from_dict``; ``load.py`` reads the files.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from chemteb_eval._files import parse_json

__all__ = ["DIFFICULTY_KEYWORDS", "REQUIREMENT_KEYWORDS", "Question", "keyword_problems"]

REQUIREMENT_KEYWORDS = frozenset(
    {
        "requires-knowledge",
        "requires-reasoning",
        "requires-calculation",
        "requires-tooluse",
        "requires-ocr",
    }
)
DIFFICULTY_KEYWORDS = frozenset({"difficulty-basic", "difficulty-advanced"})


@dataclass(frozen=True)
class Question:
    """One ChemBench question (exactly one example).

    Args:
        name: the question's name (``polymer_chemistry_17``).
        input: the question text.
        topic: its topic (the local folder, or the Hub config); ``None`` if unknown.
        uuid: its uuid, if the file has one.
        description: the file's description.
        keywords: its keywords (topic, requirement, difficulty).
        metrics: the file's metrics; "multiple_choice_grade" makes it multiple choice.
        target: the numeric answer (numeric questions).
        target_scores: option text -> score (multiple choice), in the file's order.
        entries: for a MaCBench-style question whose ``input`` holds placeholders
            (``{type1} {entry1}``), what each one stands for: ``{"type": "text" | "image",
            "value": text, or an image as a data URL / http(s) URL}`` (the example's
            ``qentries_modality``, its ``image`` set when it has one).
        relative_tolerance: the question's own tolerance, relative to |target| (see
            ``score_question``); ``None`` for the default.
    """

    name: str
    input: str
    topic: str | None = None
    uuid: str | None = None
    description: str = ""
    keywords: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()
    target: float | None = None
    target_scores: Mapping[str, float] | None = None
    relative_tolerance: float | None = None
    entries: Mapping[str, Mapping[str, str]] | None = None

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("name: a question needs a name.")
        if not self.input:
            raise ValueError(f"input: question {self.name} has no text.")
        if self.is_mcq:
            if not self.target_scores:
                raise ValueError(f"target_scores: multiple-choice question {self.name} has none.")
            if not any(v == 1 for v in self.target_scores.values()):
                raise ValueError(f"target_scores: question {self.name} has no option scored 1.")
        elif self.target is None or not math.isfinite(self.target):
            raise ValueError(f"target: numeric question {self.name} needs a finite number.")
        tolerance = self.relative_tolerance
        if tolerance is not None and not (math.isfinite(tolerance) and tolerance >= 0):
            raise ValueError(
                f"relative_tolerance: question {self.name} has {tolerance}; it must be a finite "
                "number >= 0, or None for the default."
            )
        if self.target_scores is not None:
            object.__setattr__(self, "target_scores", MappingProxyType(dict(self.target_scores)))
        if self.entries is not None:
            object.__setattr__(self, "entries", _checked_entries(self.name, self.entries))
        missing = sorted(set(_PLACEHOLDER.findall(self.input)) - set(self.entries or {}))
        if self.entries is not None and missing:
            raise ValueError(f"qentries_modality: question {self.name} lacks {missing}.")

    @property
    def is_multimodal(self) -> bool:
        """Whether the question shows an image."""
        return any(e["type"] == "image" for e in (self.entries or {}).values())

    def parts(self) -> list[dict[str, str]]:
        """The question as ``{"type": "text" | "image", "value": ...}`` parts, placeholders
        replaced by their entries and neighbouring texts joined with a space."""
        if self.entries is None:
            return [{"type": "text", "value": self.input}]
        out: list[dict[str, str]] = []
        for piece in _PLACEHOLDER_SPLIT.split(self.input):
            entry = self.entries.get(piece[1:-1]) if _PLACEHOLDER_SPLIT.fullmatch(piece) else None
            part = dict(entry) if entry is not None else {"type": "text", "value": piece.strip()}
            if part["type"] == "text" and not part["value"]:
                continue
            if part["type"] == "text" and out and out[-1]["type"] == "text":
                out[-1]["value"] += " " + part["value"]
            else:
                out.append(part)
        return out

    @property
    def is_mcq(self) -> bool:
        """Multiple choice iff "multiple_choice_grade" is among the metrics."""
        return "multiple_choice_grade" in self.metrics

    @property
    def key(self) -> str:
        """The uuid when there is one, else the name: what completions are matched by."""
        return self.uuid or self.name

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | str, *, topic: str | None = None) -> Question:
        """A question from the question-file schema (local JSON) or the Hub's row schema.

        Local: ``examples = [{input, target | target_scores: {text: 0|1}}]``, optional
        ``tolerance`` (read as relative). Hub (``jablonkagroup/ChemBench``): ``examples =
        [{input, target | None, target_scores: JSON string | None}]``, ``relative_tolerance``.

        Raises:
            ValueError: naming the question and the field that is wrong.
        """
        if isinstance(data, str):
            try:
                data = parse_json(data)
            except ValueError as exc:
                raise ValueError(f"question: not JSON ({exc}).") from exc
        if not isinstance(data, Mapping):
            raise ValueError("question: expected an object with name, examples, metrics, ...")
        name = str(data.get("name") or "")
        examples = data.get("examples")
        if not isinstance(examples, Sequence) or len(examples) != 1:
            raise ValueError(f"examples: question {name or '?'} must have exactly one example.")
        example = examples[0]
        if not isinstance(example, Mapping):
            raise ValueError(f"examples: question {name or '?'} has a malformed example.")
        scores = example.get("target_scores")
        if isinstance(scores, str):
            try:
                scores = json.loads(scores)
            except ValueError as exc:
                raise ValueError(
                    f"target_scores: question {name} has invalid JSON ({exc})."
                ) from exc
        target = example.get("target")
        number = None
        if target is not None and scores is None:
            try:
                number = float(str(target).strip())
            except ValueError as exc:
                raise ValueError(f"target: question {name} has {target!r}, not a number.") from exc
        if scores is not None:
            if not isinstance(scores, Mapping) or not all(
                isinstance(v, (int, float)) for v in scores.values()
            ):
                raise ValueError(f"target_scores: question {name} needs {{option: score}}.")
            scores = {str(k): float(v) for k, v in scores.items()}
        tolerance = _tolerance(data, name)
        entries = _modality_entries(name, example.get("qentries_modality"))
        return cls(
            name=name,
            input=str(example.get("input") or ""),
            topic=topic or data.get("topic"),
            uuid=data.get("uuid") or None,
            description=str(data.get("description") or ""),
            keywords=_strings(data, "keywords", name),
            metrics=_strings(data, "metrics", name),
            target=number,
            target_scores=scores,
            relative_tolerance=tolerance,
            entries=entries,
        )

    def to_dict(self) -> dict[str, Any]:
        """The question-file schema (what ``from_dict`` reads back)."""
        example: dict[str, Any] = {"input": self.input}
        if self.entries is not None:
            kind = "image" if self.is_multimodal else "text"
            example["qentries_modality"] = {kind: {k: dict(v) for k, v in self.entries.items()}}
        if self.is_mcq:
            example["target_scores"] = dict(self.target_scores or {})
        else:
            example["target"] = self.target
        out: dict[str, Any] = {
            "name": self.name,
            "uuid": self.uuid,
            "description": self.description,
            "keywords": list(self.keywords),
            "metrics": list(self.metrics),
            "examples": [example],
            "topic": self.topic,
        }
        if self.relative_tolerance is not None:
            out["relative_tolerance"] = self.relative_tolerance
        return out


def _strings(data: Mapping[str, Any], field: str, name: str) -> tuple[str, ...]:
    """A list-of-strings field (``keywords``, ``metrics``); absent or null is empty. A number was
    a TypeError, and a string was read letter by letter."""
    raw = data.get(field)
    if raw is None:
        return ()
    if isinstance(raw, (str, bytes)) or not isinstance(raw, Sequence):
        raise ValueError(
            f"{field}: question {name or '?'} has {raw!r}; it must be a list of strings."
        )
    return tuple(str(v) for v in raw)


def _tolerance(data: Mapping[str, Any], name: str) -> float | None:
    """The question's relative tolerance (``relative_tolerance``, else the local files'
    ``tolerance``): a finite number >= 0, or ``None`` for the default.

    Raises:
        ValueError: naming the field and the question, for a list, a bool, a word, NaN, inf or a
            negative number (``float()`` alone raises TypeError on a list, and takes "nan").
    """
    field = "relative_tolerance" if data.get("relative_tolerance") is not None else "tolerance"
    raw = data.get(field)
    if raw is None:
        return None
    uuid = data.get("uuid")
    which = f"question {name or '?'}" + (f" (uuid {uuid})" if uuid else "")
    problem = (
        f"{field}: {which} has {raw!r}; it must be a number >= 0 (relative to |target|, e.g. "
        f"0.01 for 1%), or left out for the default."
    )
    # bool is an int to Python, but true/false in a file is a mistake, not a tolerance of 1 or 0.
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
        raise ValueError(problem)
    try:
        value = float(raw.strip() if isinstance(raw, str) else raw)
    except (ValueError, OverflowError) as exc:  # OverflowError: a 400-digit integer
        raise ValueError(problem) from exc
    if not math.isfinite(value) or value < 0:
        raise ValueError(problem)
    return value


_PLACEHOLDER = re.compile(r"\{((?:type|entry)[0-9]+)\}")
_PLACEHOLDER_SPLIT = re.compile(r"(\{(?:type|entry)[0-9]+\})")
_IMAGE_URL = re.compile(r"^(?:data:image/[A-Za-z0-9.+-]+;base64,[A-Za-z0-9+/=\s]+|https?://\S+)$")


def _checked_entries(
    name: str, entries: Mapping[str, Mapping[str, str]]
) -> Mapping[str, Mapping[str, str]]:
    out = {}
    for key, entry in entries.items():
        where = f"qentries_modality: question {name}, entry {key!r}"
        if not isinstance(entry, Mapping) or entry.get("type") not in ("text", "image"):
            raise ValueError(f"{where} needs type 'text' or 'image'.")
        value = entry.get("value")
        if not isinstance(value, str):
            raise ValueError(f"{where} has no string value.")
        if entry["type"] == "image" and not _IMAGE_URL.match(value):
            raise ValueError(
                f"{where}: an image must be a data URL (data:image/png;base64,...) or an "
                "http(s) URL."
            )
        out[str(key)] = MappingProxyType({"type": str(entry["type"]), "value": value})
    return MappingProxyType(out)


def _modality_entries(name: str, modality: Any) -> dict[str, Any] | None:
    """The placeholder entries of an example's ``qentries_modality``: the ``image`` set when it
    holds an image (MaCBench), else the ``text`` set; ``None`` without placeholders."""
    if modality is None:
        return None
    if not isinstance(modality, Mapping) or not all(
        isinstance(v, Mapping) for v in modality.values()
    ):
        raise ValueError(f"qentries_modality: question {name} needs {{modality: {{key: entry}}}}.")
    images = modality.get("image") or {}
    if any(isinstance(e, Mapping) and e.get("type") == "image" for e in images.values()):
        return dict(images)
    return dict(modality.get("text") or images) or None


def keyword_problems(keywords: Sequence[str]) -> list[str]:
    """What is wrong with a question's keywords (empty when nothing is).

    A question needs at least one requirement (``REQUIREMENT_KEYWORDS``) and one difficulty
    (``DIFFICULTY_KEYWORDS``); those are lowercase with "-". Misspellings the real data has
    ("difficultly-basic", "difficult-basic") and unknown ``requires-*`` keywords are named.
    """
    problems = []
    for k in keywords:
        low = k.strip().lower()
        if low.startswith(("requires", "difficult")) and k != low.replace(" ", "-").replace(
            "_", "-"
        ):
            problems.append(f"{k!r} is not lowercase with '-'")
        elif low.startswith("requires-") and low not in REQUIREMENT_KEYWORDS:
            problems.append(f"{k!r} is not a requirement keyword ({sorted(REQUIREMENT_KEYWORDS)})")
        elif low.startswith("difficult") and low not in DIFFICULTY_KEYWORDS:
            problems.append(
                f"{k!r} looks like a misspelt difficulty ({sorted(DIFFICULTY_KEYWORDS)})"
            )
    if not any(k in REQUIREMENT_KEYWORDS for k in keywords):
        problems.append("no requirement keyword")
    if not any(k in DIFFICULTY_KEYWORDS for k in keywords):
        problems.append("no difficulty keyword")
    return problems
