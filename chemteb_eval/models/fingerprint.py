"""What identifies a model's weights when no revision is pinned: the key of its cached
embeddings (``engine.cache``) and of its ONNX export (``models.onnx``)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from chemteb_eval.errors import ChemtebError

__all__ = ["model_fingerprint"]

# Files up to this size are hashed whole (SHA-256 reads ~1 GB/s: all-MiniLM-L6-v2's 90 MB in
# 0.1 s); larger ones by size, modification time and three 1 MiB samples, so a 14 GB model
# costs milliseconds, and a re-saved one (new mtime) is still told apart.
_HASH_WHOLE = 256 * 2**20
_SAMPLE = 2**20


def _file_digest(path: Path, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        if size <= _HASH_WHOLE:
            for block in iter(lambda: handle.read(2**20), b""):
                digest.update(block)
        else:
            digest.update(f"{size}:{mtime_ns}".encode())
            for offset in (0, size // 2, size - _SAMPLE):
                handle.seek(offset)
                digest.update(handle.read(_SAMPLE))
    return digest.hexdigest()


def _local_fingerprint(root: Path) -> str:
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    digest = hashlib.sha256()
    for path in files:
        rel = path.name if path == root else path.relative_to(root).as_posix()
        if rel.startswith((".git/", ".cache/")):
            continue
        info = path.stat()
        digest.update(f"{rel}\x00{_file_digest(path, info.st_size, info.st_mtime_ns)}\n".encode())
    return digest.hexdigest()


def model_fingerprint(source: str) -> str | None:
    """What identifies the weights behind ``source`` when no revision is pinned.

    A local file or folder: a hash of its files (names and contents). A Hub id: the commit of
    ``main`` in the local Hub cache (what was loaded). ``None`` when neither is known (an API).
    """
    path = Path(source)
    if path.exists():
        try:
            return "files:" + _local_fingerprint(path)
        except OSError as exc:
            raise ChemtebError(
                f"model {source}: cannot read its files to key the embedding cache "
                f"({exc.strerror or exc}); fix the permissions or run with --no-cache."
            ) from None
    if source.count("/") == 1:
        try:
            from huggingface_hub import try_to_load_from_cache

            found = try_to_load_from_cache(source, "config.json")
        except Exception:  # not a valid repo id, or no cache: nothing is known
            return None
        if isinstance(found, str):
            return "commit:" + Path(found).parent.name  # .../snapshots/<commit>/config.json
    return None
