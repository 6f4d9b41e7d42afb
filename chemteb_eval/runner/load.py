"""The load stage: each pending task's data (``load``), and the model (``open_model``: the
folders checked first, then the encoder loaded, then what tells its weights apart and the
results folder they own)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

from chemteb_eval.data import load_task
from chemteb_eval.data.fingerprint import data_fingerprint
from chemteb_eval.data.pipchem import build_needed as pipchem_build_needed
from chemteb_eval.data.types import TaskData
from chemteb_eval.engine import EmbeddingCache
from chemteb_eval.errors import ChemtebError
from chemteb_eval.models.backends import cache_variant, framework_of
from chemteb_eval.models.base import Encoder, ModelMeta
from chemteb_eval.models.fingerprint import model_fingerprint
from chemteb_eval.models.identity import (
    NOISE_FACTOR,
    SAME_FLOOR,
    Anchor,
    ApiIdentity,
    Probe,
    ProbeGuard,
    ProbeRegistry,
    canonical_url,
    measure_probe,
    within,
)
from chemteb_eval.models.spec import ModelSpec
from chemteb_eval.results.io import experiment_name
from chemteb_eval.results.model_folder import model_metas
from chemteb_eval.tasks import Task

from .folders import results_folder, writable
from .inspect import quality_warning
from .values import ApiOpened, Log, Opened, Plan, Prepared, RunReport, cache_folder, tell

__all__ = ["api_identity", "load", "local_weights", "open_model", "recorded_anchors"]


def load(
    plan: Plan,
    todo: list[Task],
    report: RunReport,
    log: Log,
    data_paths: Mapping[str, Path] | None = None,
    *,
    progress: bool = False,
    identities: dict[str, str] | None = None,
) -> dict[str, TaskData]:
    """Each task's data for the plan's splits; a task whose data fails is recorded, not fatal
    (one ``[failed]`` line, the recorded error). With ``progress``, a bar over the tasks.

    ``identities`` receives each loaded task's data identity, what its result file names as
    ``dataset_revision``: the Hub commit, the fingerprint of the very bytes a task file's
    files were read from (read once: ``data.custom``), else the content fingerprint of the
    data as loaded."""
    from tqdm.auto import tqdm

    if any(t.builder == "pipchem" for t in todo) and pipchem_build_needed():
        log(
            "Building the PipChem suite from its pip-installed sources (once, 10-20 s); "
            "later runs reuse it."
        )
    loaded: dict[str, TaskData] = {}
    for task in tqdm(todo, desc="loading data", unit="task", disable=not progress or not todo):
        try:
            # what a user's files hold that is not scored is said (their tasks only)
            scored: list[str] = []  # a task file's data: the fingerprint of the bytes read
            said: dict[str, Any] = {}
            if task.builder == "custom":
                said = {"log": lambda line: tell(log, line), "scored": scored.append}
            data = load_task(
                task, splits=plan.splits(task), data_path=(data_paths or {}).get(task.name), **said
            )
            loaded[task.name] = data
            if task.builder == "custom":  # a user's data: its faults said, the score computed
                warning = quality_warning(task.name, data)
                if warning is not None:
                    tell(log, warning)
            if identities is not None:
                identities[task.name] = (
                    scored[-1] if scored else task.revision or data_fingerprint(data)
                )
        except Exception as exc:  # one task's failure is recorded; the run goes on
            report.statuses[task.name] = "failed"
            report.errors[task.name] = f"{type(exc).__name__}: {exc}"
            # our errors are sentences that say what to do; others keep their type's name
            why = str(exc) if isinstance(exc, ChemtebError) else report.errors[task.name]
            tell(log, f"[failed] {task.name}: could not load data: {why}")
    return loaded


def open_model(prepared: Prepared) -> Opened:
    """Check the folders (before minutes of model loading), then load the model. A model that
    does not load leaves no empty ``--output-dir`` behind (the check created it)."""
    options, variant = prepared.options, prepared.variant
    output_dir, cache, log = options.output_dir, options.cache_folder, options.log
    created = not output_dir.exists()
    writable(output_dir, "--output-dir:", "pass a folder you can write to")
    if cache is not None:
        fix = "run with --no-cache, or set CHEMTEB_CACHE to a folder you can write to"
        writable(cache, "embedding cache folder", fix, read_only_ok=True)
    model = prepared.model
    if isinstance(model, ModelSpec):
        from chemteb_eval.models import load_encoder

        try:
            with _quiet_loading(not options.progress):
                model = load_encoder(
                    model, device=options.device, log=log, **variant.load_options()
                )
        except BaseException:
            if created and output_dir.is_dir() and not any(output_dir.iterdir()):
                output_dir.rmdir()
            raise
    # an encoder passed in: a dtype its backend never computes in would label float32 vectors
    variant.check(model.meta.framework)
    if variant.revision is not None:  # the user's name for the model an API serves now
        model.meta = replace(model.meta, revision=variant.revision)
    api = api_identity(model, cache, log, output_dir)
    weights = api.label if api is not None else local_weights(model.meta)
    if api is not None:  # every request it answers checked before its vectors are used
        model = api.guard.watch(model)
    kwargs = variant.experiment_kwargs(model.meta.framework)
    # another backend or dtype of the model: MTEB's experiments folder
    experiment = experiment_name(kwargs) if kwargs else None
    aliases = api.aliases if api is not None else ()
    out_dir = results_folder(output_dir, model.meta, weights, log, experiment, aliases)
    writable(out_dir, "--output-dir:", "pass a folder you can write to")
    if api is None:
        return Opened(model, out_dir, weights)
    return Opened(model, out_dir, weights, api.probe, api.guard)


@contextmanager
def _quiet_loading(quiet: bool) -> Iterator[None]:
    """``--quiet``: transformers' and huggingface_hub's own bars too ("Loading weights"), for
    the load only; both are restored after."""
    if not quiet:
        yield
        return
    from huggingface_hub.utils import (  # type: ignore[attr-defined]
        are_progress_bars_disabled,
        disable_progress_bars,
        enable_progress_bars,
    )

    hub_was_off = are_progress_bars_disabled()
    disable_progress_bars()
    bars: Any = None
    try:
        from transformers.utils import logging as bars
    except ImportError:  # an API model on the core install
        pass
    was_on = bars is not None and bars.is_progress_bar_enabled()
    if was_on:
        bars.disable_progress_bar()
    try:
        yield
    finally:
        if was_on:
            bars.enable_progress_bar()
        if not hub_was_off:
            enable_progress_bars()


def local_weights(meta: ModelMeta) -> str | None:
    """The fingerprint of a model loaded from local files with no revision (a folder, a
    vectors file, the bundled copy): what tells two folders named ``final`` apart."""
    if meta.revision is not None or not Path(meta.source).exists():
        return None
    return model_fingerprint(meta.source)


def api_identity(
    encoder: Encoder, cache: Path | None, log: Log, results: Path | None = None
) -> ApiOpened | None:
    """For a model behind an OpenAI-compatible API: what it is as declared (its URL without
    credentials, its name, the user's ``--revision``: ``models.identity.ApiIdentity``), whose
    label keys its cache and results folder, and the guard that stops the run where the vectors
    it returns leave its anchor (the first probe of that identity, kept beside the cache and in
    the results folder). ``None`` for every other backend.

    The probe is asked at the start and checked against every anchor on record: the registry
    beside the cache and the results folders under ``results`` that name this identity (the
    registry lost: another machine, a new cache). The first time an identity is seen, a cache
    of the layouts before (keyed by the URL, or by a label the vectors chose) is adopted when
    exactly one of them is this model's; never by sort order."""
    meta = encoder.meta
    if meta.framework != framework_of("openai"):
        return None
    identity = ApiIdentity(meta.name, meta.source, meta.revision)
    if "probe_watch" in vars(encoder):  # an encoder object used again: its last run's guard
        encoder.probe_watch = None  # type: ignore[attr-defined]
    registry = ProbeRegistry.beside(cache if cache is not None else cache_folder())
    start = measure_probe(encoder)
    kept = registry.anchor(identity)
    anchors = [*([kept] if kept is not None else []), *recorded_anchors(results, identity)]
    aliases: tuple[str, ...] = ()
    if not anchors:
        first = Anchor(start, date.today().isoformat())
        anchor, aliases = _first_sight(identity, first, registry, cache, log, results, meta.source)
        anchors = [anchor]
    for anchor in anchors:  # every record of this identity, or none: no order decides
        ProbeGuard(encoder, identity, anchor, start).refuse(start, "at the start of this run")
    guard = ProbeGuard(encoder, identity, anchors[0], start, registry)
    moved = guard.moved(start)
    if moved > max(NOISE_FACTOR * start.noise, SAME_FLOOR):
        log(
            f"{identity.shown()}: its vectors moved {moved:.2g} (of a unit vector) since "
            f"{guard.anchor.since}, within the {guard.limit:.2g} tolerated; cached and new "
            "vectors may differ by about that."
        )
    record = {**guard.anchor.probe.to_record(), "since": guard.anchor.since}
    return ApiOpened(identity.label, record, guard, aliases)


def _first_sight(
    identity: ApiIdentity,
    first: Anchor,
    registry: ProbeRegistry,
    cache: Path | None,
    log: Log,
    results: Path | None,
    url: str,
) -> tuple[Anchor, tuple[str, ...]]:
    """An identity seen for the first time: its anchor, and the labels of the layout before
    (``probe:...``, chosen by the vectors) that were this model's. The one earlier label whose
    probe this model's lies within the tolerance of is adopted (its cache moved to the new
    label's, its results folder this model's); several are named in one line and none is
    adopted. Without any, a cache keyed by the URL alone (``url`` as the API was given: before
    probes) becomes this identity's. Either's vectors are checked against the model before any
    is served (``ProbeGuard.compare``)."""
    variant = cache_variant(framework_of("openai"), "float32")

    def folder(fingerprint: str | None) -> tuple[Path, str]:
        assert cache is not None
        return EmbeddingCache.path_for(cache, identity.model, None, url, fingerprint, variant)

    earlier = [] if identity.revision else registry.earlier(identity)
    earlier += [] if identity.revision else _recorded_labels(results, identity)
    near = sorted({label for label, probe in earlier if within(probe, first.probe)})
    if len(near) > 1:
        log(
            f"{identity.shown()}: {len(near)} earlier labels ({', '.join(near)}) match its "
            "vectors; none is adopted (their caches and results stay where they are)."
        )
    elif near:
        label = near[0]
        if cache is not None:
            _adopt(folder(label)[0], folder(identity.label)[0], label)
        log(f"{identity.shown()}: the cache and results of {label} are this model's now.")
        probe = next(p for name, p in earlier if name == label)
        return replace(first, probe=probe, since="an earlier run"), (label,)
    elif cache is not None and not earlier:
        old, ident = folder(None)
        _adopt(old, folder(identity.label)[0], ident)
    return first, ()


def _adopt(old: Path, new: Path, ident: str) -> None:
    """Move a cache of the layout before to the identity's (its vectors are checked against
    the model before any is served: ``ProbeGuard.compare``); another run that moved it first
    leaves nothing to do."""
    try:
        EmbeddingCache.adopt(old, new, ident)
    except OSError:
        pass  # moved by another run meanwhile, or not movable: the new cache starts empty


def recorded_anchors(results: Path | None, identity: ApiIdentity) -> list[Anchor]:
    """The anchors the results folders under ``results`` keep for ``identity`` (their
    ``model_meta.json`` names its label as ``weights`` and keeps its ``probe``)."""
    out = []
    for meta in _metas(results):
        probe, record = Probe.from_record(meta.get("probe")), meta.get("probe")
        if meta.get("weights") == identity.label and probe is not None:
            since = record.get("since") if isinstance(record, dict) else None
            ok = isinstance(since, str) and 0 < len(since) <= 40 and since.isprintable()
            out.append(Anchor(probe, str(since) if ok else "an earlier run"))
    return out


def _recorded_labels(results: Path | None, identity: ApiIdentity) -> list[tuple[str, Probe]]:
    """The (label, probe) of the layout before (``probe:...``) that results folders keep for
    models served under ``identity``'s name at its URL."""
    out = []
    for meta in _metas(results):
        label, probe = meta.get("weights"), Probe.from_record(meta.get("probe"))
        said = (meta.get("name"), canonical_url(str(meta.get("source"))))
        if isinstance(label, str) and label.startswith("probe:") and probe is not None:
            if said == (identity.model, identity.source):
                out.append((label, probe))
    return out


def _metas(results: Path | None) -> list[dict[str, Any]]:
    return model_metas(results) if results is not None and results.is_dir() else []
