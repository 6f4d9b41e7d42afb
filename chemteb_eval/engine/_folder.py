"""Small facts of an embedding cache's folder (``cache.py`` keeps the index): a writer's private
part-file names, a file's identity, the identities a folder was moved from (``adopted.json``),
and the older caches of the same model that lie beside it."""

from __future__ import annotations

import json
import os
import secrets
import threading
import warnings
from collections.abc import Callable
from glob import escape as glob_escape
from pathlib import Path

from chemteb_eval._files import open_regular
from chemteb_eval.errors import ChemtebError

from ._blocks import MAX_HEAD, cache_of

# What the one line names at most (a folder of 20,000 siblings made it a megabyte long)
_MOST_LISTED, _MOST_SIZED = 3, 100

__all__ = ["adopted_from", "damaged_cache", "file_stat", "private_names", "say_stale"]


def damaged_cache(path: Path, exc: object) -> ChemtebError:
    """The one error of a cache folder that cannot be read as one, with the ways out."""
    return ChemtebError(
        f"embedding cache {path} is damaged or not a cache ({exc}); delete it (`rm -r '{path}'`) "
        "and rerun, or run with --no-cache, or set CHEMTEB_CACHE to another folder."
    )


def adopted_from(folder: Path) -> list[str]:
    """The identities a cache folder was moved from (``adopted.json``; hostile content: none)."""
    try:
        with open_regular(folder / "adopted.json") as file:
            names = json.loads(file.read(MAX_HEAD))
    except (OSError, ValueError, RecursionError):
        return []
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []


def private_names(folder: Path) -> tuple[Path, Path]:
    """A writer's own ``.part`` file and the ``.new`` name it is created under: private by
    construction, never by the process id alone (two runs that are each pid 1 in their own
    container on one shared volume, two threads of one process, two ranks on two nodes): the
    process id, the thread and 64 random bits, as a suffix the extension is appended to (a
    ``with_suffix`` once replaced the random part, leaving the pid alone to tell writers
    apart)."""
    stem = f"{os.getpid()}.{threading.get_ident()}.{secrets.token_hex(8)}"
    return folder / f"{stem}.part", folder / f"{stem}.new"


def file_stat(path: Path) -> tuple[int, int, int] | None:
    """A file's identity now (None: gone)."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_ino, found.st_size, found.st_mtime_ns


def _size(path: Path) -> int:
    """Bytes a cache's folder or file holds (0 where it cannot be read)."""
    try:
        if path.is_dir():
            return sum(p.stat().st_size for p in path.iterdir() if p.is_file())
        return path.stat().st_size
    except OSError:
        return 0


def stale_beside(
    path: Path, ident: str, before: Path, first: Callable[[Path], Path | None]
) -> list[Path]:
    """The caches of this very model (name, revision, weights, variant: the first four parts of
    the identity ``ident`` of the cache at ``path``) that lie beside it, never to be read by it:
    made under other library versions or another kernel set (the key holds both), or before the
    key held them (``before``: a block folder, or the SQLite layout before blocks, which is not
    converted: its vectors were computed under versions it did not record). ``first``: a
    cache folder's first block file (``cache.py`` names them)."""
    stale = [p for p in (before, before.with_suffix(".sqlite")) if p.exists()]
    ours = json.loads(ident)
    prefix = path.name[: -len(".vectors")].rsplit("-", 1)[0]
    for folder in sorted(path.parent.glob(f"{glob_escape(prefix)}-*.vectors")):
        if folder in (path, before):
            continue
        block = first(folder)
        theirs = cache_of(block) if block is not None else None
        try:
            named = json.loads(theirs) if isinstance(theirs, str) else None
        except (ValueError, RecursionError):
            named = None
        if isinstance(named, list) and named[:4] == ours[:4]:
            stale.append(folder)
    return stale


def say_stale(path: Path, ident: str, before: Path, first: Callable[[Path], Path | None]) -> None:
    """One warning naming the older caches of the model beside ``path`` and how to delete them
    (``stale_beside``); nothing where there are none."""
    stale = stale_beside(path, ident, before, first)
    if stale:
        size = sum(_size(p) for p in stale[:_MOST_SIZED]) / 1e6
        listed = " ".join(f"'{p}'" for p in stale[:_MOST_LISTED])
        more = f" and {len(stale) - _MOST_LISTED} more" if len(stale) > _MOST_LISTED else ""
        warnings.warn(
            f"embedding cache {path}: {len(stale)} other cache(s) of this model beside it "
            f"({size:,.1f} MB) were made under other library versions, another machine's "
            "kernels, or before either was part of the key; this run does not read them. Where "
            f"no environment or machine of yours still uses one, delete it: rm -r {listed}{more}",
            stacklevel=4,
        )
