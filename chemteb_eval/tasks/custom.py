"""A user's own data as a task, declared in one small YAML (or JSON) file.

```yaml
name: MyLabPatentRetrieval        # letters, digits and _.()- ; not a registered task's name
type: Retrieval                   # any type whose TaskKind has file_columns
description: patent claims against lab notes
source:
  path: patents/                  # a folder or a file, relative to this file
  # or:  hub: my-org/patents      with  revision: <the 40-hex commit>
  format: beir                    # optional: beir, hub, csv, jsonl or parquet (else inferred)
splits: [test]                    # the splits scored (default: test)
train_split: train                # the probe's training split (types that need one)
columns: {text: abstract}         # canonical column -> the file's column
main_score: ndcg_at_10            # optional: default the type's (the paper's, else MTEB's)
prompts: {query: "Represent the question: "}   # optional, by side: query, document
```

Everything about a type comes from its ``TaskKind``; nothing is restated. Every contradiction is
one line naming the key. A local source is named in results by a fingerprint of its files' bytes
(``sha256:`` + 16 hex digits), so a rerun on changed files never passes for the old data.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .declaration import TaskFileError, dump_declaration, reads_back_as
from .declaration import parse_declaration as _parse
from .kinds import KINDS, kind
from .records import PROTOCOLS, Task
from .registry import CUSTOM
from .source_files import ROW_SUFFIXES as _ROW_SUFFIXES
from .source_files import fingerprint_files, read_files, snapshot

__all__ = [
    "FORMATS",
    "TaskFile",
    "TaskFileError",
    "fingerprint_files",
    "read_files",
    "read_task_file",
    "snapshot",
    "task_files_in",
]

FORMATS = ("beir", "hub", "csv", "jsonl", "parquet")
_KEYS: tuple[str, ...] = ("name", "type", "description", "source", "splits", "train_split")
_KEYS += ("columns", "main_score", "prompts", "license", "protocol")
_SOURCE_KEYS = ("path", "hub", "revision", "format")
_SIDES = ("query", "document")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.()\-]{0,119}")
_SPLIT = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95}")
_COMMIT = re.compile(r"[0-9a-f]{40}")
_LICENSE = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+\-]{0,63}")  # SPDX ids and the Hub's (cc-by-4.0)


@dataclass(frozen=True)
class TaskFile:
    """One declared task, checked.

    Args:
        path: the task file.
        name, type, description, splits, train_split, main_score: as declared (defaults
            filled in from the type's ``TaskKind``).
        columns: canonical column -> the source's column.
        prompts: side (``query``, ``document``) -> prompt.
        source: the folder or file (local), else ``None``.
        hub: the Hub dataset id, with ``revision`` its commit.
        format: how the source is laid out (``FORMATS``).
        fingerprint: for a local source, ``sha256:`` + 16 hex digits over its files' bytes.
    """

    path: Path
    name: str
    type: str
    splits: tuple[str, ...]
    main_score: str
    format: str
    description: str = ""
    train_split: str | None = None
    columns: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    prompts: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    source: Path | None = None
    written: str | None = None  # source.path as the task file writes it (recorded, not ours)
    hub: str | None = None
    revision: str | None = None
    fingerprint: str | None = None
    license: str = ""  # the data's licence (an SPDX id), for publish-dataset's card
    protocol: str = "paper"  # records.PROTOCOLS: the paper's scoring, or MTEB 2.26's

    def declaration(self) -> dict[str, Any]:
        """The task file as it was understood, defaults filled in (recorded beside results)."""
        src: dict[str, Any] = {"format": self.format}
        if self.hub is not None:
            src.update(hub=self.hub, revision=self.revision)
        else:
            src.update(path=self.written or str(self.source), fingerprint=self.fingerprint)
        out: dict[str, Any] = {"name": self.name, "type": self.type}
        if self.description:
            out["description"] = self.description
        out.update(source=src, splits=list(self.splits), main_score=self.main_score)
        if self.train_split:
            out["train_split"] = self.train_split
        if self.columns:
            out["columns"] = dict(self.columns)
        if self.prompts:
            out["prompts"] = dict(self.prompts)
        if self.license:
            out["license"] = self.license
        if self.protocol != "paper":
            out["protocol"] = self.protocol
        return out

    def to_task(self) -> Task:
        """The task record: in the ``custom`` collection, loaded from the Hub at the pinned
        commit (the columns renamed), or from the local source (``builder="custom"``)."""
        return Task(
            name=self.name,
            type=self.type,  # type: ignore[arg-type]  # checked against KINDS
            hf_path=self.hub,
            revision=self.revision if self.hub else self.fingerprint,
            eval_splits=self.splits,
            main_score=self.main_score,
            collection=CUSTOM,
            columns={v: k for k, v in self.columns.items() if v != k},
            train_split=self.train_split,
            builder=None if self.hub else "custom",
            description=self.description or f"a task declared in {self.path.name}",
            source=self.hub or "a user's files",
            prompts=self.prompts,
            definition=dump_declaration(self.declaration()),
            data_format=self.format,
            protocol=self.protocol,
        )


def task_files_in(paths: Iterable[str | Path]) -> list[Path]:
    """The task files named: files as they are, folders by their ``*.yaml``, ``*.yml`` and
    ``*.json`` files (sorted). ``ValueError`` naming ``--task-file`` for a path that is neither,
    or a folder without any."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            inside = sorted(
                p for p in path.iterdir() if p.suffix in (".yaml", ".yml", ".json") and p.is_file()
            )
            if not inside:
                raise TaskFileError(f"--task-file: {path} holds no .yaml, .yml or .json file.")
            found += inside
        elif path.is_file():
            found.append(path)
        else:
            raise TaskFileError(f"--task-file: {path} is not a file or a folder.{_near(path)}")
    return list({p.resolve(): p for p in found}.values())  # a file named twice is read once


def _near(path: Path) -> str:
    """`` Did you mean ...?`` naming the task files beside ``path`` whose names are close to
    its (a typo, another extension), or ``""``."""
    import difflib

    try:
        beside = [
            p.name
            for p in path.parent.iterdir()
            if p.suffix in (".yaml", ".yml", ".json") and p.is_file()
        ]
    except OSError:  # the folder itself is not there, or not readable
        return ""
    close = difflib.get_close_matches(path.name, beside, n=3, cutoff=0.75)
    shown = ", ".join(str(path.parent / name) for name in close)
    return f" Did you mean {shown}?" if close else ""


def read_task_file(
    path: str | Path,
    *,
    text: str | None = None,
    data: Mapping[str, Any] | None = None,
    fingerprint: str | None = None,
) -> TaskFile:
    """Read and check one task file (``text``: its content, when already read;
    ``fingerprint``: its data's, when known, so the files are not read again).

    Raises:
        TaskFileError: one line naming the file and the key that is wrong, missing or
            contradicts another.
    """
    path = Path(path)
    data = dict(data) if data is not None else _parse(path, text)
    where = f"{path}"
    unknown = [k for k in data if k not in _KEYS]
    if unknown:
        raise TaskFileError(f"{where}: unknown key {unknown[0]!r}; the keys are {list(_KEYS)}.")
    name = _text(data, "name", where, required=True)
    if not _NAME.fullmatch(name):
        raise TaskFileError(
            f"{where}: name {name!r}: start with a letter or digit; then letters, digits, _.()-."
        )
    type_ = _text(data, "type", where, required=True)
    if type_ not in KINDS or not KINDS[type_].file_columns:
        usable = [k for k, v in KINDS.items() if v.file_columns]
        raise TaskFileError(f"{where}: type {type_!r}; use one of {usable}.")
    facts = kind(type_)
    splits = _splits(data, where)
    train = _train_split(data, facts.needs_train, splits, where)
    columns = _columns(data, facts.file_columns, where)
    hub, revision, source, fmt = _source(data, path, where)
    corpus = facts.file_layout == "corpus"
    if not corpus and fmt == "beir":
        raise TaskFileError(f"{where}: source.format beir is retrieval's layout, not {type_}'s.")
    if corpus and fmt in ("csv", "jsonl", "parquet"):
        raise TaskFileError(
            f"{where}: source: a {type_} task is a corpus, queries and judgements: BEIR's "
            "corpus.jsonl, queries.jsonl and qrels/<split>.tsv (format beir), or the Hub "
            "layout (format hub), not one file of rows."
        )
    default = facts.paper_metric or facts.mteb_metric or sorted(facts.main_scores)[0]
    main = _text(data, "main_score", where) or default
    if main not in facts.main_scores:
        raise TaskFileError(
            f"{where}: main_score {main!r} is not a {type_} score; use one of "
            f"{sorted(facts.main_scores)}."
        )
    return TaskFile(
        path=path,
        name=name,
        type=type_,
        splits=splits,
        main_score=main,
        format=fmt,
        description=_text(data, "description", where),
        license=_license(data, where),
        protocol=_protocol(data, where),
        train_split=train,
        columns=MappingProxyType(columns),
        prompts=MappingProxyType(_prompts(data, where, corpus)),
        source=source,
        written=(data.get("source") or {}).get("path"),
        hub=hub,
        revision=revision,
        fingerprint=(
            (fingerprint or fingerprint_files(source, read_files(source, fmt, splits, train)))
            if source is not None
            else None
        ),
    )


def _text(data: Mapping[str, Any], key: str, where: str, *, required: bool = False) -> str:
    value = data.get(key)
    if value is None:
        if required:
            raise TaskFileError(f"{where}: {key} is missing.")
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise TaskFileError(f"{where}: {key} must be text, got {type(value).__name__}.")
    return value.strip()


def _license(data: Mapping[str, Any], where: str) -> str:
    """A licence id as the Hub's card header takes it (``mit``, ``cc-by-sa-4.0``): one word,
    so it can neither end the card's YAML header nor add a key to it."""
    value = _text(data, "license", where)
    # and read back as the very text by a YAML reader (not null, true, 1.0 or 0x1F)
    if value and (not _LICENSE.fullmatch(value) or not reads_back_as(value)):
        raise TaskFileError(
            f"{where}: license {value!r} is not a licence id; use one such as mit, "
            "apache-2.0, cc-by-4.0 or other."
        )
    return value


def _protocol(data: Mapping[str, Any], where: str) -> str:
    protocol = _text(data, "protocol", where) or "paper"
    if protocol not in PROTOCOLS:
        raise TaskFileError(
            f"{where}: protocol {protocol!r}; use paper (the published ChemTEB results' "
            "scoring, the default) or mteb2 (MTEB 2.26's)."
        )
    return protocol


def _splits(data: Mapping[str, Any], where: str) -> tuple[str, ...]:
    raw = data.get("splits", ["test"])
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        raise TaskFileError(f"{where}: splits must be a list of split names, e.g. [test].")
    for split in raw:
        if not isinstance(split, str) or not _SPLIT.fullmatch(split):
            raise TaskFileError(f"{where}: splits: {split!r} is not a split name.")
    if len(set(raw)) != len(raw):
        raise TaskFileError(f"{where}: splits: {raw} names a split twice.")
    return tuple(raw)


def _train_split(
    data: Mapping[str, Any], needs_train: bool, splits: tuple[str, ...], where: str
) -> str | None:
    given = _text(data, "train_split", where)
    if not needs_train:
        if given:
            raise TaskFileError(f"{where}: train_split: this type trains nothing; remove it.")
        return None
    train = given or "train"
    if not _SPLIT.fullmatch(train):
        raise TaskFileError(f"{where}: train_split: {train!r} is not a split name.")
    if train in splits:
        raise TaskFileError(
            f"{where}: train_split {train!r} is also among splits {list(splits)}: a probe "
            "scored on its own training data would be meaningless."
        )
    return train


def _columns(data: Mapping[str, Any], canonical: tuple[str, ...], where: str) -> dict[str, str]:
    raw = data.get("columns") or {}
    if not isinstance(raw, dict):
        raise TaskFileError(f"{where}: columns must map {list(canonical)} to your columns.")
    out: dict[str, str] = {}
    for key, value in raw.items():
        if key not in canonical:
            raise TaskFileError(f"{where}: columns: {key!r} is not one of {list(canonical)}.")
        if not isinstance(value, str) or not value.strip():
            raise TaskFileError(f"{where}: columns: {key} must name a column, got {value!r}.")
        out[key] = value.strip()
    if len(set(out.values())) != len(out):
        raise TaskFileError(f"{where}: columns: one column is mapped twice ({out}).")
    return out


def _prompts(data: Mapping[str, Any], where: str, sides: bool) -> dict[str, str]:
    """The prompts by side; only a type whose texts have sides (retrieval's queries and
    documents) takes any: on another they would change the digest and embed nothing."""
    raw = data.get("prompts") or {}
    if not isinstance(raw, dict):
        raise TaskFileError(f"{where}: prompts must map {list(_SIDES)} to text.")
    if raw and not sides:
        raise TaskFileError(
            f"{where}: prompts: a {data.get('type')} task embeds its texts without a side, so "
            "the model's own prompt for the type applies; prompts are for Retrieval's query "
            "and document sides. Remove them."
        )
    for key, value in raw.items():
        if key not in _SIDES:
            raise TaskFileError(f"{where}: prompts: {key!r} is not one of {list(_SIDES)}.")
        if not isinstance(value, str):
            raise TaskFileError(f"{where}: prompts: {key} must be text.")
    return dict(raw)


def _source(
    data: Mapping[str, Any], path: Path, where: str
) -> tuple[str | None, str | None, Path | None, str]:
    raw = data.get("source")
    if not isinstance(raw, dict):
        raise TaskFileError(f"{where}: source is missing: give source.path or source.hub.")
    unknown = [k for k in raw if k not in _SOURCE_KEYS]
    if unknown:
        raise TaskFileError(f"{where}: source: unknown key {unknown[0]!r}; use {_SOURCE_KEYS}.")
    fmt = raw.get("format")
    if fmt is not None and fmt not in FORMATS:
        raise TaskFileError(f"{where}: source.format {fmt!r}; use one of {list(FORMATS)}.")
    if ("path" in raw) == ("hub" in raw):
        raise TaskFileError(f"{where}: source: give either path (your files) or hub, not both.")
    if "hub" in raw:
        hub, revision = raw.get("hub"), raw.get("revision")
        if not isinstance(hub, str) or not _HUB_ID.fullmatch(hub):
            raise TaskFileError(f"{where}: source.hub {hub!r} is not a dataset id (org/name).")
        if not isinstance(revision, str) or not _COMMIT.fullmatch(revision):
            raise TaskFileError(
                f"{where}: source.revision: a Hub source needs its 40-hex commit (the dataset "
                "page's history shows it; publish-dataset prints it), so the task stays pinned."
            )
        if fmt not in (None, "hub"):
            raise TaskFileError(f"{where}: source.format {fmt!r}: a Hub source is in Hub layout.")
        return hub, revision, None, "hub"
    if "revision" in raw:
        raise TaskFileError(f"{where}: source.revision pins a Hub source; local files have none.")
    local = raw.get("path")
    if not isinstance(local, str) or not local.strip():
        raise TaskFileError(f"{where}: source.path must name a folder or a file.")
    source = (path.parent / local).resolve()
    if not source.exists():
        raise TaskFileError(f"{where}: source.path {local!r}: {source} does not exist.")
    if not source.is_file() and not source.is_dir():  # a FIFO would hang, a device never end
        raise TaskFileError(f"{where}: source.path {local!r}: not a regular file or a folder.")
    return None, None, source, fmt or _infer_format(source, where)


def _infer_format(source: Path, where: str) -> str:
    if source.is_file():
        fmt = _ROW_SUFFIXES.get(source.suffix.lower())
        if fmt is None:
            raise TaskFileError(
                f"{where}: source.path {source.name}: not a .csv, .jsonl or .parquet file; "
                "set source.format."
            )
        return fmt
    if (source / "corpus.jsonl").is_file():
        return "beir"
    if (source / "README.md").is_file() and any(source.rglob("*.parquet")):
        return "hub"
    found = {
        _ROW_SUFFIXES[p.suffix.lower()]
        for p in source.iterdir()
        if p.suffix.lower() in _ROW_SUFFIXES
    }
    if len(found) == 1:
        return found.pop()
    raise TaskFileError(
        f"{where}: source.path {source}: cannot tell its format (found "
        f"{sorted(found) or 'no .csv, .jsonl or .parquet files'}); set source.format."
    )
