"""Publish the project's repos: the metric Spaces (``evaluate.load("chemteb/<name>")``) and the
datasets it builds (Parquet + card).

evaluate 0.4.6 loads ``ns/name`` by fetching ``{endpoint}/spaces/ns/name/resolve/{rev}/name.py``
with ``rev = v0.4.6`` (its own version), then ``main``, and the files that script imports
relatively. A metric Space is the ``metrics/<name>/`` folder made self-contained at publish time
(``bundle.py``): the module with its own copy of the pure chemteb-eval code it runs, so a user
needs only ``evaluate`` (numpy, scipy, scikit-learn), and the scores are those of the Space's
version, not of whatever chemteb-eval they have installed. Its requirements are those
libraries and gradio (no chemteb-eval, torch, RDKit or model).
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from chemteb_eval import __version__
from chemteb_eval.metric_docs import METRIC_NAMES

from ._errors import hub_errors, require_token
from ._repo import check_namespace, check_repo_id
from .bundle import bundle_space

if TYPE_CHECKING:
    from chemteb_eval.tasks.custom import TaskFile

__all__ = [
    "METRIC_NAMES",
    "Publication",
    "metrics_root",
    "publish_dataset_folder",
    "publish_metrics",
    "publish_pipchem",
]

# Never uploaded: caches, and hidden files and folders (.env, .netrc, .git: where credentials live).
_IGNORE = ["__pycache__/*", "*/__pycache__/*", "*.pyc", ".*", "*/.*"]


@dataclass
class Publication:
    """What one publish step did (or, in a dry run, would do)."""

    repo_id: str
    repo_type: str
    files: list[str] = field(default_factory=list)
    commit: str | None = None  # the commit sha; None in a dry run
    url: str | None = None


def metrics_root() -> Path:
    """The metric module folders: a source checkout's ``metrics/``, else the copy the wheel
    carries (``chemteb_eval/_metrics``), so ``publish-metrics`` works from a pip install too."""
    package = Path(__file__).resolve().parents[1]
    for root in (package.parent / "metrics", package / "_metrics"):
        if root.is_dir():
            return root
    raise ValueError(
        "metrics_dir: no metric module folders found (neither a checkout's metrics/ nor the "
        "wheel's chemteb_eval/_metrics); pass --metrics-dir."
    )


def _space_files(name: str) -> list[str]:
    # What a metric folder must have. The Space gets the files ``bundle_space`` generates from
    # them (and tests.py) and nothing else: a stray file beside them (a .env, a token, notes)
    # is never published.
    return ["README.md", "app.py", f"{name}.py", "requirements.txt"]


def _files(folder: Path, allow: list[str] | None = None) -> list[str]:
    """The files ``upload_folder`` sends from ``folder``: the same patterns, applied by
    huggingface_hub's own filter, so a dry run lists exactly what a real run uploads."""
    from huggingface_hub.utils import (  # type: ignore[attr-defined]
        DEFAULT_IGNORE_PATTERNS,
        filter_repo_objects,
    )

    names = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    kept = filter_repo_objects(
        names, allow_patterns=allow, ignore_patterns=_IGNORE + DEFAULT_IGNORE_PATTERNS
    )
    return list(kept)


def _upload(
    folder: Path,
    repo_id: str,
    repo_type: str,
    message: str,
    *,
    space_sdk: str | None = None,
    allow: list[str] | None = None,
) -> Publication:
    from huggingface_hub import HfApi

    require_token(f"publish {repo_type} {repo_id}")
    api = HfApi()
    with hub_errors(f"publish {repo_type} {repo_id}", repo_id):
        url = api.create_repo(repo_id, repo_type=repo_type, space_sdk=space_sdk, exist_ok=True)
        info = api.upload_folder(
            folder_path=folder,
            repo_id=repo_id,
            repo_type=repo_type,
            commit_message=message,
            allow_patterns=allow,
            ignore_patterns=_IGNORE,
        )
    return Publication(
        repo_id=repo_id,
        repo_type=repo_type,
        files=_files(folder, allow),
        commit=info.oid,
        url=str(url),
    )


def publish_metrics(
    namespace: str,
    *,
    names: Sequence[str] = METRIC_NAMES,
    metrics_dir: str | Path | None = None,
    dry_run: bool = False,
    log: Callable[[str], None] = print,
) -> list[Publication]:
    """Make each ``metrics/<name>/`` a Gradio Space ``{namespace}/{name}``.

    Args:
        namespace: the user or organisation (``chemteb``).
        names: which metrics.
        metrics_dir: the ``metrics/`` folder; default the checkout's.
        dry_run: list what would be uploaded, change nothing.
        log: where progress lines go.

    Returns:
        One ``Publication`` per Space.
    """
    check_namespace(namespace)
    if not dry_run:  # before seconds of bundling: a missing token is the first thing to say
        require_token(f"publish the metric Spaces to {namespace}")
    root = Path(metrics_dir) if metrics_dir is not None else metrics_root()
    unknown = [n for n in names if n not in METRIC_NAMES]
    if unknown:
        raise ValueError(f"names: unknown metric(s) {unknown}; use some of {list(METRIC_NAMES)}.")
    done = []
    for name in names:
        folder = root / name
        missing = [f for f in _space_files(name) if not (folder / f).is_file()]
        if missing:
            # Without its card (the Space's sdk) or app the Space would not build.
            raise ValueError(f"metrics_dir: {folder} has no {', '.join(missing)}.")
        repo_id = f"{namespace}/{name}"
        bundle = bundle_space(folder, name)
        with tempfile.TemporaryDirectory(prefix=f"chemteb-space-{name}-") as tmp:
            space = Path(tmp)
            for relative, text in bundle.files.items():
                (space / relative).write_text(text, encoding="utf-8")
            if dry_run:
                pub = Publication(repo_id=repo_id, repo_type="space", files=_files(space))
                log(f"[dry run] space {repo_id}: would upload {', '.join(pub.files)}")
            else:
                pub = _upload(
                    space,
                    repo_id,
                    "space",
                    f"chemteb-eval {__version__}: publish the {name} metric",
                    space_sdk="gradio",
                    allow=sorted(bundle.files),
                )
                log(f"space {repo_id}: {len(pub.files)} files at {pub.commit} ({pub.url})")
        done.append(pub)
    return done


def publish_dataset_folder(
    folder: str | Path,
    repo_id: str,
    *,
    dry_run: bool = False,
    message: str | None = None,
    log: Callable[[str], None] = print,
) -> Publication:
    """Upload a Hub-layout dataset folder (Parquet files + ``README.md`` card) as a dataset repo.

    Args:
        folder: the folder (what ``chemteb_eval.data.hub_layout.write_hub_dataset`` writes).
        repo_id: ``org/name``.
        dry_run: list what would be uploaded, change nothing.
        message: the commit message.
        log: where progress lines go.
    """
    folder = Path(folder)
    check_repo_id(repo_id)
    if not (folder / "README.md").is_file() or not any(folder.rglob("*.parquet")):
        raise ValueError(
            f"folder: {folder} is not a Hub-layout dataset (README.md card and Parquet files); "
            "build one with a datasets_scripts/ builder."
        )
    inside = folder.resolve()
    for path in sorted(folder.rglob("*")):
        # upload_folder sends what a link points at: a planted one could publish a token file
        if path.is_symlink() and not path.resolve().is_relative_to(inside):
            raise ValueError(
                f"folder: {path} links outside the folder; copy the file in (cp -L) to publish it."
            )
    if dry_run:
        pub = Publication(repo_id=repo_id, repo_type="dataset", files=_files(folder))
        log(f"[dry run] dataset {repo_id}: would upload {', '.join(pub.files)}")
        return pub
    pub = _upload(
        folder, repo_id, "dataset", message or f"chemteb-eval {__version__}: publish {folder.name}"
    )
    log(f"dataset {repo_id}: {len(pub.files)} files at {pub.commit} ({pub.url})")
    return pub


def publish_pipchem(
    namespace: str,
    *,
    scale: str = "full",
    tasks: Sequence[str] | None = None,
    dry_run: bool = False,
    log: Callable[[str], None] = print,
) -> list[Publication]:
    """Build the PipChem suite (``datasets_scripts/build_pipchem.py``'s builder) and publish each
    task's dataset as ``{namespace}/{TaskName}``.

    The records in ``chemteb_eval.tasks.pipchem`` keep loading the local build; pin the
    published commit in a task record to load from the Hub instead.
    """
    from chemteb_eval.data import pipchem

    check_namespace(namespace)
    if not dry_run:  # before the build (seconds): a missing token is the first thing to say
        require_token(f"publish the PipChem datasets to {namespace}")
    with tempfile.TemporaryDirectory(prefix="chemteb-pipchem-") as tmp:
        out = Path(tmp)
        log(f"building PipChem ({scale}) ...")
        pipchem.build(out, scale=scale)
        built = sorted(p.name for p in out.iterdir() if (p / "README.md").is_file())
        chosen = list(tasks) if tasks else built
        unknown = [t for t in chosen if t not in built]
        if unknown:
            raise ValueError(f"tasks: {unknown} are not PipChem datasets; use some of {built}.")
        return [
            publish_dataset_folder(
                out / name,
                f"{namespace}/{name}",
                dry_run=dry_run,
                message=f"chemteb-eval {__version__}: PipChem {name} ({scale})",
                log=log,
            )
            for name in chosen
        ]


def publish_task_file(
    task_file: str | Path,
    repo_id: str,
    *,
    dry_run: bool = False,
    log: Callable[[str], None] = print,
) -> Publication:
    """Publish a task file's data as a Parquet dataset repo, in the layout the registered tasks
    of its type use, with a dataset card that says how to run it (``--task-file`` on the Hub
    source, pinned to the commit this upload makes).

    Args:
        task_file: the task file (its source must be local: a Hub source is published already).
        repo_id: the dataset repo, ``org/name``.
        dry_run: build the folder and list what would be uploaded; change nothing.
        log: where progress lines go.
    """
    from chemteb_eval.data import load_task
    from chemteb_eval.data.custom import hub_configs
    from chemteb_eval.data.hub_layout import write_hub_dataset
    from chemteb_eval.tasks.custom import read_task_file
    from chemteb_eval.tasks.registry import check_custom_name

    check_repo_id(repo_id)
    declared = read_task_file(task_file)
    check_custom_name(declared.name)
    if declared.source is None:
        raise ValueError(
            f"--task-file: {declared.path} already names a Hub source ({declared.hub}); there "
            "is nothing to publish."
        )
    if not dry_run:  # before minutes of reading and writing
        require_token(f"publish dataset {repo_id}")
    task = declared.to_task()
    splits = (*task.eval_splits, *([task.train_split] if task.train_split else []))
    data = load_task(task, splits=task.eval_splits, data_path=declared.source, log=log)
    with tempfile.TemporaryDirectory(prefix="chemteb-task-") as tmp:
        folder = write_hub_dataset(
            Path(tmp) / declared.name,
            hub_configs(task, data),
            pretty_name=declared.name,
            license=declared.license or "other",
            card=_task_card(declared, repo_id, splits),
            tags=["chemteb", "mteb", task.type.lower()],
        )
        return publish_dataset_folder(
            folder,
            repo_id,
            dry_run=dry_run,
            message=f"chemteb-eval {__version__}: publish {declared.name}",
            log=log,
        )


def card_declaration(declared: TaskFile, repo_id: str, revision: str = "COMMIT") -> str:
    """The task file a colleague saves to run the published task: the publisher's whole
    declaration (splits, train split, main score, prompts, description: everything that sets a
    number), its source the Hub repo at ``revision``, as YAML. The columns are not there: the
    published layout has the canonical ones."""
    from chemteb_eval.tasks.declaration import dump_declaration

    out = {k: v for k, v in declared.declaration().items() if k not in ("columns", "license")}
    out["source"] = {"hub": repo_id, "revision": revision}
    return dump_declaration(out)


def _task_card(declared: TaskFile, repo_id: str, splits: Sequence[str]) -> str:
    from chemteb_eval.results.markup import md
    from chemteb_eval.tasks import kind

    # the card is Markdown: a description from the user's file is shown, never acted on
    about = md(declared.description or f"A {declared.type} task.")
    columns = ", ".join(f"`{c}`" for c in kind(declared.type).file_columns)
    text = card_declaration(declared, repo_id).rstrip()
    # a fence longer than any run of backticks in the block (a prompt may hold some)
    fence = "`" * max(3, 1 + max((len(r) for r in re.findall("`+", text)), default=0))
    return f"""# {declared.name}

{about}

A {declared.type} task made with [chemteb-eval](https://pypi.org/project/chemteb-eval/)'s
`publish-dataset --task-file`, in the layout ChemTEB's {declared.type} datasets use
(columns {columns}; splits {", ".join(f"`{s}`" for s in splits)}); it is scored by
`{declared.main_score}`.

## Run it

Save this as `{declared.name}.yaml`, with `revision` the commit of this repository you want
(the repository's history lists them). It is the publisher's declaration, whole (splits,
prompts, main score), so the same model gives the publisher's scores:

{fence}yaml
{text}
{fence}

then `chemteb run -m MODEL --task-file {declared.name}.yaml`; `chemteb rank results/` ranks it
with your other tasks, apart from ChemTEB's.
"""
