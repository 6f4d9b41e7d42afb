"""Caches of the layouts before block files, read once to be converted (``cache.py``): an SQLite
index ``<model>-<digest>.sqlite`` with vectors as rows of table ``emb`` (costs in ``cost``), and
from issue 39 blocks of rows in array files ``<model>-<digest>.<dim>d.f32``."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from chemteb_eval._files import open_regular

# The tables such a cache may hold and their columns: a file with another layout (another
# tool's SQLite file, a hand-edited cache) is refused, not a traceback at first use.
_LAYOUT = {
    "emb": ("key", "dim", "vec"),
    "meta": ("k", "v"),
    "cost": ("key", "seconds"),
    "blocks": ("id", "dim", "start", "count", "replace", "digests", "seconds", "keys"),
}


Group = tuple[list[str], NDArray[np.float32], NDArray[np.float64]]
Row = tuple[bytes | None, int | None, float]  # a vector's bytes, its width, its cost


def _open(path: Path) -> sqlite3.Connection:
    """The old index opened read-only, its layout checked (ValueError: not such a cache)."""
    for mode in ("mode=ro", "immutable=1"):  # immutable: a folder that cannot hold -shm
        db = None
        try:
            if not path.is_file():  # immutable=1 would create it, empty
                raise ValueError(f"{path.name} is gone")
            db = sqlite3.connect(f"{path.resolve().as_uri()}?{mode}", uri=True)
            kinds = db.execute("SELECT type, name FROM sqlite_master WHERE type != 'table'")
            extra = [k for k in kinds.fetchall() if k[0] != "index"]
            if extra:  # a trigger or view could rewrite what a row says
                raise ValueError(f"it holds a {extra[0][0]} ({extra[0][1]}), which no cache has")
            for table, want in _LAYOUT.items():
                got = tuple(r[1] for r in db.execute(f"PRAGMA table_info({table})"))
                if got and got != want:
                    raise ValueError(f"its table {table} has columns {list(got)}, not {list(want)}")
            return db
        except (sqlite3.Error, ValueError) as exc:
            if db is not None:
                db.close()
            if isinstance(exc, ValueError) or mode == "immutable=1":
                raise ValueError(str(exc)) from None
    raise AssertionError("unreachable")


def _blocks(db: sqlite3.Connection, path: Path, found: dict[str, Row]) -> None:
    """Issue 39's blocks, in order, into ``found`` (a replacing block wins)."""
    for dim, start, count, replace, digests, seconds, odd in db.execute(
        "SELECT dim, start, count, replace, digests, seconds, keys FROM blocks ORDER BY id"
    ):
        numbers = (dim, start, count)
        if {type(x) for x in numbers} != {int} or not isinstance(digests, bytes):
            continue
        if len(digests) != 32 * count or not 0 < dim <= 1 << 16 or start < 0:
            continue
        try:
            with open_regular(path.with_suffix(f".{dim}d.f32")) as file:
                if file.read(20) != b"chemteb-vectors1" + dim.to_bytes(4, "little"):
                    continue
                file.seek(64 + 4 * dim * start)  # after the file's 64-byte header
                data = file.read(4 * dim * count)
        except OSError:
            continue
        try:  # the keys its digests do not spell (none of the engine's)
            named: Any = json.loads(odd) if isinstance(odd, str) else {}
        except (ValueError, RecursionError):
            named = {}
        ok = isinstance(seconds, bytes) and len(seconds) == 8 * count
        costs = np.frombuffer(seconds, "<f8") if ok else np.full(count, np.nan)
        for i in range(count):
            key = named.get(str(i)) if isinstance(named, dict) else None
            key = key if isinstance(key, str) else digests[32 * i : 32 * i + 32].hex()
            if replace or key not in found:
                found[key] = (data[4 * dim * i : 4 * dim * (i + 1)], dim, float(costs[i]))


def read_legacy(path: Path) -> list[Group]:
    """Every vector the old cache at ``path`` holds (a key written twice: the winner, as it
    read), grouped by width. A damaged row becomes zeros: stored, so the engine finds it, reads
    it as damaged and encodes it again, as it did."""
    db = _open(path)
    found: dict[str, Row] = {}
    try:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not tables & {"emb", "blocks"}:  # another tool's file, or an empty one: kept
            raise ValueError("it holds no table of a cache (emb or blocks)")
        if "blocks" in tables:
            _blocks(db, path, found)
        costs = dict(db.execute("SELECT key, seconds FROM cost")) if "cost" in tables else {}
        for key, dim, vec in db.execute("SELECT key, dim, vec FROM emb") if "emb" in tables else ():
            cost = costs.get(key)
            width = dim if type(dim) is int and 0 < dim <= 1 << 16 else None
            blob = vec if isinstance(vec, bytes) else None
            found.setdefault(str(key), (blob, width, cost if isinstance(cost, float) else np.nan))
    except sqlite3.DatabaseError as exc:
        raise ValueError(str(exc)) from None
    finally:
        db.close()
    widths = [w for _, w, _ in found.values() if w]
    common = max(set(widths), key=widths.count) if widths else 0
    groups: dict[int, tuple[list[str], list[NDArray[np.float32]], list[float]]] = {}
    for key, (blob, width, cost) in found.items():
        sound = blob is not None and width is not None and len(blob) == 4 * width
        dim = width if sound and width else common
        if dim:
            row = np.frombuffer(blob, np.float32) if sound and blob else np.zeros(dim, np.float32)
            for into, value in zip(
                groups.setdefault(dim, ([], [], [])), (key, row, cost), strict=True
            ):
                into.append(value)  # type: ignore[attr-defined]
    return [(k, np.stack(r), np.array(s, "<f8")) for k, r, s in groups.values()]
