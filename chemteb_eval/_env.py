"""The environment, in one leaf module: where chemteb keeps its caches, where the shared local
data lives, and whether the Hugging Face Hub can be reached (the offline guard).

It imports no other room of the package, so ``data`` and ``models`` both ask it instead of each
other.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

__all__ = [
    "SCORE_SOFTWARE",
    "cache_root",
    "hub_offline_flag",
    "hub_offline_mode",
    "hub_reachable",
    "installed_versions",
    "offline_unless_reachable",
    "shared_data_root",
]


def cache_root() -> Path:
    """chemteb's cache folder: ``$CHEMTEB_CACHE``, else ``~/.cache/chemteb``."""
    return Path(os.environ.get("CHEMTEB_CACHE") or Path.home() / ".cache" / "chemteb")


def shared_data_root() -> Path:
    """Where the copies of the scientific-text sets live: ``$CHEMTEB_SHARED_DATA``; in a
    developer's checkout the ``shared/data`` beside it; else ``<cache>/data`` (a user's own
    copies: chemteb-eval does not ship these sets)."""
    env = os.environ.get("CHEMTEB_SHARED_DATA")
    if env:
        return Path(env)
    beside = Path(__file__).resolve().parents[2] / "shared" / "data"
    return beside if beside.is_dir() else cache_root() / "data"


# A probe's answer, per endpoint, for this long: one run asks several times (the model, then
# each dataset), and an unreachable Hub should cost its timeout once, not once per question.
_PROBE_TTL = 60.0
_probes: dict[str, tuple[float, bool]] = {}


def hub_offline_flag() -> str | None:
    """The variable that put the Hub in offline mode (``HF_HUB_OFFLINE``, or transformers'
    ``TRANSFORMERS_OFFLINE``), or ``None`` when the Hub may be used."""
    from huggingface_hub import constants

    if not constants.HF_HUB_OFFLINE:
        return None
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        if os.environ.get(name, "").strip().upper() in ("1", "ON", "YES", "TRUE"):
            return name
    return "HF_HUB_OFFLINE"  # set in the process (huggingface_hub.constants)


def hub_reachable(timeout: float = 2.0) -> bool:
    """Whether the Hugging Face endpoint (``HF_ENDPOINT``) answers HTTP within ``timeout``.

    Any HTTP answer counts, an error status or a redirect too; a refused, reset or closed
    connection, a name that does not resolve or silence do not. The proxy variables are
    honoured as huggingface_hub honours them. A TLS failure counts as reachable: something
    answered, and the Hub client, with its own certificates, says what is wrong. The answer is
    kept a minute per endpoint.
    """
    import http.client
    import ssl
    import time
    import urllib.error
    import urllib.request

    from huggingface_hub import constants

    endpoint = constants.ENDPOINT.rstrip("/")
    now = time.monotonic()
    kept = _probes.get(endpoint)
    if kept is not None and now - kept[0] < _PROBE_TTL:
        return kept[1]

    class _NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: object, **kwargs: object) -> None:
            return None  # a redirect is an answer; following it could download a page

    opener = urllib.request.build_opener(_NoRedirect)
    try:
        request = urllib.request.Request(endpoint + "/", method="HEAD")
        with opener.open(request, timeout=timeout):
            reachable = True
    except urllib.error.HTTPError:
        reachable = True  # 3xx, 4xx, 5xx: a server answered
    except urllib.error.URLError as exc:
        reachable = isinstance(exc.reason, ssl.SSLError)
    except ssl.SSLError:
        reachable = True
    except (OSError, ValueError, http.client.HTTPException):
        # refused, reset, closed without an answer, timed out; a malformed HF_ENDPOINT
        reachable = False
    _probes[endpoint] = (time.monotonic(), reachable)
    return reachable


@contextlib.contextmanager
def hub_offline_mode() -> Iterator[None]:
    """huggingface_hub (and transformers, sentence-transformers, datasets when imported) in
    offline mode for the block: files come from the local cache, no request is retried."""
    from huggingface_hub import constants

    config = sys.modules.get("datasets.config")
    saved = constants.HF_HUB_OFFLINE, getattr(config, "HF_HUB_OFFLINE", None)
    constants.HF_HUB_OFFLINE = True
    if config is not None:
        setattr(config, "HF_HUB_OFFLINE", True)  # noqa: B010  (a module found at run time)
    try:
        yield
    finally:
        constants.HF_HUB_OFFLINE = saved[0]
        if config is not None:
            setattr(config, "HF_HUB_OFFLINE", saved[1])  # noqa: B010


@contextlib.contextmanager
def offline_unless_reachable() -> Iterator[None]:
    """Without a network, load from the cache at once instead of retrying HTTP for 20 s."""
    import datasets.config  # noqa: F401  (so hub_offline_mode sets its flag too)
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE or hub_reachable():
        yield
        return
    with hub_offline_mode():
        yield


# What can move a score once the vectors are made: the arithmetic of scoring (numpy, SciPy) and
# the probes and clusterings (scikit-learn's logistic regression, k-means).
SCORE_SOFTWARE = ("numpy", "scipy", "scikit-learn")


def installed_versions(names: Iterable[str]) -> dict[str, str]:
    """The installed version of each distribution in ``names`` (as ``pip`` names it), read from
    its metadata (nothing is imported); one not installed is left out."""
    from importlib import metadata

    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out
