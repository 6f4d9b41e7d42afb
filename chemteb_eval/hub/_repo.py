"""The one check of a Hub repository id (and of a namespace), shared by every Hub command."""

from __future__ import annotations

__all__ = ["check_namespace", "check_repo_id"]


def check_repo_id(repo_id: str, name: str = "repo_id") -> str:
    """``repo_id`` if it is ``org/name`` (both parts non-empty, the Hub's allowed characters);
    otherwise a ``ValueError`` naming the argument."""
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id  # type: ignore[attr-defined]

    if not isinstance(repo_id, str) or repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise ValueError(f"{name}: {repo_id!r} is not 'org/name'.")
    try:
        validate_repo_id(repo_id)
    except HFValidationError:
        raise ValueError(f"{name}: {repo_id!r} is not 'org/name'.") from None
    return repo_id


def check_namespace(namespace: str, name: str = "namespace") -> str:
    """``namespace`` if it is a user or organisation name the Hub allows (it goes into repo ids
    and into URL paths, so ``..`` or a slash must never get through); else a ``ValueError``."""
    if not isinstance(namespace, str) or not namespace or "/" in namespace:
        raise ValueError(f"{name}: {namespace!r} is not a user or organisation name.")
    try:
        check_repo_id(f"{namespace}/x", name)
    except ValueError:
        raise ValueError(f"{name}: {namespace!r} is not a user or organisation name.") from None
    return namespace
