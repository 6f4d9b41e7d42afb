"""Hub failures users will meet, each turned into one ``ChemtebError`` that says what to do."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from chemteb_eval.errors import ChemtebError, HubUnavailableError

__all__ = ["endpoint", "hub_errors", "require_token"]


def endpoint() -> str:
    """The Hub root this process talks to (``HF_ENDPOINT``, read by huggingface_hub)."""
    from huggingface_hub import constants

    return str(constants.ENDPOINT)


def require_token(action: str) -> str:
    """The token huggingface_hub would send; a clear error when there is none."""
    from huggingface_hub import get_token

    token = get_token()
    if token is None:
        raise ChemtebError(
            f"{action}: no Hugging Face token. Run `hf auth login` or set HF_TOKEN to a token "
            "with write access (https://huggingface.co/settings/tokens)."
        )
    return str(token)


def _transport_errors() -> tuple[type[BaseException], ...]:
    # huggingface_hub 1.x talks through httpx, 2.x through httpx2: catch whichever is there.
    errors: list[type[BaseException]] = []
    for module in ("httpx2", "httpx"):
        try:
            errors.append(__import__(module).TransportError)
        except (ImportError, AttributeError):
            continue
    return tuple(errors)


@contextmanager
def hub_errors(action: str, repo_id: str | None = None) -> Iterator[None]:
    """Translate huggingface_hub's exceptions raised inside the block.

    Args:
        action: what was being done, for the message (``"upload to chemteb/retrieval"``).
        repo_id: the repository concerned, if any.
    """
    from huggingface_hub import constants
    from huggingface_hub.errors import (
        HfHubHTTPError,
        LocalEntryNotFoundError,
        LocalTokenNotFoundError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    where = f" {repo_id}" if repo_id else ""
    try:
        yield
    except LocalTokenNotFoundError as exc:
        raise ChemtebError(
            f"{action}: no Hugging Face token. Run `hf auth login` or set HF_TOKEN to a token "
            "with write access (https://huggingface.co/settings/tokens)."
        ) from exc
    except OfflineModeIsEnabled as exc:
        raise HubUnavailableError(
            f"{action}: HF_HUB_OFFLINE is set, so the Hub cannot be reached. Unset it and retry."
        ) from exc
    except LocalEntryNotFoundError as exc:
        # A download that could not ask the Hub (offline, or the network failed: huggingface_hub
        # then falls back to its cache) and found no cached copy; not an HTTP answer.
        if constants.HF_HUB_OFFLINE:
            raise HubUnavailableError(
                f"{action}: HF_HUB_OFFLINE is set and no copy is cached. Unset it and retry."
            ) from exc
        raise HubUnavailableError(
            f"{action}: cannot reach {endpoint()} and no copy is cached. Check the network, a "
            "proxy, or HF_ENDPOINT; nothing was changed on the Hub."
        ) from exc
    except _transport_errors() as exc:
        raise HubUnavailableError(
            f"{action}: cannot reach {endpoint()} ({type(exc).__name__}). Check the network, a "
            "proxy, or HF_ENDPOINT; nothing was changed on the Hub."
        ) from exc
    except RevisionNotFoundError as exc:
        raise ChemtebError(
            f"{action}: the revision does not exist in{where}. Check the branch or commit."
        ) from exc
    except RepositoryNotFoundError as exc:
        raise ChemtebError(
            f"{action}: repository{where} not found, or private and your token cannot see it. "
            "Check the id (org/name) and log in with an account that can (`hf auth login`)."
        ) from exc
    except HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else None
        if status == 401:
            raise ChemtebError(
                f"{action}: the Hub rejected your token (401). Run `hf auth login` again or set "
                "HF_TOKEN to a valid token."
            ) from exc
        if status == 403:
            raise ChemtebError(
                f"{action}: your token has no write access to{where} (403). Use a token with "
                "write permission, ask the repository's owners for access, or open a pull "
                "request instead (--create-pr)."
            ) from exc
        raise ChemtebError(f"{action}: the Hub answered {status}: {exc}") from exc
