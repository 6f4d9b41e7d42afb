"""The values a run's stages hand each other, each made once: what the run evaluates (``Plan``),
how it goes (``RunOptions``), everything checked before the model loads (``Prepared``), the
model as loaded (``Opened``), and what it did (``RunReport``)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chemteb_eval.data import cache_root
from chemteb_eval.models.base import DEFAULT_BATCH_SIZE, Encoder
from chemteb_eval.models.identity import ProbeGuard
from chemteb_eval.models.spec import ModelSpec
from chemteb_eval.models.variant import ModelVariant
from chemteb_eval.tasks import Benchmark, Task, eval_splits
from chemteb_eval.tasks import main_score as benchmark_main_score

__all__ = ["Log", "Opened", "Plan", "Prepared", "RunOptions", "RunReport", "tell"]

Log = Callable[[str], None]


@dataclass(frozen=True)
class Plan:
    """What a run evaluates: the tasks, and the benchmark whose protocol (splits, main scores)
    applies, or ``None`` for each task's own defaults."""

    tasks: tuple[Task, ...]
    benchmark: Benchmark | None = None

    def splits(self, task: Task) -> tuple[str, ...]:
        return eval_splits(self.benchmark, task) if self.benchmark else task.eval_splits

    def main_score(self, task: Task) -> str:
        return benchmark_main_score(self.benchmark, task) if self.benchmark else task.main_score


@dataclass(frozen=True)
class RunOptions:
    """How a run goes, apart from the model's variant (``models.variant.ModelVariant``).

    Args:
        output_dir: where result folders go (MTEB layout).
        batch_size: texts per model call.
        device: the torch device for local models.
        overwrite: rerun tasks whose result file exists.
        cache_dir: the embedding cache folder (default ``~/.cache/chemteb/embeddings``).
        use_cache: keep embeddings on disk and reuse them across runs.
        data_paths: ``{task name: folder}``, the user's copies of restricted sets (Clinical
            STS, CoNLL-2003, CHEMDNER) in the format each task's ``obtain`` names, and a task
            file's source.
        beta: the F-beta's beta for the classification and NER probes (classification adds
            ``fbeta`` keys; NER's ``overall_f1`` becomes the F-beta); default F1 only.
        progress: show progress bars.
        log: where one-line messages go.
    """

    output_dir: Path
    batch_size: int = DEFAULT_BATCH_SIZE
    device: str | None = None
    overwrite: bool = False
    cache_dir: str | Path | None = None
    use_cache: bool = True
    data_paths: Mapping[str, str | Path] | None = None
    beta: float | None = None
    progress: bool = True
    log: Log = print

    @property
    def cache_folder(self) -> Path | None:
        """The embedding cache's folder; ``None`` without a cache."""
        if not self.use_cache:
            return None
        return Path(self.cache_dir) if self.cache_dir is not None else cache_folder()


def cache_folder() -> Path:
    """The default embedding cache folder (``~/.cache/chemteb/embeddings``)."""
    return cache_root() / "embeddings"


@dataclass(frozen=True)
class Prepared:
    """A run checked before a model or a dataset is touched.

    Args:
        plan: the tasks and the protocol.
        model: the model's spec (parsed once) or the ``Encoder`` passed in.
        requested: the backend asked for a model named by a string (recorded), else ``None``.
        variant: the model's variant.
        options: the run's options, checked (batch size, device, beta, data paths).
        dims, precisions: the compressed variants of its vectors to score too, checked.
    """

    plan: Plan
    model: ModelSpec | Encoder
    requested: str | None
    variant: ModelVariant
    options: RunOptions
    dims: tuple[int, ...] = ()
    precisions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Opened:
    """The model as loaded: its encoder, the results folder it writes to, and what tells its
    weights apart (``load.local_weights``, ``load.api_identity``; ``None`` for a Hub model)."""

    encoder: Encoder
    out_dir: Path
    weights: str | None
    # an API model's anchor probe as model_meta.json keeps it (``Probe.to_record``, ``since``)
    probe: dict[str, Any] | None = None
    # an API model's guard: asked before each block is stored and after the last is encoded
    guard: ProbeGuard | None = None


@dataclass(frozen=True)
class ApiOpened:
    """What ``load.api_identity`` makes of a model behind an API: the label of its declared
    identity, its anchor as ``model_meta.json`` keeps it, its guard, and the labels of the
    layout before whose results folders are this model's (``aliases``)."""

    label: str
    probe: dict[str, Any]
    guard: ProbeGuard
    aliases: tuple[str, ...] = ()


@dataclass
class RunReport:
    """What a run did: per-task status, the encoding statistics, where results are.

    ``main_scores`` are the plan's main score of each finished task, averaged over its subsets
    and then over the plan's splits (what ``chemteb rank`` shows for it); for a task skipped
    because its result file exists, the score that file holds.
    """

    results_dir: Path
    # names this run in runs.jsonl and in each result file it writes ("chemteb_run_id")
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:16])
    statuses: dict[str, str] = field(default_factory=dict)  # done | skipped | failed
    main_scores: dict[str, float] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    encoding: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    # per task: its result file's ``truncation`` record (``costs.truncation``), for the summary
    truncation: dict[str, Any] = field(default_factory=dict)
    # per variant of the model's vectors (``--dims``/``--precisions``): MTEB's experiment name
    # -> that variant's report (its folder, statuses, scores)
    variants: dict[str, RunReport] = field(default_factory=dict)
    # a variant's folder that scores only these task types (a hybrid: retrieval); None: every
    # type its vectors can score
    task_types: tuple[str, ...] | None = None


def tell(log: Log, message: str) -> None:
    """``log(message)`` with any progress bar cleared first and redrawn after, so the line
    stands on its own instead of breaking the bar."""
    from tqdm.auto import tqdm

    with tqdm.external_write_mode():
        log(message)
