"""Run an evaluation on Hub-hosted hardware as a Hugging Face Job (huggingface_hub's Jobs API).

The Job installs chemteb-eval, runs ``chemteb run`` and, unless told not to, ``chemteb
push-results`` to the model's card. The token goes in as a secret (never in the command).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from chemteb_eval.models.spec import parse_model_spec
from chemteb_eval.tasks import get_benchmark

from ._errors import endpoint, hub_errors, require_token
from ._repo import check_repo_id

__all__ = ["DEFAULT_IMAGE", "JobPlan", "job_plan", "submit"]

# A plain Python image: `pip install chemteb-eval` brings torch, whose default Linux wheel is
# the CUDA build, so GPU flavors work. --image picks another (e.g. a PyTorch CUDA image).
DEFAULT_IMAGE = "python:3.11"


@dataclass(frozen=True)
class JobPlan:
    """What the Job will run."""

    image: str
    command: list[str]
    flavor: str
    timeout: str
    push_to: str | None


def job_plan(
    model: str,
    benchmark: str,
    flavor: str,
    *,
    push_to: str | None = None,
    push: bool = True,
    image: str = DEFAULT_IMAGE,
    package: str = "chemteb-eval",
    timeout: str = "6h",
    batch_size: int = 64,
) -> JobPlan:
    """The image and command of the Job (validated; nothing is sent).

    Args:
        model: as for ``chemteb run -m``.
        benchmark: a benchmark name.
        flavor: a Jobs hardware flavor (``a10g-small``, ``l4x1``, ...).
        push_to: the model repo to push results to; default the model's Hub id.
        push: push the results at the end.
        image: the Docker image.
        package: the pip requirement that installs chemteb-eval in the Job.
        timeout: the Job's time limit (``30m``, ``6h``, ...).
        batch_size: the encoding batch size.
    """
    from huggingface_hub import JobHardware

    get_benchmark(benchmark)  # an unknown name fails here, with suggestions
    flavors = [f.value for f in JobHardware]
    if flavor not in flavors:
        raise ValueError(f"flavor: {flavor!r} is not a Jobs flavor; use one of {flavors}.")
    target = check_repo_id(push_to, "push_to") if push_to else parse_model_spec(model).hub_id
    if push and target is None:
        raise ValueError(
            f"push_to: {model!r} is not a Hub model id; pass --push-to ORG/NAME or --no-push."
        )
    out = "/tmp/chemteb-results"
    steps = [
        f"pip install {shlex.quote(package)}",
        f"chemteb run -m {shlex.quote(model)} -b {shlex.quote(benchmark)} --output-dir {out} "
        f"--batch-size {int(batch_size)} --quiet",
    ]
    if push and target is not None:
        steps.append(f"chemteb push-results {out} --repo-id {shlex.quote(target)}")
    return JobPlan(
        image=image,
        command=["bash", "-c", " && ".join(steps)],
        flavor=flavor,
        timeout=timeout,
        push_to=target if push else None,
    )


def submit(
    plan: JobPlan, *, namespace: str | None = None, log: Callable[[str], None] = print
) -> Any:
    """Start the Job; return huggingface_hub's ``JobInfo``.

    Raises:
        ChemtebError: no token, no access, or the Hub is unreachable — with what to do.
    """
    from huggingface_hub import HfApi

    token = require_token("submit (the Job needs a token to start and to push results)")
    with hub_errors("submit the Job", namespace):
        job = HfApi().run_job(
            image=plan.image,
            command=plan.command,
            flavor=plan.flavor,
            timeout=plan.timeout,
            secrets={"HF_TOKEN": token},
            namespace=namespace,
            labels={"app": "chemteb-eval"},
        )
    log(f"Job {job.id} started on {plan.flavor}: {job.url}")
    log(f"Follow it: hf jobs logs {job.id}    (status: hf jobs inspect {job.id})")
    if plan.push_to:
        log(f"Results go to {endpoint()}/{plan.push_to} when it finishes.")
    return job
