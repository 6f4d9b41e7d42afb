"""The one check of a Hub repository id, shared by every Hub command."""

from __future__ import annotations

__all__ = ["check_repo_id"]


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
