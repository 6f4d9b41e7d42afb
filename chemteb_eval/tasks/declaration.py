"""A task's declaration: the one place a declaration (YAML or JSON) is parsed and written.

A task file is parsed here (``parse_declaration``: a key written twice refused, the file and line
named); a task record's normalised declaration (``Task.definition``, written by
``dump_declaration`` and recorded beside its results) is read back here, once per text, as a
``Declaration`` value. ``tasks.custom`` checks what a task file says; ``tasks.recorded`` is the
home of the declarations recorded beside results; nothing outside ``tasks`` parses YAML of a task.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chemteb_eval.errors import ChemtebError

__all__ = [
    "Declaration",
    "TaskFileError",
    "declaration_of",
    "dump_declaration",
    "front_matter",
    "parse_declaration",
    "reads_back_as",
]

_MAX_BYTES = 1 << 20  # a task file is a few hundred bytes; 1 MiB bounds what a hostile one costs


class TaskFileError(ChemtebError, ValueError):
    """A task file that cannot be read or contradicts itself (the message names the key)."""


def dump_declaration(declared: Mapping[str, Any]) -> str:
    """A declaration as the YAML a task record holds (``Task.definition``) and a run records."""
    import yaml

    text: str = yaml.safe_dump(dict(declared), sort_keys=False, allow_unicode=True)
    return text


def reads_back_as(value: str) -> bool:
    """Whether a YAML reader reads ``value`` back as the very text (not null, true, 1.0 or
    0x1F)."""
    import yaml

    return bool(yaml.safe_load(value) == value)


def front_matter(front: str) -> Any:
    """A Hub card's YAML front matter (a dataset folder's ``README.md``), parsed safely;
    ``yaml.YAMLError`` when it is not YAML."""
    import yaml

    return yaml.safe_load(front)


@dataclass(frozen=True)
class Declaration:
    """A task record's declaration (``Task.definition``), parsed once per text.

    Args:
        text: the declaration as the record holds it (``""``: the task has none).
        parsed: what the text parses to (``None`` for no text).
    """

    text: str
    parsed: Any = None

    @property
    def source_format(self) -> str:
        """How the task's files are laid out (``source.format``: csv, jsonl, parquet, beir,
        hub); ``hub`` where the declaration names none."""
        declared = self.parsed if self.text else {}
        return str((declared.get("source") or {}).get("format", "hub")) if declared else "hub"

    def naming(self, scored: str | None) -> str:
        """The declaration recorded beside a result, naming the data its scores came from: a
        local source's fingerprint becomes ``scored`` (the scored bytes', which may differ from
        those the task file was read with); the text itself where there is nothing to change."""
        declared = self.parsed
        source = declared.get("source") if isinstance(declared, dict) else None
        if not isinstance(source, dict) or "fingerprint" not in source or scored is None:
            return self.text
        if source["fingerprint"] == scored:
            return self.text
        changed = copy.deepcopy(declared)  # the parse is shared: never changed in place
        changed["source"]["fingerprint"] = scored
        return dump_declaration(changed)


@functools.lru_cache(maxsize=256)
def declaration_of(text: str) -> Declaration:
    """``text`` (a ``Task.definition``) parsed, once: the same text gives the same value."""
    if not text:
        return Declaration(text)
    import yaml

    return Declaration(text, yaml.safe_load(text))


def parse_declaration(path: Path, text: str | None) -> dict[str, Any]:
    """A task file's mapping, from ``text`` (read from ``path`` when ``None``): JSON for a
    ``.json`` file, else YAML (safe), a key written twice refused. ``TaskFileError`` naming the
    file (and the line, where known) otherwise."""
    if text is None:
        try:
            if not path.is_file():
                raise TaskFileError(f"--task-file: {path} is not a file.")
            if path.stat().st_size > _MAX_BYTES:
                raise TaskFileError(f"{path}: over 1 MiB; a task file declares, it holds no data.")
            text = path.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise TaskFileError(f"{path}: cannot be read ({exc}).") from None
    try:
        if path.suffix == ".json":
            data = json.loads(text, object_pairs_hook=_unique_pairs)
        else:
            import yaml

            data = yaml.load(text, Loader=_unique_key_loader())  # a SafeLoader: safe_load's
    except _KeyTwice as twice:
        line = twice.line if twice.line is not None else _json_key_line(text, twice.key)
        at = f"{path}:{line}" if line is not None else f"{path}"
        raise TaskFileError(
            f"{at}: key {twice.key!r} is written twice in one mapping; keep one (a reader "
            "would silently keep the last)."
        ) from None
    except RecursionError:
        raise TaskFileError(f"{path}: nested too deeply to be a task file.") from None
    except ValueError as exc:
        raise TaskFileError(f"{path}: not valid JSON ({exc}).") from None
    except Exception as exc:  # yaml.YAMLError and its line, without importing yaml up front
        raise TaskFileError(f"{path}: not valid YAML ({' '.join(str(exc).split())}).") from None
    if not isinstance(data, dict):
        raise TaskFileError(f"{path}: must be a mapping of keys (name, type, source, ...).")
    return data


class _KeyTwice(Exception):  # raised inside the parsers; parse_declaration makes it a TaskFileError
    """A mapping of a task file that writes ``key`` twice (``line``: YAML's, from 1)."""

    def __init__(self, key: Any, line: int | None = None) -> None:
        super().__init__(key, line)
        self.key, self.line = key, line


@functools.lru_cache(maxsize=1)
def _unique_key_loader() -> type:
    """``yaml.SafeLoader`` that refuses a key written twice in one mapping, where YAML's own
    keeps the last silently (``name:`` twice, or ``columns: {text: a, text: b}``). Built on
    first use, so that importing this module does not import yaml."""
    import yaml

    class UniqueKeyLoader(yaml.SafeLoader):  # type: ignore[misc]  # yaml has no type hints
        def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
            if isinstance(node, yaml.MappingNode):
                seen: set[Any] = set()
                for key_node, _ in node.value:
                    if key_node.tag == "tag:yaml.org,2002:merge":
                        continue  # "<<: *defaults": keys it brings may be overridden
                    key = self.construct_object(key_node, deep=True)
                    if not isinstance(key, Hashable):
                        continue  # refused by the constructor below, with yaml's own message
                    if key in seen:
                        raise _KeyTwice(key, key_node.start_mark.line + 1)
                    seen.add(key)
            return super().construct_mapping(node, deep=deep)  # type: ignore[no-any-return]

    return UniqueKeyLoader


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``'s ``object_pairs_hook``: one JSON object, refused if it writes a key
    twice (``json`` keeps the last silently)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _KeyTwice(key)
        out[key] = value
    return out


# A JSON string, or a bracket outside one: enough to follow the objects of a valid document.
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]]')
_JSON_COLON = re.compile(r"\s*:")


def _json_key_line(text: str, key: str) -> int | None:
    """The line (from 1) where ``key`` is written a second time in one object of valid JSON
    ``text``: ``json`` gives its hooks no positions, so the document is walked again."""
    objects: list[set[str] | None] = []  # per open bracket: an object's keys, or None (array)
    for token in _JSON_TOKEN.finditer(text):
        mark = token.group()
        if mark in ("{", "["):
            objects.append(set() if mark == "{" else None)
        elif mark in ("}", "]"):
            objects.pop()
        elif objects and objects[-1] is not None and _JSON_COLON.match(text, token.end()):
            name = json.loads(mark)
            if name == key and name in objects[-1]:
                return text.count("\n", 0, token.start()) + 1
            objects[-1].add(name)
    return None
