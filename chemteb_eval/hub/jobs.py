"""Run an evaluation on Hub-hosted hardware as a Hugging Face Job (huggingface_hub's Jobs API).

The Job installs chemteb-eval, runs ``chemteb run`` and, unless told not to, ``chemteb
push-results`` to the model's card. The token goes in as a secret (never in the command).

Which chemteb-eval: by default the release this command is (``chemteb-eval==X.Y.Z`` from PyPI),
never "whatever is newest"; with ``--local`` a wheel built from this checkout, uploaded to a
(private) Hub repo of the user's and installed by the Job from the commit that upload made.
Extras: what the model's backend needs (``run`` for local models, ``static`` for word vectors,
none for an API model) plus ``pipchem`` for the offline suite.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chemteb_eval import __version__
from chemteb_eval.errors import ChemtebError
from chemteb_eval.models.base import check_batch_size
from chemteb_eval.models.spec import parse_model_spec
from chemteb_eval.tasks import benchmark_tasks, get_benchmark

from ._errors import endpoint, hub_errors, require_token
from ._repo import check_namespace, check_repo_id

__all__ = [
    "DEFAULT_IMAGE",
    "CheckoutState",
    "JobPlan",
    "LocalWheel",
    "WheelRef",
    "build_local_wheel",
    "checkout_commit",
    "checkout_state",
    "copy_tracked_files",
    "flavor_gpus",
    "job_extras",
    "job_plan",
    "submit",
    "upload_wheel",
]

# A plain Python image: the `run` extra brings torch, whose default Linux wheel is the CUDA
# build, so GPU flavors work. --image picks another (e.g. a PyTorch CUDA image).
DEFAULT_IMAGE = "python:3.11"
# Where --local puts the wheel by default: a private model repo of the token's user.
WHEEL_REPO_NAME = "chemteb-eval-wheels"
_WHEEL_DIR = "/tmp/chemteb-wheel"


@dataclass(frozen=True)
class WheelRef:
    """A wheel on the Hub, pinned to the commit that uploaded it."""

    repo_id: str
    filename: str
    commit: str

    @property
    def url(self) -> str:
        """The file's resolve URL at that commit (what the Job downloads)."""
        return f"{endpoint()}/{self.repo_id}/resolve/{self.commit}/{self.filename}"


@dataclass(frozen=True)
class JobPlan:
    """What the Job will run."""

    image: str
    command: list[str]
    flavor: str
    timeout: str
    push_to: str | None
    package: str = f"chemteb-eval=={__version__}"  # the requirement installed (or the wheel's)
    wheel: WheelRef | None = None
    processes: int = 1  # ``chemteb run`` processes: one per GPU of the flavor


# GPUs per Jobs flavor, for when the Hub's own hardware list (huggingface_hub's
# ``list_jobs_hardware``: GET /api/jobs/hardware, each flavor's ``accelerator.quantity``) is out
# of reach: huggingface_hub 2.5.0's ``JobHardware`` flavors, each with the count its name states
# (``x2``, ``x4``, ``x8``; a GPU flavor without one has a single GPU; ``cpu-*`` none). A flavor
# missing here follows the same rule on its name.
_GPUS: dict[str, int] = {
    **dict.fromkeys(("cpu-basic", "cpu-upgrade", "cpu-performance", "cpu-xl"), 0),
    **dict.fromkeys(("t4-small", "t4-medium", "l4x1", "l40sx1", "a10g-small", "a10g-large"), 1),
    **dict.fromkeys(("a100-large", "h200", "rtx-pro-6000"), 1),
    **dict.fromkeys(("a10g-largex2", "h200x2", "rtx-pro-6000x2"), 2),
    **dict.fromkeys(("l4x4", "l40sx4", "a10g-largex4", "a100x4", "h200x4", "rtx-pro-6000x4"), 4),
    **dict.fromkeys(("l40sx8", "a100x8", "h200x8", "rtx-pro-6000x8"), 8),
}
_TABLE = "from chemteb's flavor table: the Hub's hardware list was out of reach"
_HUB_LIST = "from the Hub's Jobs hardware list"


def flavor_gpus(flavor: str, *, ask_hub: bool = True) -> tuple[int, str]:
    """How many GPUs a Jobs ``flavor`` has, and where that count comes from: the Hub's hardware
    list where it answers (``ask_hub``), else ``_GPUS`` (or the count in the flavor's name)."""
    if ask_hub:
        from chemteb_eval._env import hub_reachable

        if hub_reachable():
            try:
                from huggingface_hub import HfApi

                for hardware in HfApi().list_jobs_hardware():
                    if hardware.name == flavor:
                        accelerator = hardware.accelerator
                        if accelerator is None:
                            return 0, _HUB_LIST
                        count = int(accelerator.quantity)
                        if 0 <= count <= 64:
                            return count, _HUB_LIST
            except Exception:  # an old Hub, a changed answer: the table says it
                pass
    if flavor in _GPUS:
        return _GPUS[flavor], _TABLE
    if flavor.startswith("cpu"):
        return 0, _TABLE
    found = re.search(r"x([1-9][0-9]?)$", flavor)
    return (int(found.group(1)) if found else 1), _TABLE


def run_command(args: str, gpus: int) -> str:
    """``chemteb run ARGS`` as the Job runs it: one process per GPU under torchrun where the
    flavor has several (each encodes its share into the one cache, rank 0 scores and writes;
    docs/running.md), else one process."""
    if gpus <= 1:
        return f"chemteb run {args}"
    return f"torchrun --standalone --nproc_per_node={gpus} -m chemteb_eval run {args}"


def job_extras(model: str, benchmark: str) -> tuple[str, ...]:
    """The extras the Job installs: what ``chemteb run`` would ask for — the model backend's
    (none for an API model) and ``pipchem`` for the suite this project builds."""
    from chemteb_eval.runner.plan import requirements  # the runner imports scikit-learn: ~1 s

    needs = requirements(model, benchmark_tasks(benchmark))
    return tuple(dict.fromkeys(extra for extra, _, _ in needs))


def _install_steps(
    extras: tuple[str, ...], package: str | None, wheel: WheelRef | None
) -> tuple[str, list[str]]:
    suffix = f"[{','.join(extras)}]" if extras else ""
    if wheel is not None:
        # huggingface_hub's `hf download` sends the Job's HF_TOKEN (the wheel repo is private)
        # and fetches exactly the resolve URL at that commit; pip then installs the file.
        local = f"{_WHEEL_DIR}/{wheel.filename}"
        return f"{wheel.url}{suffix}", [
            "pip install --quiet 'huggingface_hub>=1'",
            f"hf download {shlex.quote(wheel.repo_id)} {shlex.quote(wheel.filename)} "
            f"--revision {shlex.quote(wheel.commit)} --local-dir {_WHEEL_DIR}",
            f"pip install {shlex.quote(local + suffix)}",
        ]
    requirement = package or f"chemteb-eval{suffix}=={__version__}"
    return requirement, [f"pip install {shlex.quote(requirement)}"]


# What huggingface_hub's Jobs API reads as a duration: seconds, or a number with s, m, h or d.
_TIMEOUT = re.compile(r"(?:[0-9]+(?:\.[0-9]+)?[smhd]|[0-9]+)")


def _check_timeout(timeout: str) -> None:
    # huggingface_hub turns a malformed one into int()'s message, with no word of which argument.
    if not isinstance(timeout, str) or _TIMEOUT.fullmatch(timeout) is None:
        raise ValueError(f"timeout: {timeout!r} is not a duration; use e.g. 90m, 6h or 3600.")
    if float(timeout.rstrip("smhd")) <= 0:
        raise ValueError(f"timeout: {timeout!r} is no time at all; use e.g. 90m or 6h.")


def job_plan(
    model: str,
    benchmark: str,
    flavor: str,
    *,
    push_to: str | None = None,
    push: bool = True,
    image: str = DEFAULT_IMAGE,
    package: str | None = None,
    wheel: WheelRef | None = None,
    timeout: str = "6h",
    batch_size: int = 64,
    gpus: int | None = None,
) -> JobPlan:
    """The image and command of the Job (validated; nothing is sent).

    Args:
        model: as for ``chemteb run -m``.
        benchmark: a benchmark name.
        flavor: a Jobs hardware flavor (``a10g-small``, ``l4x1``, ...).
        push_to: the model repo to push results to; default the model's Hub id.
        push: push the results at the end.
        image: the Docker image.
        package: the pip requirement that installs chemteb-eval in the Job; default this
            version with the extras the model and benchmark need
            (``chemteb-eval[run]==X.Y.Z``).
        wheel: install this uploaded wheel instead (``--local``; see ``upload_wheel``).
        timeout: the Job's time limit (``30m``, ``6h``, ...).
        batch_size: the encoding batch size.
        gpus: the flavor's GPUs (``flavor_gpus``); default the table's count. Several: one
            process per GPU under torchrun.
    """
    batch_size = check_batch_size(batch_size)  # a GPU Job's default: twice a local run's
    from huggingface_hub import JobHardware

    get_benchmark(benchmark)  # an unknown name fails here, with suggestions
    flavors = [f.value for f in JobHardware]
    if flavor not in flavors:
        raise ValueError(f"flavor: {flavor!r} is not a Jobs flavor; use one of {flavors}.")
    if package is not None and wheel is not None:
        raise ValueError("package: give a pip requirement or a local wheel (--local), not both.")
    if package is not None and not package.strip():
        raise ValueError("package: empty; give a pip requirement such as chemteb-eval==0.1.0.")
    _check_timeout(timeout)
    if not image or image != image.strip() or any(c.isspace() for c in image):
        raise ValueError(f"image: {image!r} is not a Docker image name (e.g. python:3.11).")
    target = check_repo_id(push_to, "push_to") if push_to else parse_model_spec(model).hub_id
    if push and target is None:
        raise ValueError(
            f"push_to: {model!r} is not a Hub model id; pass --push-to ORG/NAME or --no-push."
        )
    out = "/tmp/chemteb-results"
    installed, steps = _install_steps(job_extras(model, benchmark), package, wheel)
    if gpus is None:
        gpus = flavor_gpus(flavor, ask_hub=False)[0]
    args = (
        f"-m {shlex.quote(model)} -b {shlex.quote(benchmark)} --output-dir {out} "
        f"--batch-size {batch_size} --quiet"
    )
    steps.append(run_command(args, gpus))
    if push and target is not None:
        steps.append(f"chemteb push-results {out} --repo-id {shlex.quote(target)}")
    return JobPlan(
        image=image,
        command=["bash", "-c", " && ".join(steps)],
        flavor=flavor,
        timeout=timeout,
        push_to=target if push else None,
        package=installed,
        wheel=wheel,
        processes=max(gpus, 1),
    )


def _checkout_root() -> Path:
    root = Path(__file__).resolve().parents[2]
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file() or 'name = "chemteb-eval"' not in pyproject.read_text("utf-8"):
        raise ChemtebError(
            f"--local builds a wheel of the checkout chemteb runs from, but this chemteb-eval "
            f"is an installed copy ({root} has no chemteb-eval pyproject.toml). Run chemteb from "
            "a source checkout (pip install -e .), or drop --local to run a released version."
        )
    return root


@dataclass(frozen=True)
class CheckoutState:
    """What a git checkout holds beside its commit: what ``--local``'s wheel is built from."""

    commit: str  # HEAD's full sha
    changed: tuple[str, ...] = ()  # tracked files whose working copy differs from HEAD
    untracked: tuple[str, ...] = ()  # files git does not track (and does not ignore)

    def describe(self) -> str:
        """``abc1234``, or ``abc1234 with uncommitted changes to a.py, b.py``: true of the wheel,
        which holds the tracked files as they are on disk (never an untracked one)."""
        if not self.changed:
            return self.commit[:12]
        return f"{self.commit[:12]} with uncommitted changes to {_some(self.changed)}"


@dataclass(frozen=True)
class LocalWheel:
    """A wheel built by ``build_local_wheel`` and the checkout state it was built from."""

    path: Path
    state: CheckoutState


def _some(paths: tuple[str, ...], limit: int = 5) -> str:
    shown = ", ".join(paths[:limit])
    return shown + (f" and {len(paths) - limit} more" if len(paths) > limit else "")


def _git(root: Path, *args: str) -> str:
    """git's output in ``root``; a ``ChemtebError`` when git is missing or fails."""
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="surrogateescape",  # any file name git prints maps back to the same path
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ChemtebError(
            f"--local: git could not run in {root} ({type(exc).__name__}); the wheel is built "
            "from the files git tracks: install git, or drop --local to run a released version."
        ) from None
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise ChemtebError(
            f"--local: `git {args[0]}` failed in {root} ({said}); --local needs a git checkout "
            "with a commit: commit there, or drop --local to run a released version."
        )
    return done.stdout


def checkout_state(root: str | Path | None = None) -> CheckoutState:
    """HEAD, the tracked files that differ from it and the untracked ones, of the git checkout
    at ``root`` (default: the one this package runs from)."""
    top = Path(root) if root is not None else _checkout_root()
    # A checkout copied inside another repository would otherwise report (and build) that one.
    toplevel = Path(_git(top, "rev-parse", "--show-toplevel").strip())
    if toplevel.resolve() != top.resolve():
        raise ChemtebError(
            f"--local: {top} is not the top of a git checkout (git's is {toplevel}); run "
            "chemteb from a clone of chemteb-eval, or drop --local."
        )
    commit = _git(top, "rev-parse", "--verify", "HEAD^{commit}").strip()
    # `git diff HEAD` compares contents (not timestamps): staged, unstaged, added, deleted.
    changed = _git(top, "diff", "--name-only", "--no-renames", "-z", "HEAD", "--")
    untracked = _git(top, "ls-files", "--others", "--exclude-standard", "-z")
    return CheckoutState(
        commit=commit,
        changed=tuple(sorted(filter(None, changed.split("\0")))),
        untracked=tuple(sorted(filter(None, untracked.split("\0")))),
    )


def copy_tracked_files(root: str | Path, dest: str | Path) -> list[str]:
    """Copy the files git tracks in ``root`` (as they are on disk) into ``dest``; untracked and
    ignored files (a planted ``.env``, a token file) never leave the checkout.

    Raises:
        ChemtebError: a tracked symlink points at a file git does not track, in the checkout
            or outside it (the wheel would carry whatever it points at).
    """
    top, out = Path(root).resolve(), Path(dest)
    tracked = sorted(filter(None, _git(top, "ls-files", "-z").split("\0")))
    known = set(tracked)
    copied = []
    for name in tracked:
        source = top / name
        if source.is_symlink() and not _links_to_tracked(top, source, known):
            raise ChemtebError(
                f"--local: the tracked file {name} is a symlink to {source.resolve()}, which is "
                "not a file git tracks here (the wheel would carry it); remove the link from "
                "git, or drop --local."
            )
        if not source.is_file():  # deleted on disk (the state says so), or a submodule
            continue
        target = out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        shutil.copymode(source, target)
        copied.append(name)
    return copied


def _links_to_tracked(top: Path, link: Path, tracked: set[str]) -> bool:
    target = link.resolve()
    return target.is_relative_to(top) and target.relative_to(top).as_posix() in tracked


def build_local_wheel(
    out_dir: str | Path, *, root: str | Path | None = None, log: Callable[[str], None] = print
) -> LocalWheel:
    """Build a wheel of the tracked files of the source checkout this package runs from (or
    ``root``) into ``out_dir``: they are copied to a temporary folder first, so nothing git does
    not track can get in (hatchling's ``force-include`` of ``metrics/`` takes any file there).

    ``pip wheel`` builds it (pip always has it; ``python -m build`` would need the dev extra).
    The result's ``state`` says which commit, and which uncommitted changes, it holds.
    """
    top = Path(root) if root is not None else _checkout_root()
    state = checkout_state(top)
    if state.untracked:
        log(f"--local: left out of the wheel (not tracked by git): {_some(state.untracked)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="chemteb-source-") as source:
        copy_tracked_files(top, source)
        done = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), source],
            capture_output=True,
            text=True,
        )
    wheels = sorted(out.glob("chemteb_eval-*.whl"))
    if done.returncode != 0 or len(wheels) != 1:
        tail = " | ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
        raise ChemtebError(f"--local: building the wheel of {top} failed: {tail or 'no wheel'}")
    return LocalWheel(path=wheels[0], state=state)


def checkout_commit(root: str | Path | None = None) -> str:
    """The checkout's state in words, for the wheel's upload message (``CheckoutState.describe``:
    the commit, and the tracked files that differ from it)."""
    return checkout_state(root).describe()


def upload_wheel(
    wheel: str | Path,
    repo_id: str | None = None,
    *,
    message: str | None = None,
    log: Callable[[str], None] = print,
) -> WheelRef:
    """Upload a wheel to a private model repo of the user's and return it pinned to the commit.

    Args:
        wheel: the ``.whl`` file.
        repo_id: the repo; default ``<your user>/chemteb-eval-wheels`` (created private). An
            existing repo keeps its visibility (a public one is said).
        message: the commit message (default: the file name).
        log: where progress lines go.
    """
    from huggingface_hub import HfApi

    file = Path(wheel)
    if file.suffix != ".whl" or not file.is_file():
        raise ValueError(f"wheel: {file} is not a wheel file.")
    require_token("submit --local (the wheel goes to a Hub repo of yours)")
    api = HfApi()
    if repo_id is None:
        with hub_errors("find your user name for the wheel repo"):
            repo_id = f"{api.whoami()['name']}/{WHEEL_REPO_NAME}"
    check_repo_id(repo_id, "wheel_repo")
    with hub_errors("upload the wheel", repo_id):
        api.create_repo(repo_id, repo_type="model", private=True, exist_ok=True)
        info = api.upload_file(
            path_or_fileobj=str(file),
            path_in_repo=file.name,
            repo_id=repo_id,
            repo_type="model",
            commit_message=message or f"Upload {file.name}",
        )
        repo = api.repo_info(repo_id, repo_type="model", revision=info.oid)
    private = getattr(repo, "private", None)
    ref = WheelRef(repo_id=repo_id, filename=file.name, commit=str(info.oid))
    log(f"wheel {file.name} ({file.stat().st_size / 1e6:.1f} MB) uploaded: {ref.url}")
    if private is False:
        log(f"note: {repo_id} is public, so this wheel is too (make it private in its settings).")
    return ref


def submit(
    plan: JobPlan, *, namespace: str | None = None, log: Callable[[str], None] = print
) -> Any:
    """Start the Job; return huggingface_hub's ``JobInfo``.

    Raises:
        ChemtebError: no token, no access, or the Hub is unreachable — with what to do.
    """
    from huggingface_hub import HfApi

    if namespace is not None:
        check_namespace(namespace)  # it becomes a URL path segment: no '..' or '/'
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
