"""The encoder protocol: texts (with a prompt) in, a float32 matrix out; and the batch size
every caller of ``encode`` starts from."""

from __future__ import annotations

import re
from dataclasses import dataclass
from numbers import Integral
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:  # numpy only in annotations: the CLI imports this module for its help
    import numpy as np
    from numpy.typing import NDArray

Role = Literal["query", "document"]

# Texts per model call, unless told: the runner, the CLI's --batch-size, the engine, the score
# context and the NER word embedder all start from it.
DEFAULT_BATCH_SIZE = 32


_DEVICE = re.compile(r"cpu|mps|(?:cuda|xpu)(?::\d{1,3})?")


def check_device(device: object) -> str | None:
    """``device`` (``cpu``, ``cuda``, ``cuda:N``, ``mps``, ``xpu``) when this machine has it;
    ``ValueError`` naming ``device`` otherwise — before minutes of model loading, not a torch
    traceback after them. ``None``: the backend's choice."""
    if device is None:
        return None
    if not isinstance(device, str) or not _DEVICE.fullmatch(device):
        raise ValueError(f"device: {device!r}; use cpu, cuda, cuda:N, mps or xpu.")
    if device.startswith("cuda"):
        try:
            import torch
        except ImportError:  # the core install: the backend's missing extra is said later
            return device
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        index = int(device.partition(":")[2] or 0)
        if index >= count:
            have = f"{count} CUDA GPU(s)" if count else "no CUDA GPU torch can use"
            raise ValueError(f"device: {device}: this machine has {have}; use cpu or cuda:0.")
    elif device.startswith(("mps", "xpu")):
        _check_accelerator(device)
    return device


def _check_accelerator(device: str) -> None:
    """Apple's Metal (``mps``) or Intel's GPUs (``xpu``, ``xpu:N``) as torch sees them."""
    try:
        import torch
    except ImportError:
        return
    kind = device.partition(":")[0]
    backend = getattr(torch.backends, "mps", None) if kind == "mps" else getattr(torch, "xpu", None)
    available = bool(backend is not None and backend.is_available())
    count = 1 if kind == "mps" else (torch.xpu.device_count() if available else 0)
    if not available or int(device.partition(":")[2] or 0) >= count:
        name = "Apple Metal (mps)" if kind == "mps" else "Intel GPU (xpu)"
        have = f"{count} {name} device(s)" if available else f"no {name} device torch can use"
        raise ValueError(f"device: {device}: this machine has {have}; use cpu.")


MAX_TEXTS_PER_CALL = 1 << 20  # a million texts a call: far past any accelerator's memory


def check_batch_size(value: object) -> int:
    """``value`` when it is a positive whole number of texts; ``ValueError`` naming
    ``batch_size`` otherwise (``True``, ``2.5`` or ``"8"`` are not batch sizes)."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ValueError(f"batch_size: must be a positive whole number, got {value!r}.")
    number = int(value)
    if number < 1:
        raise ValueError(f"batch_size: must be positive, got {value}.")
    if number > MAX_TEXTS_PER_CALL:
        raise ValueError(
            f"batch_size: {value} is more texts than one model call takes; use at most "
            f"{MAX_TEXTS_PER_CALL:,}."
        )
    return number


@dataclass(frozen=True)
class ModelMeta:
    """What a leaderboard shows about a model, and what keys its cached embeddings.

    Args:
        name: the model id (``org/name``) or a local path.
        revision: the model revision (commit), or ``None`` when unknown (a local copy).
        n_parameters: number of parameters, if known.
        embedding_dim: output dimension.
        max_tokens: the longest input the model reads, if known.
        framework: the backend that runs it (``sentence-transformers``, ...).
        source: where the weights were loaded from (a Hub id or a folder).
    """

    name: str
    revision: str | None
    n_parameters: int | None
    embedding_dim: int
    max_tokens: int | None
    framework: str
    source: str

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("name: a model needs a name.")
        if self.embedding_dim < 1:
            raise ValueError(f"embedding_dim: must be positive, got {self.embedding_dim}.")

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "revision": self.revision,
            "n_parameters": self.n_parameters,
            "embedding_dim": self.embedding_dim,
            "max_tokens": self.max_tokens,
            "framework": self.framework,
            "source": self.source,
        }


class Encoder(Protocol):
    """What the engine needs from a model backend.

    Optional attributes the engine reads when a backend has them: ``token_lengths(texts,
    prompt=)`` (token counts: batches by equal length, token statistics),
    ``untruncated_lengths(texts, prompt=)`` (tokens each text would take whole: the runner
    counts the texts cut at ``meta.max_tokens``; a backend without it reports "unknown"), ``token_budget``
    (``False``: fixed batches, as on a GPU), ``batch_invariant`` (``True`` where a text's vector
    never depends on its batch, e.g. static models), ``pipelined`` with ``prepare``/``run``/
    ``to_numpy`` (the GPU path)."""

    meta: ModelMeta

    def prompt(self, task_type: str, role: Role | None) -> str:
        """The text prepended for this task type and role ('' for none)."""
        ...

    def encode(self, texts: list[str], *, prompt: str, batch_size: int) -> NDArray[np.float32]:
        """Embeddings of ``texts`` (each prefixed by ``prompt``), one float32 row per text."""
        ...
