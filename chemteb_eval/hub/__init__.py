"""The Hub side: results repos, metric Spaces and datasets, model cards, Jobs.

Only ``huggingface_hub`` (and ``chemteb_eval.results``/``tasks``) are used here; every Hub call
goes through ``hub_errors`` so that users get one message with a next step.
"""

from .jobs import JobPlan, job_plan, submit
from .model_card import card_with_results, eval_result_files, eval_results, push_results
from .publish import publish_dataset_folder, publish_metrics, publish_pipchem
from .results_repo import download_results

__all__ = [
    "JobPlan",
    "card_with_results",
    "download_results",
    "eval_result_files",
    "eval_results",
    "job_plan",
    "publish_dataset_folder",
    "publish_metrics",
    "publish_pipchem",
    "push_results",
    "submit",
]
