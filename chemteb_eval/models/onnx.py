"""A sentence-transformers model whose transformer runs in ONNX Runtime on CPU (``onnx:MODEL``,
``onnx-int8:MODEL``).

Why not sentence-transformers' own ``backend="onnx"``: it exports through ``optimum-onnx``, which
pins transformers below 5, and this project needs transformers 5. So the transformer is exported
here with ``torch.onnx.export`` and run with ``onnxruntime.InferenceSession``.

Only the transformer's forward pass — nearly all of the time — changes hands: the
``SentenceTransformer`` object stays, so tokenisation (truncation at the model's maximum), prompts,
length sorting, pooling (mean, CLS, last token, prompt exclusion), Dense layers and normalisation
are its own code, the same as the torch backend's by construction. The export is checked against
torch on sample texts (largest difference at most 1e-4, else the model is not exported) and kept
in the cache folder, one per model revision (or fingerprint of its files) and torch version,
written atomically; int8 dynamic quantisation (``onnx-int8:``) is a second file beside it, never
the default. A model that cannot be exported raises ``OnnxUnsupported``; ``load_encoder`` then
runs it with torch and says why in one line.

The cache is checked, not trusted: an export whose files are not the sizes ``export.json``
recorded, or that ONNX Runtime cannot load (a truncated ``model.onnx``), is exported again; a
cache folder that cannot be written (read-only, or a file) gives one line and a temporary folder
for the run; every intermediate file is per process, moved into place with ``os.replace``.

int8 runs each text alone. Dynamic quantisation computes its activation scales per call, over
the whole padded batch, so batched int8 made a text's vector depend on its batch-mates
(PipChemWikiFieldClustering 0.4827-0.5856 with the batch size and the run's other tasks, vectors
up to 0.03 apart); alone, a text's vector is the same in any batch (that clustering: 0.470173 at
batch sizes 1, 8, 32 and 64), at about the same speed (no padding to quantise: within 10% of
batched int8 on 1,500 PipChem texts, 2 cores; faster on short texts).
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import io
import json
import logging
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from chemteb_eval._env import cache_root
from chemteb_eval.errors import MissingExtraError

from .backends import DEFAULT_MODEL, LoadOptions, framework_of
from .fingerprint import model_fingerprint
from .sentence_transformers import SentenceTransformerEncoder
from .spec import ModelSpec

__all__ = ["EXPORT_VERSION", "OnnxEncoder", "OnnxUnsupported", "export_dir"]

# Bumped when the export recipe changes, so old exports are not reused.
EXPORT_VERSION = 1
# The export is refused when ONNX Runtime and torch differ by more than this on sample texts
# (float32 exports of MiniLM differ by ~1e-6).
_MAX_EXPORT_DIFF = 1e-4
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_SAMPLES = [
    "CC(=O)OC1=CC=CC=C1C(=O)O",
    "Acetylsalicylic acid is a nonsteroidal anti-inflammatory drug used to reduce pain.",
    "benzene",
]


class OnnxUnsupported(RuntimeError):
    """This model cannot run on the ONNX backend; the message says why (torch runs it)."""


def export_dir() -> Path:
    """Where exports are kept: ``$CHEMTEB_ONNX_DIR``, else ``$CHEMTEB_CACHE/onnx`` (default
    ``~/.cache/chemteb/onnx``)."""
    env = os.environ.get("CHEMTEB_ONNX_DIR")
    return Path(env) if env else cache_root() / "onnx"


def _forward_module(model: Any) -> Any:
    """The transformer's forward pass as a function of tensors, for the exporter."""
    import torch

    class Forward(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any = None) -> Any:
            extra = {} if token_type_ids is None else {"token_type_ids": token_type_ids}
            out = self.model(input_ids=input_ids, attention_mask=attention_mask, **extra)
            return out.last_hidden_state

    return Forward().eval()


def _check_structure(st: Any) -> tuple[Any, tuple[str, ...]]:
    """The first module and its input names, or ``OnnxUnsupported``."""
    first = st[0]
    if type(first).__name__ != "Transformer" or not hasattr(first, "model"):
        raise OnnxUnsupported(f"its first module is {type(first).__name__}, not a Transformer")
    if getattr(first, "module_output_name", "token_embeddings") != "token_embeddings":
        raise OnnxUnsupported(f"its transformer outputs {first.module_output_name}")
    if getattr(first.model.config, "is_encoder_decoder", False):
        raise OnnxUnsupported("it is an encoder-decoder model")
    sample = st.preprocess(_SAMPLES)
    names = tuple(n for n in _INPUTS if n in sample)
    if names[:2] != _INPUTS[:2] or set(sample) - {*names, "modality", "prompt_length"}:
        raise OnnxUnsupported(f"its inputs are {sorted(sample)}, not token ids and masks")
    return first, names


def _export(st: Any, folder: Path, names: tuple[str, ...]) -> dict[str, Any]:
    """Write ``model.onnx`` into ``folder`` and check it against torch on the sample texts."""
    import torch

    sample = st.preprocess(_SAMPLES)
    args = tuple(sample[n] for n in names)
    module = _forward_module(st[0].model)
    path = folder / "model.onnx"
    axes = {n: {0: "batch", 1: "sequence"} for n in (*names, "token_embeddings")}
    # The TorchScript exporter (1.5 s for MiniLM, one file) first; torch's newer dynamo exporter
    # (7 s, needs onnxscript) if it is gone or fails on this model.
    errors = []
    for dynamo in (False, True):
        try:
            with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
                warnings.simplefilter("ignore")
                kwargs: dict[str, Any] = {"dynamic_axes": axes} if not dynamo else {}
                if dynamo:
                    dim = {0: torch.export.Dim("batch"), 1: torch.export.Dim("sequence")}
                    kwargs["dynamic_shapes"] = {n: dim for n in names}
                torch.onnx.export(
                    module,
                    args,
                    str(path),
                    input_names=list(names),
                    output_names=["token_embeddings"],
                    opset_version=17,
                    dynamo=dynamo,
                    **kwargs,
                )
            break
        except Exception as exc:  # the exporters raise many types; each is a reason to go on
            errors.append(f"{'dynamo' if dynamo else 'torchscript'}: {type(exc).__name__}: {exc}")
            for leftover in folder.iterdir():
                leftover.unlink()
    else:
        raise OnnxUnsupported("export failed (" + "; ".join(e[:200] for e in errors) + ")")
    with torch.inference_mode():
        expected = module(*args).float().numpy()
    got = _session(path).run(
        ["token_embeddings"], {n: t.numpy() for n, t in zip(names, args, strict=True)}
    )[0]
    diff = float(np.max(np.abs(got - expected)))
    if not diff <= _MAX_EXPORT_DIFF:
        raise OnnxUnsupported(f"the export differs from torch by {diff:.1e} (> {_MAX_EXPORT_DIFF})")
    # The sizes written, so that a later run can tell a truncated or missing file (_export_problem).
    files = {f.name: f.stat().st_size for f in sorted(folder.iterdir()) if f.is_file()}
    return {"exporter": "dynamo" if dynamo else "torchscript", "max_abs_diff": diff, "files": files}


def _export_problem(target: Path) -> str | None:
    """Why the export in ``target`` cannot be used, ``None`` when it can: ``absent``, or what is
    wrong with it (export.json unreadable; a file missing, or not the size that was written)."""
    facts_path = target / "export.json"
    if not facts_path.is_file():
        return _ABSENT
    try:
        facts = json.loads(facts_path.read_text(encoding="utf-8"))
        sizes = dict(facts.get("files") or {"model.onnx": None})  # exports before sizes: presence
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        return f"export.json is unreadable ({exc})"
    for name, size in sizes.items():
        path = target / str(name)
        if not path.is_file():
            return f"{name} is missing"
        if size is not None and path.stat().st_size != size:
            return f"{name} has {path.stat().st_size} bytes, not the {size} written"
    return None


_ABSENT = "absent"


def _scratch(parent: Path, prefix: str) -> Path:
    """A new folder of this process's own in ``parent`` (same file system: ``os.replace`` from it
    is atomic). Raises OSError when ``parent`` cannot be written (read-only, or a file)."""
    parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=prefix, dir=parent))


def _discard(folder: Path) -> None:
    """Remove a broken export: renamed aside first, so that a run exporting it again at the same
    time never finds half of it; a folder another run already moved is left to that run."""
    aside = folder.with_name(f".{folder.name}.broken-{os.getpid()}-{os.urandom(4).hex()}")
    try:
        folder.rename(aside)
    except FileNotFoundError:
        return
    shutil.rmtree(aside, ignore_errors=True)


def _temporary_root() -> Path:
    """A folder for this run's exports when the cache cannot be written; removed at exit."""
    root = Path(tempfile.mkdtemp(prefix="chemteb-onnx-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return root


def _why(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _session(path: Path) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    # One thread a call, as torch's (models/_threads.py): the engine runs as many calls at once
    # as there are cores, so a vector's bits never depend on how a product was split.
    options.intra_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3  # errors only
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _quantize(model: Path, out: Path) -> None:
    """Write int8 dynamic quantisation of ``model``'s MatMul weights, per output channel, to
    ``out``. Per channel because per tensor moved MiniLM's vectors too far: the lowest cosine to
    torch's over the test texts was 0.835 per tensor, 0.981 per channel."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # A ModelProto, not the path: given a path, quantize_dynamic writes its shape-inferred copy
    # to a fixed name beside the input (model-inferred.onnx), which two runs at once overwrite
    # and delete under each other; given a ModelProto it uses a temporary folder of its own.
    proto = onnx.load(str(model))
    root = logging.getLogger()  # onnxruntime advises "pre-processing" on the root logger
    level = root.level
    try:
        root.setLevel(logging.ERROR)
        with contextlib.redirect_stdout(io.StringIO()):
            quantize_dynamic(
                proto,
                str(out),
                weight_type=QuantType.QInt8,
                per_channel=True,
                op_types_to_quantize=["MatMul"],
            )
    finally:
        root.setLevel(level)


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:200] if text else ''}"


class OnnxEncoder(SentenceTransformerEncoder):
    """A sentence-transformers model with its transformer in ONNX Runtime (CPU).

    Args:
        name: a Hub id or a local folder (as for the torch backend).
        quantize: run the int8 dynamically quantised export, one text a call (faster, scores
            move slightly; a text's vector does not depend on its batch).
        revision: a Hub revision to pin.
        folder: where exports are kept (default ``export_dir()``).
        log: where the one-time export message goes.

    Raises:
        OnnxUnsupported: the model cannot be exported (the message says why).
    """

    @classmethod
    def from_spec(
        cls, spec: ModelSpec, options: LoadOptions
    ) -> OnnxEncoder | SentenceTransformerEncoder:
        """The backend table's loader (``onnx``, ``onnx-int8``): ONNX Runtime on a CPU in
        float32; a model ONNX cannot export, or a machine without onnxruntime, runs with torch
        instead (``options.log`` says why, and its meta says what ran)."""
        device, precision = options.device, options.precision
        if device not in (None, "cpu") or precision != "float32":
            raise ValueError(
                f"model: {spec} runs on CPU in float32; for {device or precision} use the torch "
                "backend (--backend torch)."
            )
        try:
            return cls(spec.name, quantize=spec.backend == "onnx-int8", log=options.log)
        except (OnnxUnsupported, MissingExtraError) as exc:
            reason = str(exc)
        options.log(f"onnx: {spec.name} runs with torch instead: {reason}")
        return SentenceTransformerEncoder.from_spec(spec, options)

    def __init__(
        self,
        name: str = DEFAULT_MODEL,
        *,
        quantize: bool = False,
        revision: str | None = None,
        folder: str | Path | None = None,
        log: Callable[[str], None] = print,
    ) -> None:
        ModelSpec("onnx", name).require()
        super().__init__(name, device="cpu", revision=revision)
        self._log = log
        first, names = _check_structure(self.model)
        root = Path(folder) if folder is not None else export_dir()
        target = self._ready(self._target(root), names)
        if quantize:
            session = self._int8_session(target / "model.onnx")
        else:
            try:
                session = _session(target / "model.onnx")
            except Exception as exc:  # ONNX Runtime's own types (InvalidProtobuf, Fail, ...)
                problem = f"ONNX Runtime cannot load model.onnx ({_first_line(exc)})"
                target = self._ready(target, names, problem)
                session = _session(target / "model.onnx")
        self._patch(first, session, names, per_text=quantize)
        # "per text": its vectors differ from batched int8's, so it keys a cache of its own.
        framework = framework_of("onnx-int8" if quantize else "onnx")
        self.meta = replace(self.meta, framework=framework)
        self.export = target

    def _target(self, root: Path) -> Path:
        import torch

        weights = self.meta.revision or model_fingerprint(self.meta.source) or self.meta.source
        key = json.dumps([EXPORT_VERSION, self.meta.source, weights, torch.__version__])
        safe = "".join(c if c.isalnum() or c in "-." else "_" for c in self.meta.name)[-60:]
        return root / f"{safe}-{hashlib.sha256(key.encode()).hexdigest()[:16]}"

    def _ready(self, target: Path, names: tuple[str, ...], problem: str | None = None) -> Path:
        """The folder of a usable export: ``target``, exported into now when it is absent or
        broken (``problem``, else what ``_export_problem`` finds); a temporary folder's when the
        cache cannot be written."""
        problem = problem or _export_problem(target)
        if problem is None:
            return target
        try:
            if problem != _ABSENT:
                self._log(f"onnx: the export in {target} is broken ({problem}); exporting again")
                _discard(target)
            scratch = _scratch(target.parent, f".{target.name}-")
        except OSError as exc:
            target, scratch = self._elsewhere(target, exc)
        if problem == _ABSENT:
            self._log(f"exporting {self.meta.name} to ONNX (once per model revision) into {target}")
        self._export_into(scratch, target, names)
        return target

    def _elsewhere(self, target: Path, exc: OSError) -> tuple[Path, Path]:
        """``target``'s name in a temporary folder, and a scratch folder beside it: the cache
        folder cannot be written (read-only, or a file), which is no reason to stop the run."""
        root = _temporary_root()
        self._log(
            f"onnx: cannot write into the export folder {target.parent} ({_why(exc)}); using "
            f"{root} for this run only (set CHEMTEB_ONNX_DIR to a writable folder to keep it)"
        )
        return root / target.name, _scratch(root, f".{target.name}-")

    def _export_into(self, scratch: Path, target: Path, names: tuple[str, ...]) -> None:
        # Exported into a scratch folder renamed into place: a killed export or two runs
        # exporting at once never leave a half-written model behind.
        try:
            facts = _export(self.model, scratch, names)
            facts.update(inputs=list(names), model=self.meta.name, source=self.meta.source)
            (scratch / "export.json").write_text(json.dumps(facts, indent=2) + "\n")
            try:
                scratch.rename(target)
            except OSError:
                if _export_problem(target) is not None:  # not another run's good export
                    raise
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def _int8_session(self, model: Path) -> Any:
        """A session of ``model.int8.onnx`` beside ``model``, made once (again when ONNX Runtime
        cannot load it: a truncated file)."""
        target = model.with_name("model.int8.onnx")
        if target.is_file():
            try:
                return _session(target)
            except Exception as exc:  # ONNX Runtime's own types (InvalidProtobuf, Fail, ...)
                self._log(f"onnx: {target} cannot be loaded ({_first_line(exc)}); quantising again")
        try:
            scratch = _scratch(target.parent, ".model.int8-")
        except OSError as exc:
            target, scratch = self._elsewhere(target, exc)
        try:
            _quantize(model, scratch / target.name)
            os.replace(scratch / target.name, target)  # atomic: a reader sees all or nothing
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return _session(target)

    @staticmethod
    def _patch(first: Any, session: Any, names: tuple[str, ...], *, per_text: bool) -> None:
        """Make the transformer module's forward call ONNX Runtime (an instance attribute wins
        over the class's ``forward`` in ``nn.Module.__call__``); ``per_text``: one text a call."""
        import torch

        def forward(features: dict[str, Any], **_: Any) -> dict[str, Any]:
            feeds = {n: features[n].detach().cpu().numpy().astype(np.int64) for n in names}
            if per_text:
                out = _run_per_text(session, feeds)
            else:
                (out,) = session.run(["token_embeddings"], feeds)
            features["token_embeddings"] = torch.from_numpy(out)
            return features

        first.forward = forward


def _run_per_text(session: Any, feeds: dict[str, Any]) -> Any:
    """The token embeddings of a padded batch, each text run alone on its own tokens (as in a
    batch of one: no padding), so that dynamic quantisation's per-call activation scales see only
    that text. Padding positions are zeros (pooling masks them out)."""
    mask = feeds["attention_mask"]
    out: Any = None
    for i in range(mask.shape[0]):
        keep = np.flatnonzero(mask[i])
        if keep.size == 0:  # no real token (not from a tokenizer): run the row as it is
            keep = np.arange(mask.shape[1])
        row = {n: np.ascontiguousarray(v[i : i + 1, keep]) for n, v in feeds.items()}
        (hidden,) = session.run(["token_embeddings"], row)
        if out is None:
            out = np.zeros((*mask.shape, hidden.shape[-1]), dtype=hidden.dtype)
        out[i, keep] = hidden[0]
    return out
