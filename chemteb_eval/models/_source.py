"""Where a local model loads from — a folder or a Hub id — checked before the seconds of
importing torch: a folder that is not there is said as such, and a Hub model that is neither in
the local cache nor downloadable (``HF_HUB_OFFLINE``, or the Hub cannot be reached) fails at
once, in one line, instead of after a minute of retried requests.

Shared by the sentence-transformers, transformers and model2vec backends (ONNX is
sentence-transformers').
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from chemteb_eval.errors import ChemtebError, HubUnavailableError

from .spec import _HUB_ID

__all__ = [
    "HubAccess",
    "hub_access",
    "load_error",
    "local_folder",
    "looks_like_path",
    "network_errors",
]

# A model repo in the cache has one of these at its root (transformers and model2vec:
# config.json; sentence-transformers: modules.json, and config.json for a transformer module).
_MARKERS = ("modules.json", "config.json", "config_sentence_transformers.json")
# org/name, or a bare name (the Hub's older canonical models: bert-base-uncased)
_REPO_ID = re.compile(r"[\w.-]+(/[\w.-]+)?")


def looks_like_path(name: str) -> bool:
    """Whether ``name`` is written as a path rather than a Hub id: ``./x``, ``../x``, ``/x``,
    ``~/x``, ``.``/``..``, an absolute path, or separators that no ``org/name`` id has
    (``models/bert/v2``, ``models\\bert``)."""
    if name in (".", "..") or name.startswith(("./", "../", "/", "~")) or Path(name).is_absolute():
        return True
    separators = {"/", os.sep, os.altsep or "/"}
    return any(s in name for s in separators) and not _HUB_ID.fullmatch(name)


def local_folder(name: str) -> Path | None:
    """The folder ``name`` names (``~`` expanded), ``None`` for a Hub id.

    Raises:
        ValueError: ``name`` is written as a path and is no folder (absent, or a file).
    """
    path = Path(name).expanduser()
    if path.is_dir():
        return path.resolve()
    if not looks_like_path(name):
        return None
    if path.exists():
        raise ValueError(
            f"model: {name} is a file, not a model folder; pass the folder that holds the model's "
            "files (config.json, modules.json), or a Hub id (org/name)."
        )
    raise ValueError(
        f"model: the folder {name} does not exist ({path.absolute()}); pass an existing model "
        "folder, or a Hub id (org/name)."
    )


def _cached(repo_id: str, revision: str | None, cache_dirs: Sequence[str]) -> bool:
    from huggingface_hub import try_to_load_from_cache

    for cache_dir in (None, *cache_dirs):
        for marker in _MARKERS:
            found = try_to_load_from_cache(repo_id, marker, cache_dir=cache_dir, revision=revision)
            if isinstance(found, str):
                return True
    return False


class HubAccess:
    """How to load a model ``hub_access`` checked: the block to load it in, and whether to pass
    the library ``local_files_only=True``.

    Attributes:
        local_only: load from the local cache alone (``HF_HUB_OFFLINE`` is set or the Hub cannot
            be reached); the block then keeps huggingface_hub offline, so nothing is retried.
    """

    def __init__(self, local_only: bool) -> None:
        self.local_only = local_only
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> HubAccess:
        if self.local_only:
            from chemteb_eval._env import hub_offline_mode

            self._stack.enter_context(hub_offline_mode())
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()


def hub_access(
    source: str, *, revision: str | None = None, cache_dirs: Sequence[str] = ()
) -> HubAccess:
    """Check, before anything heavy is imported, that ``source`` can be loaded without waiting
    on the network; the answer says how to load it.

    A folder: nothing to check. A Hub id in the local Hugging Face cache: loads as it is, and
    from the cache alone (``local_only``: no request, nothing retried) when ``HF_HUB_OFFLINE``
    is set or the Hub cannot be reached. A Hub id not in the cache: loads from the Hub when
    that answers; with ``HF_HUB_OFFLINE`` set, or the Hub unreachable (one quick probe of
    ``HF_ENDPOINT``), it fails here.

    Args:
        source: a folder or a Hub id (what ``resolve`` returns).
        revision: the revision to load (default ``main``).
        cache_dirs: cache folders besides the Hub's (``SENTENCE_TRANSFORMERS_HOME``).

    Raises:
        ValueError: ``source`` is not a valid Hub id.
        HubUnavailableError: the model is not cached and cannot be downloaded now.
    """
    if Path(source).is_dir():
        return HubAccess(local_only=False)
    from huggingface_hub import constants

    from chemteb_eval._env import hub_offline_flag, hub_reachable

    problem = None if _REPO_ID.fullmatch(source) else "a Hub id is org/name"
    if problem is None:
        try:
            cached = _cached(source, revision, cache_dirs)
        except ValueError as exc:  # huggingface_hub's stricter rules (length, "--", "..")
            problem = str(exc).strip().splitlines()[0] if str(exc).strip() else "invalid"
    if problem is not None:
        raise ValueError(f"model: {source!r} is neither a folder here nor a Hub id ({problem}).")
    flag = hub_offline_flag()
    if flag is None and hub_reachable():
        return HubAccess(local_only=False)
    if cached:
        return HubAccess(local_only=True)
    at = f" at revision {revision}" if revision else ""
    where = f"the local Hugging Face cache ({constants.HF_HUB_CACHE})"
    if flag is not None:
        raise HubUnavailableError(
            f"model {source}{at} is not in {where} and {flag} is set, so it is not downloaded: "
            f"unset {flag} to download it, or pass a local folder (-m ./my-model)."
        )
    raise HubUnavailableError(
        f"model {source}{at} is not in {where} and the Hugging Face Hub ({constants.ENDPOINT}) "
        f"cannot be reached: pass a local folder (-m ./my-model), or download it where the Hub "
        f"answers (hf download {source}) and copy that cache here (or set HF_HUB_CACHE to it)."
    )


def network_errors() -> tuple[type[BaseException], ...]:
    """The exceptions a Hub download fails with when the connection breaks: ``OSError`` (what
    requests and transformers raise) and the transport errors of the HTTP clients in use."""
    found: list[type[BaseException]] = [OSError]
    for module in ("httpx", "httpx2"):
        error = getattr(sys.modules.get(module), "TransportError", None)
        if isinstance(error, type) and issubclass(error, BaseException):
            found.append(error)
    return tuple(found)


def load_error(name: str, exc: BaseException) -> ChemtebError:
    """One line for a model that failed to load (not found, not a model folder, the Hub gone):
    the first line of what the library said, and what to do."""
    text = str(exc).strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    if not isinstance(exc, OSError):  # a transport error: the Hub stopped answering
        return ChemtebError(
            f"model {name}: the Hugging Face Hub stopped answering while it loaded "
            f"({type(exc).__name__}: {first}); retry, or pass a local folder."
        )
    return ChemtebError(
        f"model {name}: could not be loaded ({first}). Check the name, or pass a local folder."
    )
