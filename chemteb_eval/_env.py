"""The environment, in one leaf module: where chemteb keeps its caches, where the shared local
data lives, and whether the Hugging Face Hub can be reached (the offline guard).

It imports no other room of the package, so ``data`` and ``models`` both ask it instead of each
other.
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

__all__ = ["cache_root", "hub_reachable", "offline_unless_reachable", "shared_data_root"]


def cache_root() -> Path:
    """chemteb's cache folder: ``$CHEMTEB_CACHE``, else ``~/.cache/chemteb``."""
    return Path(os.environ.get("CHEMTEB_CACHE") or Path.home() / ".cache" / "chemteb")


def shared_data_root() -> Path:
    """Where the local copies live (``$CHEMTEB_SHARED_DATA`` or ``<checkout>/../shared/data``)."""
    env = os.environ.get("CHEMTEB_SHARED_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "data"


def hub_reachable(timeout: float = 2.0) -> bool:
    """Whether the Hugging Face endpoint answers a TCP connection within ``timeout``."""
    from huggingface_hub import constants

    url = urlparse(constants.ENDPOINT)
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        with socket.create_connection((url.hostname or "", port), timeout=timeout):
            return True
    except OSError:
        return False


@contextlib.contextmanager
def offline_unless_reachable() -> Iterator[None]:
    """Without a network, load from the cache at once instead of retrying HTTP for 20 s."""
    import datasets.config
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE or hub_reachable():
        yield
        return
    saved = constants.HF_HUB_OFFLINE, datasets.config.HF_HUB_OFFLINE
    constants.HF_HUB_OFFLINE = datasets.config.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        constants.HF_HUB_OFFLINE, datasets.config.HF_HUB_OFFLINE = saved
