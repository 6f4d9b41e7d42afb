"""The encode stage: the texts every loaded task needs embedded, each unique (prompt, text)
encoded once through the engine (``prefetch``), the embedding cache the model's vectors are kept
in (``open_cache``: keyed by the model and its variant), and a group of texts read back
(``Spill``: a large one through a file)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from chemteb_eval.data.types import TaskData
from chemteb_eval.engine import EmbeddingCache, EmbeddingEngine
from chemteb_eval.engine.cache import text_key
from chemteb_eval.engine.encode import SPILL_ROWS
from chemteb_eval.models._kernels import encoder_device
from chemteb_eval.models.backends import cache_variant, vector_software
from chemteb_eval.models.base import Encoder, Role
from chemteb_eval.models.variant import ModelVariant
from chemteb_eval.tasks import Task

from .kinds import split_texts
from .values import Plan

__all__ = [
    "Spill",
    "cache_identity",
    "open_cache",
    "prefetch",
    "requests",
    "task_keys",
    "task_prompt",
]


def task_prompt(encoder: Encoder, task: Task, role: Role | None) -> str:
    """The prompt of one side of a task: the task's own (a task file's ``prompts``), else the
    model's convention for the type and role (``role`` None: a symmetric task's texts)."""
    if role is not None and role in task.prompts:  # the task's own, even '' (no prompt)
        return task.prompts[role]
    return encoder.prompt(task.type, role)


def requests(
    encoder: Encoder, tasks: dict[str, Task], loaded: dict[str, TaskData]
) -> Iterator[tuple[str, str]]:
    """Every (prompt, text) the loaded tasks need embedded (duplicates included)."""
    for name, data in loaded.items():
        for by_split in data.values():
            for split_data in by_split.values():
                for texts, role in split_texts(split_data).values():
                    prompt = task_prompt(encoder, tasks[name], role)
                    for text in texts:
                        yield prompt, text


def prefetch(
    engine: EmbeddingEngine, encoder: Encoder, plan: Plan, loaded: dict[str, TaskData]
) -> None:
    """Encode every text the loaded tasks need: all at once where a text's vector does not
    depend on its batch (``engine.batch_invariant``), else task by task in the plan's order, so
    that a task's texts share batches only with each other (what the task alone would do; a
    text another task encoded first is still served from the cache). Under torchrun each rank
    encodes its share of each, and all meet once at the end."""
    tasks = {t.name: t for t in plan.tasks}
    if engine.batch_invariant:
        engine.prefetch(requests(encoder, tasks, loaded))
    else:
        for task in plan.tasks:
            if task.name in loaded:
                engine.prefetch(requests(encoder, tasks, {task.name: loaded[task.name]}))
    engine.finish_ranks()  # torchrun: the run's one barrier, every rank's blocks committed


def task_keys(encoder: Encoder, task: Task, data: TaskData) -> set[str]:
    """The cache keys of every (prompt, text) a task has embedded."""
    return {
        text_key(task_prompt(encoder, task, role), text)
        for by_split in data.values()
        for split_data in by_split.values()
        for texts, role in split_texts(split_data).values()
        for text in texts
    }


class Spill:
    """Vectors of a large group of texts (over ``SPILL_ROWS``: a big retrieval corpus) go to
    a temporary ``.npy`` file, gathered block by block, so the runner never holds a corpus's
    vectors at once; the file goes when the task is scored."""

    def __init__(self) -> None:
        self.folder: tempfile.TemporaryDirectory[str] | None = None

    def __enter__(self) -> Spill:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.folder is not None:
            self.folder.cleanup()

    def embed(self, engine: EmbeddingEngine, texts: list[str], prompt: str) -> Any:
        if len(texts) <= SPILL_ROWS:
            return engine.embed(texts, prompt)
        if self.folder is None:
            self.folder = tempfile.TemporaryDirectory(prefix="chemteb-vectors-")
        path = Path(self.folder.name) / f"{len(list(Path(self.folder.name).iterdir()))}.npy"
        return engine.embed_to_file(texts, prompt, path)


def cache_identity(encoder: Encoder, precision: str, weights: str | None = None) -> dict[str, Any]:
    """What keys the model's embedding cache file. Vectors that other code computes for the same
    model name — ONNX Runtime (1e-7 away), its int8 export (1e-2), transformers' mean or CLS
    pooling, fp16/bf16 — get a file of their own: the variant is the backend record's
    (``models.backends.cache_variant``). ``open_cache`` adds the versions of what computes the
    vectors."""
    meta = encoder.meta
    api = weights is not None and weights.startswith("api:")  # the label holds its revision
    return {
        "model": meta.name,
        "revision": None if api else meta.revision,
        "source": meta.source,
        "variant": cache_variant(meta.framework, precision),
        # a text with no known word has no vector (an all-NaN row) for word-vector models only
        "nan_rows": bool(getattr(encoder, "no_vector_rows", False)),
        # computed once per run (``local_weights``): the value the cache would compute itself
        "fingerprint": weights,
    }


def open_cache(
    folder: Path | None, encoder: Encoder, variant: ModelVariant, weights: str | None
) -> EmbeddingCache | None:
    """The model's embedding cache in ``folder`` (``None``: the run keeps none), keyed by
    ``cache_identity``. Opened before any work: a damaged cache stops the run there."""
    if folder is None:
        return None
    # the versions of what computes a local model's vectors (torch, transformers, tokenizers...:
    # a new kernel may round otherwise) and the kernel set that runs them (another CPU's
    # instruction set rounds otherwise: models._kernels) are part of the key: after an upgrade
    # or on another CPU the vectors are computed anew, the old ones stay in their own folder
    # (said in one line by the cache); none for an API (its server computes)
    software = vector_software(encoder.meta.framework, encoder_device(encoder))
    return EmbeddingCache(
        folder, **cache_identity(encoder, variant.precision, weights), software=software
    )
