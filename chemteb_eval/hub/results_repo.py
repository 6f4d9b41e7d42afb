"""Result folders kept in a Hub dataset repo, read at a pinned revision."""

from __future__ import annotations

from pathlib import Path

from chemteb_eval.errors import ChemtebError
from chemteb_eval.results.runs import RUNS_FILE
from chemteb_eval.results.schema import ITEMS_SUFFIX
from chemteb_eval.tasks.recorded import TASK_FILE_SUFFIX

from ._repo import check_repo_id

__all__ = ["RESULT_PATTERNS", "download_results"]

# Every kind of file a results folder holds (issue 46: with *.json and *.csv alone, the recorded
# task declarations, the evidence and the run records stayed behind, and the Custom board vanished)
RESULT_PATTERNS = ["*.json", "*.csv", f"*{TASK_FILE_SUFFIX}", f"*{ITEMS_SUFFIX}", f"*{RUNS_FILE}"]


def download_results(
    repo_id: str, *, revision: str | None = None, cache_dir: str | Path | None = None
) -> Path:
    """Download a results dataset repo (``<model>/<revision>/<Task>.json`` inside) and return
    its local folder.

    What a results folder holds is fetched, and nothing else: JSON and CSV files (result files,
    ``model_meta.json``, a model table), the task declarations recorded beside results (the
    Custom board is built from them), the per-item evidence (rank intervals) and the run
    records (times, hardware).

    Args:
        repo_id: the dataset repo, ``org/name``.
        revision: a commit to pin (recommended: the Space then shows the same numbers until it
            is moved on deliberately); ``None`` reads ``main``.
        cache_dir: where huggingface_hub keeps its cache; its default when ``None``.

    Returns:
        The snapshot folder.

    Raises:
        ValueError: for a malformed repo id.
        ChemtebError: when the Hub cannot be reached and nothing is cached.
    """
    check_repo_id(repo_id)
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    try:
        folder = snapshot_download(
            repo_id,
            repo_type="dataset",
            revision=revision,
            allow_patterns=RESULT_PATTERNS,
            cache_dir=str(cache_dir) if cache_dir is not None else None,
        )
    except LocalEntryNotFoundError as exc:
        raise ChemtebError(
            f"results repo {repo_id}@{revision or 'main'}: the Hub is unreachable and no copy is "
            "cached. Check the network (or HF_ENDPOINT), or pass local folders with --results."
        ) from exc
    except HfHubHTTPError as exc:
        raise ChemtebError(
            f"results repo {repo_id}@{revision or 'main'}: {exc}. Check the repo id, the "
            "revision and your token (HF_TOKEN) for a private repo."
        ) from exc
    return Path(folder)
