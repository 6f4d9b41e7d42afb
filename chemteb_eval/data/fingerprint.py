"""A content fingerprint of a task's data: the ``dataset_revision`` of a task with no Hub commit.

Tasks built locally (PipChem, SciText, SciEmbed, a user's copy of a restricted set) have no
revision to pin, yet MTEB's result files need a string there, and two results are comparable
only if they scored the same data (MTEB users meet this when a dataset is re-uploaded,
embeddings-benchmark/mteb#5228). So such a file names its data by content: a SHA-256 over
every subset, split and field as the scorer received them, in a canonical encoding — the same
data gives the same string on any machine; one changed text, label or split gives another
(PipChem's small build and its full build differ, as they should).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from typing import Any

from chemteb_eval.tasks.records import LOCAL_REVISION_PREFIX

from .types import TaskData

__all__ = ["data_fingerprint"]

_CHUNK = 4096  # list items encoded per json.dumps: a million-text corpus never becomes one string
_SCALARS = (str, int, float, bool, type(None))


def data_fingerprint(data: TaskData) -> str:
    """``"sha256:<16 hex>"`` for ``{subset: {split: data}}`` (64 bits: a collision between two
    versions of one task's data is not a practical concern)."""
    digest = hashlib.sha256()
    _feed(digest, data)
    return LOCAL_REVISION_PREFIX + digest.hexdigest()[:16]


def _feed(digest: Any, value: Any) -> None:
    value = _plain(value)
    if is_dataclass(value) and not isinstance(value, type):
        digest.update(f"<{type(value).__name__}".encode())
        for f in fields(value):
            digest.update(f"|{f.name}=".encode())
            _feed(digest, getattr(value, f.name))
        digest.update(b">")
    elif isinstance(value, Mapping):
        digest.update(b"{%d" % len(value))
        for key in sorted(value, key=str):
            _feed(digest, str(key))
            _feed(digest, value[key])
        digest.update(b"}")
    elif isinstance(value, (list, tuple)):
        digest.update(b"[%d" % len(value))
        items = [_plain(v) for v in value]
        if all(type(v) in _SCALARS for v in items):
            for start in range(0, len(items), _CHUNK):
                digest.update(_encode(items[start : start + _CHUNK]))
        else:
            for item in items:
                _feed(digest, item)
        digest.update(b"]")
    else:
        digest.update(_encode(value))


def _plain(value: Any) -> Any:
    """numpy scalars and arrays as the Python values they hold, so that labels read as
    ``np.int64`` and as ``int`` give one fingerprint."""
    if type(value).__module__ == "numpy" and hasattr(value, "tolist"):
        return value.tolist()
    return value


def _encode(value: Any) -> bytes:
    # repr-exact floats, text as UTF-8 (a lone surrogate too); any other type by its str
    text = json.dumps(value, ensure_ascii=False, default=str, separators=(",", ":"))
    return text.encode("utf-8", "surrogatepass")
