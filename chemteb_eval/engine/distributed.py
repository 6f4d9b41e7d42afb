"""Encoding on several processes started by ``torchrun`` or ``accelerate launch``: no lock-step,
no funnel.

The share rule: a text belongs to rank ``int(key[:16], 16) % world_size``, where ``key`` is its
cache key (``cache.text_key``: the SHA-256 of prompt and text). It depends on the key and the
world size only, so every rank knows its share without asking the others, and a rank that looks
at the cache a little later than another (its todo list shorter) still takes exactly its own
keys. Each rank encodes its share at its own pace, in its own length-sorted batches, and
commits its own blocks to the one cache folder (each block one ``os.link``: writers on other
nodes, or sharing a process id in containers, never overwrite each other). No vector passes
through another rank's memory; the ranks meet twice: at the start (is the cache folder one
folder for all of them, keyed alike?) and at the end (a barrier, then a few numbers each: how
many texts it encoded and how long it took). The main process then scores from the cache.

Why a hash and not the old split of each block: on a CPU a vector does not depend on its batch
(``_batches``: equal-length calls on one thread), so the vectors are bit-identical at any world
size; the old split gathered every block to rank 0 through ``gather_object`` (pickled vectors)
and made the ranks wait for each other once a block. On a GPU a vector depends on its batch's
shape a little, as it does with another batch size. Facts from our checks: on a CPU,
``accelerate launch --cpu --num_processes 2`` silently ran one process, so use ``torchrun``
(gloo).
"""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from chemteb_eval.errors import ChemtebError, require_extra

__all__ = ["check_shared", "distributed_state", "finish", "gather_numbers", "owner", "share"]


def distributed_state() -> Any | None:
    """accelerate's ``PartialState`` when launched with several processes, else ``None``."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return None
    require_extra("run", "torch", "accelerate", what="sharded encoding (WORLD_SIZE > 1)")
    import torch
    from accelerate import PartialState

    state = PartialState(cpu=not torch.cuda.is_available())
    return state if state.num_processes > 1 else None


def owner(key: str, world: int) -> int:
    """The rank that encodes ``key`` (a cache key: 64 hex digits) among ``world`` ranks."""
    return int(key[:16], 16) % world


def share(keys: Sequence[str], world: int, rank: int) -> list[str]:
    """The keys of ``keys`` that rank ``rank`` of ``world`` encodes, in their order."""
    return [k for k in keys if int(k[:16], 16) % world == rank]


def _where() -> str:
    return f"rank {os.environ.get('RANK', '?')} on {socket.gethostname()}"


def check_shared(state: Any, folder: Path | None, read_only: bool) -> None:
    """Every rank's cache must be one folder, keyed alike and writable, or the ranks' vectors
    never meet: raises ``ChemtebError`` on every rank, naming the ranks whose folder is not
    rank 0's (a node whose ``CHEMTEB_CACHE`` is a local disk), before anything is encoded.

    Rank 0 leaves a file of a fresh random name in its folder; each rank looks for it in its
    own. Collective: every rank calls it at the same point."""
    import torch.distributed as dist

    token = [secrets.token_hex(8) if state.is_main_process else None]
    mark = folder / f"ranks.{token[0]}.check" if folder is not None and token[0] else None
    if mark is not None and not read_only:
        try:
            mark.touch()
        except OSError:
            mark = None
    try:
        dist.broadcast_object_list(token, src=0)
        name = folder.name if folder is not None else None
        seen = folder is not None and (folder / f"ranks.{token[0]}.check").is_file()
        mine = (_where(), name, seen, read_only)
        every: list[Any] = [None] * state.num_processes
        dist.all_gather_object(every, mine)
    finally:  # (a rank 0 killed here leaves it: the cache's next opener removes it, aged)
        if mark is not None:
            mark.unlink(missing_ok=True)
    first = every[0][1]
    if first is None:
        raise ChemtebError(
            "sharded encoding hands the ranks' vectors over through the embedding cache: run "
            "without --no-cache, with CHEMTEB_CACHE on a folder every rank can write."
        )
    keyed = [w for w, n, _, _ in every if n != first]
    if keyed:
        raise ChemtebError(
            f"{', '.join(keyed)} key the model's vectors as another cache than rank 0 "
            f"({first}): other library versions or another CPU/GPU kernel set give other "
            "bits; run every rank in one environment on one kind of machine."
        )
    locked = [w for w, _, _, r in every if r]
    if locked:
        raise ChemtebError(
            f"{', '.join(locked)} cannot write the embedding cache folder {first}: every rank "
            "commits its own blocks; give them a folder they can write (CHEMTEB_CACHE)."
        )

    apart = [w for w, _, s, _ in every if not s]
    if apart:
        raise ChemtebError(
            f"{', '.join(apart)} cannot see rank 0's embedding cache folder ({first}): each "
            "node would encode alone. Set CHEMTEB_CACHE on every node to one shared folder "
            "(NFS, Lustre, a mounted volume); see docs/running.md#several-machines."
        )


def gather_numbers(state: Any, numbers: Mapping[str, float]) -> list[dict[str, float]]:
    """Every rank's ``numbers`` (a few counts: never vectors), in rank order, on every rank."""
    import torch.distributed as dist

    every: list[Any] = [None] * state.num_processes
    dist.all_gather_object(every, dict(numbers))
    return [dict(n) for n in every]


def finish(state: Any) -> None:
    """Wait for every rank, then close the process group.

    A rank that exits with its gloo group still open can abort in the group's destructor
    ("terminate called without an active exception").
    """
    import torch.distributed as dist

    if dist.is_initialized():
        state.wait_for_everyone()
        dist.destroy_process_group()
