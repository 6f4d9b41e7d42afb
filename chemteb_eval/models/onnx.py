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
"""

from __future__ import annotations

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

from .fingerprint import model_fingerprint
from .sentence_transformers import DEFAULT_MODEL, SentenceTransformerEncoder
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
    return {"exporter": "dynamo" if dynamo else "torchscript", "max_abs_diff": diff}


def _session(path: Path) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    # Threads = the cores this process may use (ONNX Runtime's default counts physical cores).
    options.intra_op_num_threads = (
        len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    )
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3  # errors only
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _quantized(path: Path) -> Path:
    """``model.int8.onnx`` beside ``path``: int8 dynamic quantisation of the MatMul weights, per
    output channel (made once). Per channel because per tensor moved MiniLM's vectors too far:
    the lowest cosine to torch's over the test texts was 0.835 per tensor, 0.981 per channel."""
    target = path.with_name("model.int8.onnx")
    if target.is_file():
        return target
    from onnxruntime.quantization import QuantType, quantize_dynamic

    tmp = path.with_name(f".model.int8.{os.getpid()}.onnx")
    root = logging.getLogger()  # onnxruntime advises "pre-processing" on the root logger
    level = root.level
    try:
        root.setLevel(logging.ERROR)
        with contextlib.redirect_stdout(io.StringIO()):
            quantize_dynamic(
                str(path),
                str(tmp),
                weight_type=QuantType.QInt8,
                per_channel=True,
                op_types_to_quantize=["MatMul"],
            )
        os.replace(tmp, target)
    finally:
        root.setLevel(level)
        tmp.unlink(missing_ok=True)
    return target


class OnnxEncoder(SentenceTransformerEncoder):
    """A sentence-transformers model with its transformer in ONNX Runtime (CPU).

    Args:
        name: a Hub id or a local folder (as for the torch backend).
        quantize: run the int8 dynamically quantised export (faster, scores move slightly).
        revision: a Hub revision to pin.
        folder: where exports are kept (default ``export_dir()``).
        log: where the one-time export message goes.

    Raises:
        OnnxUnsupported: the model cannot be exported (the message says why).
    """

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
        first, names = _check_structure(self.model)
        target = self._target(Path(folder) if folder is not None else export_dir())
        if not (target / "export.json").is_file():
            log(f"exporting {self.meta.name} to ONNX (once per model revision) into {target}")
            self._export_into(target, names)
        path = target / "model.onnx"
        if quantize:
            path = _quantized(path)
        session = _session(path)
        self._patch(first, session, names)
        framework = "onnxruntime-int8" if quantize else "onnxruntime"
        self.meta = replace(self.meta, framework=framework)
        self.export = target

    def _target(self, root: Path) -> Path:
        import torch

        weights = self.meta.revision or model_fingerprint(self.meta.source) or self.meta.source
        key = json.dumps([EXPORT_VERSION, self.meta.source, weights, torch.__version__])
        safe = "".join(c if c.isalnum() or c in "-." else "_" for c in self.meta.name)[-60:]
        return root / f"{safe}-{hashlib.sha256(key.encode()).hexdigest()[:16]}"

    def _export_into(self, target: Path, names: tuple[str, ...]) -> None:
        # Exported into a temporary folder renamed into place: a killed export or two runs
        # exporting at once never leave a half-written model behind.
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
        try:
            facts = _export(self.model, tmp, names)
            facts.update(inputs=list(names), model=self.meta.name, source=self.meta.source)
            (tmp / "export.json").write_text(json.dumps(facts, indent=2) + "\n")
            try:
                tmp.rename(target)
            except OSError:
                if not (target / "export.json").is_file():
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    @staticmethod
    def _patch(first: Any, session: Any, names: tuple[str, ...]) -> None:
        """Make the transformer module's forward call ONNX Runtime (an instance attribute wins
        over the class's ``forward`` in ``nn.Module.__call__``)."""
        import torch

        def forward(features: dict[str, Any], **_: Any) -> dict[str, Any]:
            feeds = {n: features[n].detach().cpu().numpy().astype(np.int64) for n in names}
            (out,) = session.run(["token_embeddings"], feeds)
            features["token_embeddings"] = torch.from_numpy(out)
            return features

        first.forward = forward
