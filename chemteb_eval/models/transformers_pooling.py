"""Plain ``transformers`` encoders with mean or CLS pooling (BERT-family models such as SciBERT,
MatSciBERT or ChemicalBERT, which ship no sentence-transformers config)."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from ._source import hub_access, load_error, local_folder, network_errors
from ._threads import TOKENIZER_LOCK, one_thread_per_call
from ._tokens import whole_lengths, whole_token_ids
from .backends import Backend, LoadOptions, framework_of
from .base import ModelMeta, Role
from .prompts import convention_prompt
from .sentence_transformers import resolve
from .spec import ModelSpec

# the record of each pooling (its framework keys the embedding cache)
_BACKENDS: dict[str, Backend] = {"mean": "transformers", "cls": "transformers-cls"}


class TransformersEncoder:
    """A ``transformers`` model pooled into one vector per text.

    Args:
        name: a Hub id or a local folder.
        pooling: ``mean`` (over non-padding tokens) or ``cls`` (the first token).
        normalize: scale embeddings to unit length.
        max_length: the token limit (default the model's, at most 512).
        device: the torch device.
        revision: a Hub revision to pin.
    """

    @classmethod
    def from_spec(cls, spec: ModelSpec, options: LoadOptions) -> TransformersEncoder:
        """The backend table's loader (``transformers``: mean pooling; ``transformers-cls``)."""
        pooling: Literal["mean", "cls"] = "cls" if spec.backend == "transformers-cls" else "mean"
        return cls(spec.name, pooling=pooling, device=options.device)

    def __init__(
        self,
        name: str,
        *,
        pooling: Literal["mean", "cls"] = "mean",
        normalize: bool = False,
        max_length: int | None = None,
        device: str | None = None,
        revision: str | None = None,
    ) -> None:
        ModelSpec("transformers", name).require()
        if pooling not in ("mean", "cls"):
            raise ValueError(f"pooling: {pooling!r}; use 'mean' or 'cls'.")
        source, known = resolve(name)
        # before torch's import: a Hub model that cannot be had fails now, in one line
        access = hub_access(source, revision=revision)
        import torch
        from transformers import AutoModel, AutoTokenizer

        try:
            only = access.local_only
            with access:
                self.tokenizer: Any = AutoTokenizer.from_pretrained(
                    source, revision=revision, local_files_only=only
                )
                self.model: Any = AutoModel.from_pretrained(
                    source, revision=revision, local_files_only=only
                ).eval()
        except network_errors() as exc:  # not found, not a model folder, the Hub gone
            raise load_error(name, exc) from None
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.model.to(self.device)
        self.pooling = pooling
        self.normalize = normalize
        limit = getattr(self.model.config, "max_position_embeddings", 512) or 512
        self.max_length = min(max_length or limit, limit, 512)
        self.meta = ModelMeta(
            name=folder.name if (folder := local_folder(name)) else name,
            revision=revision or known,
            n_parameters=int(sum(p.numel() for p in self.model.parameters())),
            embedding_dim=int(self.model.config.hidden_size),
            max_tokens=self.max_length,
            framework=framework_of(_BACKENDS[pooling]),
            source=source,
        )

    def prompt(self, task_type: str, role: Role | None) -> str:
        return convention_prompt(self.meta.name, task_type, role)

    @property
    def token_budget(self) -> bool:
        """Batches packed by equal token lengths on a CPU (no padding: a text's vector does not
        depend on its batch); fixed batches on a GPU (as sentence-transformers')."""
        return bool(self.device.type == "cpu")

    def one_thread_per_call(self) -> AbstractContextManager[int]:
        """Where the engine runs its CPU calls: each on one thread, as many at once as torch
        had threads (``models/_threads.py``)."""
        return one_thread_per_call()

    def token_lengths(self, texts: list[str], *, prompt: str) -> list[int]:
        """Tokens the model reads for each text (prompt included, truncated as ``encode``)."""
        with TOKENIZER_LOCK:  # the shared tokenizer's truncation is set per call
            ids = self.tokenizer(
                [prompt + t for t in texts], truncation=True, max_length=self.max_length
            )["input_ids"]
        return [len(x) for x in ids]

    def token_ids(self, texts: list[str]) -> tuple[list[list[int]], int | None, int]:
        """Each text's token ids alone (no prompt, no special tokens), the tokenizer's
        unknown-token id, and how many special tokens the model adds to a text
        (``chemteb inspect --model``: tokens per chemical string)."""
        ids, specials = whole_token_ids(self.tokenizer, texts)
        return ids, self.tokenizer.unk_token_id, specials

    def untruncated_lengths(self, texts: list[str], *, prompt: str) -> list[int]:
        """Tokens each text would take whole (prompt and special tokens included): above
        ``meta.max_tokens``, ``encode`` reads only the first ``max_tokens``."""
        return whole_lengths(self.tokenizer, [prompt + t for t in texts])

    def encode(self, texts: list[str], *, prompt: str, batch_size: int) -> NDArray[np.float32]:
        import torch

        out = []
        with torch.inference_mode():
            for start in range(0, len(texts), batch_size):
                batch = [prompt + t for t in texts[start : start + batch_size]]
                with TOKENIZER_LOCK:  # calls run side by side (one_thread_per_call)
                    enc = self.tokenizer(
                        batch,
                        padding=True,
                        truncation=True,
                        max_length=self.max_length,
                        return_tensors="pt",
                    )
                enc = {k: v.to(self.device) for k, v in enc.items()}
                hidden = self.model(**enc).last_hidden_state
                if self.pooling == "cls":
                    pooled = hidden[:, 0]
                else:
                    mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                if self.normalize:
                    pooled = torch.nn.functional.normalize(pooled, dim=-1)
                out.append(pooled.float().cpu().numpy())
        return np.vstack(out) if out else np.zeros((0, self.meta.embedding_dim), np.float32)
