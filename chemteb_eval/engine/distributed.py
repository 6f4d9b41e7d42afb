"""Sharding encoding over processes started by ``torchrun`` or ``accelerate launch``.

Every rank computes the same list of texts still to encode; each block of that list is split
between the processes with accelerate's ``split_between_processes`` over (index, key) pairs,
encoded, and gathered to the main process only (``torch.distributed.gather_object`` with
``dst=0``: no rank receives the others' vectors), which puts them back in index order and
stores them. Facts from our checks: accelerate's ``apply_padding=True`` + ``gather_object`` +
``[:n]`` recipe returns the wrong order on 3+ processes, which indexing avoids; on a CPU,
``accelerate launch --cpu --num_processes 2`` silently ran one process, so use ``torchrun`` (gloo).
"""

from __future__ import annotations

import os
from typing import Any

from chemteb_eval.errors import require_extra

__all__ = ["distributed_state", "finish", "gather_to_main"]


def distributed_state() -> Any | None:
    """accelerate's ``PartialState`` when launched with several processes, else ``None``."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return None
    require_extra("run", "torch", "accelerate", what="sharded encoding (WORLD_SIZE > 1)")
    import torch
    from accelerate import PartialState

    state = PartialState(cpu=not torch.cuda.is_available())
    return state if state.num_processes > 1 else None


def gather_to_main(state: Any, payload: list[Any]) -> list[Any] | None:
    """Every rank's ``payload`` concatenated on the main process (``None`` elsewhere)."""
    import torch.distributed as dist

    gathered: list[Any] | None = [None] * state.num_processes if state.is_main_process else None
    dist.gather_object(payload, gathered, dst=0)
    if gathered is None:
        return None
    return [item for part in gathered for item in part]


def finish(state: Any) -> None:
    """Wait for every rank, then close the process group.

    Helper ranks leave right after encoding; a rank that exits with its gloo group still open
    can abort in the group's destructor ("terminate called without an active exception").
    """
    import torch.distributed as dist

    state.wait_for_everyone()
    if dist.is_initialized():
        dist.destroy_process_group()
