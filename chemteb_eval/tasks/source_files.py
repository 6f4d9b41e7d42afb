"""The files of a task file's local source: which of them a run reads (``read_files``), their
fingerprint (``fingerprint_files``), and the copy a run reads them from (``snapshot``)."""

from __future__ import annotations

import functools
import hashlib
import os
from contextlib import ExitStack
from pathlib import Path, PurePosixPath
from typing import Any

from .declaration import TaskFileError, front_matter
from .records import LOCAL_REVISION_PREFIX

__all__ = ["ROW_SUFFIXES", "fingerprint_files", "read_files", "snapshot"]

# A file of rows by its suffix: the formats one file per split holds.
ROW_SUFFIXES = {".csv": "csv", ".jsonl": "jsonl", ".parquet": "parquet"}


def read_files(source: Path, fmt: str, splits: tuple[str, ...], train: str | None) -> list[Path]:
    """The files a run reads from ``source`` (those that exist): the split files of rows, BEIR's
    three, or a Hub-layout folder's card and every file its ``configs`` name (``datasets``
    reads those, CSV and JSON as well as Parquet) — so results or notes kept in the same folder
    never change the data's fingerprint, and no file the loader reads is left out of it.

    Raises:
        TaskFileError: a file that resolves outside ``source`` (a link out of it, a card's
            pattern with ``..``, an absolute path or a URL): nothing outside is ever read.
    """
    if source.is_file():
        return [source]
    wanted = [*splits, *([train] if train else [])]
    if fmt == "beir":
        names = ["corpus.jsonl", "queries.jsonl", *(f"qrels/{s}.tsv" for s in wanted)]
        found = [source / n for n in names]
    elif fmt == "hub":
        found = [source / "README.md", *_card_files(source)]
    else:
        found = [source / f"{s}{_SUFFIXES[fmt]}" for s in wanted]
    files = list(dict.fromkeys(p for p in found if p.is_file()))
    inside = source.resolve()
    for file in files:
        if not file.resolve().is_relative_to(inside):
            raise TaskFileError(
                f"source.path: {file} leads outside {source} (to {file.resolve()}); a task "
                "reads only the files inside its source folder: copy the file in."
            )
    return files


# The suffixes ``datasets`` reads as data when a card names no files (its folder inference).
_DATA_SUFFIXES = (".parquet", ".arrow", ".csv", ".tsv", ".json", ".jsonl", ".txt")


def _card_files(source: Path) -> list[Path]:
    """The files a Hub-layout folder's card (``README.md``) points ``datasets`` to: every
    ``configs[].data_files`` pattern, matched inside the folder; a card with no ``configs``,
    every data file in the folder (what ``datasets`` then infers from)."""
    card = source / "README.md"
    configs = _card_configs(card) if card.is_file() else None
    if configs is None:
        return sorted(
            p
            for p in source.rglob("*")
            if p.suffix.lower() in _DATA_SUFFIXES
            and p.is_file()
            and not any(part.startswith(".") for part in p.relative_to(source).parts)
        )
    found: list[Path] = []
    for pattern in _patterns(configs, card):
        posix = PurePosixPath(pattern)
        if posix.is_absolute() or ".." in posix.parts or "://" in pattern or ":" in posix.parts[0]:
            raise TaskFileError(
                f"{card}: data_files {pattern!r} points outside the folder; a task reads only "
                "the files inside its source folder: name them relative to it."
            )
        found += sorted(p for p in source.glob(pattern) if p.is_file())
    return found


def _card_configs(card: Path) -> list[Any] | None:
    """The card's ``configs`` list (its YAML front matter), or ``None`` when it has none."""
    try:
        text = card.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskFileError(f"{card}: cannot be read ({exc}).") from None
    if not text.startswith("---"):
        return None
    front = text[3:].split("\n---", 1)[0]
    try:
        meta = front_matter(front)
    except Exception as exc:  # yaml.YAMLError: the card is the user's
        raise TaskFileError(f"{card}: its YAML header is not valid ({exc}).") from None
    configs = meta.get("configs") if isinstance(meta, dict) else None
    return configs if isinstance(configs, list) else None


def _patterns(configs: list[Any], card: Path) -> list[str]:
    """Every ``data_files`` pattern of the card's configs (a string, a list of strings, or
    ``{split, path}`` entries whose path is a string or a list)."""
    out: list[str] = []
    for config in configs:
        files = config.get("data_files") if isinstance(config, dict) else None
        entries = files if isinstance(files, list) else [files] if files is not None else []
        for entry in entries:
            paths = entry.get("path") if isinstance(entry, dict) else entry
            for one in paths if isinstance(paths, list) else [paths]:
                if not isinstance(one, str) or not one.strip():
                    raise TaskFileError(f"{card}: a data_files entry is {one!r}, not a path.")
                out.append(one)
    return out


_SUFFIXES = {fmt: suffix for suffix, fmt in ROW_SUFFIXES.items()}


def fingerprint_files(source: Path, files: list[Path] | None = None) -> str:
    """``sha256:`` + 16 hex digits over the relative names and bytes of ``files`` (default
    every file under ``source``, or the file itself), in sorted order: the same files give the
    same value on any machine, and any changed byte another."""
    if files is None:
        files = [source] if source.is_file() else [p for p in source.rglob("*") if p.is_file()]
    return _digest(source, files, None)


def snapshot(source: Path, files: list[Path], dest: Path) -> tuple[Path, str]:
    """Copy ``files`` of ``source`` into the folder ``dest``, hashing the very bytes copied:
    the data is then read from the copy, so what is scored is exactly what the fingerprint
    (``fingerprint_files``'s value for the same bytes) names, whatever happens to ``source``
    meanwhile (a file edited while the model loads). Copies get a fixed modification time, so
    ``datasets`` keys its cache by content, not by the copy's moment.

    Returns:
        (the copy of ``source`` — a file or ``dest`` itself, the fingerprint).
    """
    fingerprint = _digest(source, files, dest)
    return (dest / source.name if source.is_file() else dest), fingerprint


def _digest(source: Path, files: list[Path], dest: Path | None) -> str:
    digest = hashlib.sha256()
    for file in sorted(files):
        name = file.name if source.is_file() else file.relative_to(source).as_posix()
        digest.update(name.encode("utf-8") + b"\0")
        target = dest / name if dest is not None else None
        try:
            with ExitStack() as stack:
                handle = stack.enter_context(file.open("rb"))
                out = None
                if target is not None:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    out = stack.enter_context(target.open("wb"))
                for block in iter(functools.partial(handle.read, 1 << 20), b""):
                    digest.update(block)
                    if out is not None:
                        out.write(block)
            if target is not None:
                os.utime(target, (_FIXED_MTIME, _FIXED_MTIME))
        except OSError as exc:
            raise TaskFileError(f"source.path: {file} cannot be read ({exc.strerror}).") from None
        digest.update(b"\0")
    return LOCAL_REVISION_PREFIX + digest.hexdigest()[:16]


_FIXED_MTIME = 1_000_000_000  # 2001-09-09: a copy's time says nothing about its content
