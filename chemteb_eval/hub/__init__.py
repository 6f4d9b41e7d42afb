"""The Hub side: reading and publishing result repos (``huggingface_hub`` only)."""

from .results_repo import download_results

__all__ = ["download_results"]
