"""The model's results folders: which one its results go to (asked of
``results.model_folder``, the home of ``model_meta.json``), the record written there, and the
folder of each variant of its vectors; nothing left behind by a run that stops early."""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from chemteb_eval._files import public_url
from chemteb_eval.errors import ChemtebError
from chemteb_eval.models.backends import backend_of, experiment_kwargs
from chemteb_eval.models.base import Encoder, ModelMeta
from chemteb_eval.models.card import card_licence
from chemteb_eval.models.variant import ModelVariant
from chemteb_eval.results.io import EXPERIMENTS, NO_REVISION, experiment_name
from chemteb_eval.results.model_folder import (
    META_FILE,
    remove_lone_meta,
    weights_folder,
    write_model_meta,
)
from chemteb_eval.scoring.compression import Compression
from chemteb_eval.tasks.kinds import RANKED_TYPES

from .costs import variants
from .values import Log, RunReport

__all__ = [
    "no_empty_folder_left",
    "recorded_meta",
    "results_folder",
    "results_name",
    "variant_reports",
    "writable",
    "write_meta",
]


def writable(folder: Path, what: str, fix: str, *, read_only_ok: bool = False) -> None:
    """Create ``folder`` (and parents) or raise one ``ChemtebError`` line: ``what folder cannot
    be written (reason); fix.`` With ``read_only_ok``, a folder that exists passes (a read-only
    embedding cache can still be read)."""
    if read_only_ok and folder.is_dir():
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not os.access(folder, os.W_OK | os.X_OK):  # an existing folder on a read-only mount
            raise PermissionError(errno.EACCES, "not writable")
    except OSError as exc:
        raise ChemtebError(
            f"{what} {folder} cannot be written ({exc.strerror or exc}); {fix}."
        ) from None


@contextlib.contextmanager
def no_empty_folder_left(out_dir: Path, existed: set[Path]) -> Iterator[None]:
    """A run that stops before its first task (a damaged cache, a failed load, Ctrl-C) leaves
    no empty results folder behind: the folders ``load.open_model`` made for it (the model's,
    its revision's, the output folder itself when the run made it) go again while they hold
    nothing but the ``model_meta.json`` this run wrote. Never a folder that held anything
    before."""
    try:
        yield
    except BaseException:
        remove_made(out_dir, existed)
        raise


def remove_made(out_dir: Path, existed: set[Path], *, meta: bool = True) -> None:
    """The folders this run made for ``out_dir`` while they hold nothing but this run's
    ``model_meta.json`` (``no_empty_folder_left``), or nothing at all (``meta=False``: a
    torchrun rank that writes no file, where the main process writes its own)."""
    if meta and out_dir not in existed:
        remove_lone_meta(out_dir)  # this run's own, and all there is
    for folder in (out_dir, *out_dir.parents):
        if folder in existed:
            break
        with contextlib.suppress(OSError):  # not empty, or not ours to remove: kept
            folder.rmdir()


def write_meta(
    encoder: Encoder,
    weights: str | None,
    out_dir: Path,
    precision: str,
    probe: dict[str, Any] | None = None,
) -> None:
    """The model's ``model_meta.json`` in ``out_dir`` (an API model's with its ``probe``: what
    tells it apart where the probe registry is lost); one ``ChemtebError`` line when the
    folder cannot be written."""
    recorded = recorded_meta(encoder.meta, weights, out_dir, precision)
    if probe is not None:
        recorded["probe"] = probe
    try:
        write_model_meta(out_dir, recorded)
    except OSError as exc:
        raise ChemtebError(
            f"--output-dir: {out_dir / META_FILE} cannot be written "
            f"({exc.strerror or exc}); pass a folder you can write to."
        ) from None


def results_name(meta: ModelMeta) -> str:
    """The model's name as its results record it: for a model loaded from local files, a path
    becomes its last part (never ``..`` or an absolute path: results shared on the Hub must not
    carry the user's folders). Other names (Hub ids, an API's served model, which vLLM names by
    a path) stay whole, so two of them never share a folder."""
    name = meta.name
    local = Path(meta.source).exists()
    if local and (Path(name).is_absolute() or name in (".", "..") or Path(name).exists()):
        return Path(name).resolve().name or "model"
    return name


def recorded_meta(
    meta: ModelMeta,
    weights: str | None,
    folder: Path | None = None,
    precision: str = "float32",
    compression: Compression | None = None,
) -> dict[str, Any]:
    """``model_meta.json``: the meta with a local source recorded by name, and the weights'
    fingerprint, which ``results_folder`` reads to keep other weights out of the folder. In
    the folder ``results_folder`` chose for other weights of the same name (``final-<fp>``),
    the name is that folder's, so that MTEB's loaders, which key on the name, keep them apart.
    A variant's (another backend or dtype, or its vectors compressed: ``compression``) records
    MTEB's ``experiment_kwargs``."""
    out = meta.to_dict()
    name = results_name(meta)
    out["name"] = name
    variant: dict[str, str | int] = {**experiment_kwargs(meta.framework, precision)}
    if compression is not None:
        variant = {**variant, **compression.kwargs()}
    if variant:
        out["experiment_kwargs"] = variant
    if folder is not None and variant:
        folder = folder.parent.parent  # <revision>/experiments/<name>: the revision folder
    if folder is not None and folder.parent.name != name.replace("/", "__"):
        out["name"] = folder.parent.name
    # MTEB's loaders take the revision from here: a string, as MTEB writes for an unknown one
    out["revision"] = meta.revision or NO_REVISION
    out.update(_openness(meta))
    if Path(meta.source).exists():
        out["source"] = "local:" + Path(meta.source).resolve().name
    else:  # an API's URL: never its password or key (the file is made to be shared)
        out["source"] = public_url(meta.source)
    if weights is not None:
        out["weights"] = weights
    return out


def _openness(meta: ModelMeta) -> dict[str, Any]:
    """MTEB's ``open_weights`` and ``license`` keys, where the run knows them: a model whose
    weights this run loaded has open weights (an API's are not known: none is said), and the
    licence its card's front matter declares (``license:`` in the folder's README.md) is
    recorded as written (``models.card``). The leaderboard's "Open" column reads them."""
    record = backend_of(meta.framework)
    if record is None or record.name == "openai":  # an API's weights, or an Encoder object's
        return {}
    out: dict[str, Any] = {"open_weights": True}
    licence = card_licence(meta.source)
    if licence is not None:
        out["license"] = licence
    return out


def results_folder(
    output_dir: Path,
    meta: ModelMeta,
    weights: str | None,
    log: Log,
    experiment: str | None = None,
    aliases: tuple[str, ...] = (),
) -> Path:
    """Where the model's results go (``results.model_folder.weights_folder``): the folder of
    its name and revision (and ``experiments/<experiment>`` below it for another backend or
    dtype of the model); for local weights or an API model's declared identity, one that holds
    no other weights' results (``<name>-<fingerprint>`` where the plain one does), so two
    models' scores never mix. ``aliases``: earlier labels of these weights (an API model's)."""
    name = results_name(meta)
    return weights_folder(
        output_dir, name, meta.revision, meta.source, weights, log, experiment, aliases
    )


def variant_reports(
    encoder: Encoder,
    variant: ModelVariant,
    out_dir: Path,
    report: RunReport,
    dims: Sequence[int],
    precisions: Sequence[str],
) -> dict[Compression, tuple[Path, RunReport]]:
    """Each variant the run scores (``costs.variants``: a dimension above the model's is
    refused here, once its dimension is known), with its folder — MTEB's
    ``<revision>/experiments/<name>/``, the name from the variant's ``experiment_kwargs`` with
    any of the run's own (its backend, its dtype) — and its report, kept in ``report``."""
    revision = out_dir.parent.parent if out_dir.parent.name == EXPERIMENTS else out_dir
    base = variant.experiment_kwargs(encoder.meta.framework)
    out = {}
    hybrids = [Compression(hybrid=variant.hybrid)] if variant.hybrid else []
    for one in (*variants(dims, precisions, encoder.meta.embedding_dim), *hybrids):
        name = experiment_name({**base, **one.kwargs()})
        its = RunReport(results_dir=revision / EXPERIMENTS / name, run_id=report.run_id)
        if one.hybrid is not None:
            its.task_types = RANKED_TYPES
        report.variants[name] = its
        out[one] = (its.results_dir, its)
    return out
