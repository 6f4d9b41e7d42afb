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

import contextlib
import os
import secrets
import socket
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from chemteb_eval.errors import ChemtebError, require_extra

__all__ = [
    "RankRefused",
    "add_up",
    "check_data",
    "check_shared",
    "distributed_state",
    "finish",
    "gather_numbers",
    "main_list",
    "owner",
    "share",
]


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
    return [k for k in keys if owner(k, world) == rank]


def _where() -> str:
    return f"rank {os.environ.get('RANK', '?')} on {socket.gethostname()}"


class RankRefused(ChemtebError):
    """A start check every rank fails alike: ``said`` is False on a rank that is not named in
    it (rank 0 and the ranks at fault say it; the others stay quiet: one line a culprit)."""

    def __init__(self, message: str, said: bool) -> None:
        super().__init__(message)
        self.said = said


@contextlib.contextmanager
def _meeting(what: str) -> Iterator[None]:
    """A collective call whose other side left (a rank that failed or was killed): one line,
    not gloo's traceback."""
    try:
        yield
    except RuntimeError as exc:
        if isinstance(exc, ChemtebError):
            raise
        raise ChemtebError(
            f"{what}: another rank left the run ({str(exc).splitlines()[0][:120]}); its own "
            "line and torchrun's report say why. What was committed is kept: run again."
        ) from None


def check_shared(state: Any, folder: Path | None, read_only: bool, agree: str = "") -> None:
    """Every rank's cache must be one folder, keyed alike and writable, and every rank must
    run the same tasks and settings (``agree``: a digest of them), or the ranks' vectors never
    meet: raises ``RankRefused`` on every rank, naming the ranks at fault and what differs (a
    node whose ``CHEMTEB_CACHE`` is a local disk, another ``-t``, ``--no-cache``), before
    anything is encoded.

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
        with _meeting("the ranks' start"):
            dist.broadcast_object_list(token, src=0)
            seen = folder is not None and (folder / f"ranks.{token[0]}.check").is_file()
            path = str(folder) if folder is not None else None
            mine = (_where(), path, seen, read_only, agree)
            every: list[Any] = [None] * state.num_processes
            dist.all_gather_object(every, mine)
    finally:  # (a rank 0 killed here leaves it: the cache's next opener removes it, aged)
        if mark is not None:
            mark.unlink(missing_ok=True)
    message, culprits = _refusal(every)
    if message:
        me = every[state.process_index][0]
        own = folder is not None and (not seen or folder.name != Path(every[0][1] or "").name)
        if me in culprits and own and folder is not None:
            with contextlib.suppress(OSError):  # this rank's own folder, made for nothing
                folder.rmdir()
        # the ranks at fault say it, but where all are (the same command everywhere), rank 0
        alone = me in culprits and len(culprits) < len(every)
        raise RankRefused(message, said=state.is_main_process or alone)


def _refusal(every: list[Any]) -> tuple[str, list[str]]:
    """What is wrong among the ranks' reports, and which ranks are at fault ("" if nothing)."""
    where, first, _, _, agree = every[0]
    without = [w for w, p, _, _, _ in every if p is None]
    if without:
        return (
            f"{', '.join(without)}: no embedding cache (--no-cache); under torchrun the ranks "
            "hand their vectors over through it. Run every rank without --no-cache, with "
            "CHEMTEB_CACHE on a folder all of them can write."
        ), without
    name = Path(first).name
    keyed = [w for w, p, _, _, _ in every if Path(p).name != name]
    if keyed:
        return (
            f"{', '.join(keyed)}: the model's vectors keyed otherwise than on rank 0 ({name}): "
            "other library versions, another CPU/GPU kernel set (ONEDNN_MAX_CPU_ISA, another "
            "CPU) or another precision give other bits; run every rank in one environment on "
            "one kind of machine, with the same command."
        ), keyed
    other = [w for w, _, _, _, a in every if a != agree]
    if other:
        return (
            f"{', '.join(other)}: another command than rank 0's (-t, -b, --batch-size, --dims, "
            "--overwrite, ...): run the same command on every node."
        ), other
    locked = [w for w, _, _, r, _ in every if r]
    if locked:
        return (
            f"{', '.join(locked)}: the embedding cache folder {first} cannot be written there; "
            "every rank commits its own blocks: give them a folder they can write (CHEMTEB_CACHE)."
        ), locked
    apart = [w for w, _, s, _, _ in every if not s]
    if apart:
        return (
            f"{', '.join(apart)}: rank 0's embedding cache folder ({first}, on "
            f"{where.split(' on ', 1)[1]}) is not there; each node would encode alone. Set "
            "CHEMTEB_CACHE on every node to one shared folder (NFS, Lustre, a mounted volume); "
            "see docs/running.md#several-gpus-and-several-machines."
        ), apart
    return "", []


def check_data(state: Any, identities: Mapping[str, str]) -> None:
    """Every rank must have loaded the same data as rank 0 (``identities``: each loaded task's
    data identity), or its share would be of other texts (a task file or ``--data-path`` of
    other contents on one node, another ``--pipchem-scale``, a task that failed to load there):
    raises ``RankRefused`` naming the ranks and the tasks, before anything is encoded."""
    import torch.distributed as dist

    every: list[Any] = [None] * state.num_processes
    with _meeting("the ranks' data"):
        dist.all_gather_object(every, (_where(), dict(identities)))
    first = every[0][1]
    apart, culprits = [], []
    for where, mine in every[1:]:
        tasks = sorted(t for t in first.keys() | mine.keys() if first.get(t) != mine.get(t))
        if tasks:
            said = [t + (" (not loaded there)" if t not in mine else "") for t in tasks[:5]]
            apart.append(f"{where}: other data than rank 0's for {', '.join(said)}")
            culprits.append(where)
    if apart:
        culprit = every[state.process_index][0] in culprits  # by name: rank 1 is not rank 10
        message = "; ".join(apart) + (
            " (a task file or --data-path of other contents, another --pipchem-scale, a "
            "load that failed there: its own run says why). Give every node the same data."
        )
        raise RankRefused(message, said=state.is_main_process or culprit)


def main_list(state: Any, names: list[str]) -> list[str]:
    """Rank 0's ``names`` on every rank (a plan's task names: a few strings, never vectors)."""
    import torch.distributed as dist

    box: list[Any] = [list(names) if state.is_main_process else None]
    with _meeting("the ranks' plan"):
        dist.broadcast_object_list(box, src=0)
    return [str(n) for n in box[0]]


def gather_numbers(state: Any, numbers: Mapping[str, float]) -> list[dict[str, float]]:
    """Every rank's ``numbers`` (a few counts: never vectors), in rank order, on every rank."""
    import torch.distributed as dist

    every: list[Any] = [None] * state.num_processes
    with _meeting("the ranks' end"):
        dist.all_gather_object(every, dict(numbers))
    return [dict(n) for n in every]


def add_up(state: Any, stats: Any) -> int:
    """Every rank's ``stats`` (an ``EncodeStats``) into each rank's: the texts and tokens
    summed, the slowest rank's seconds (the run's throughput); returns the world size."""
    mine = {"encoded": stats.encoded, "seconds": stats.seconds}
    if stats.tokens is not None:
        mine["tokens"] = stats.tokens
    every = gather_numbers(state, mine)
    stats.encoded = int(sum(n["encoded"] for n in every))
    stats.seconds = max(n["seconds"] for n in every)
    tokens = [n["tokens"] for n in every if "tokens" in n]
    stats.tokens = int(sum(tokens)) if tokens else None
    return len(every)


def finish(state: Any) -> None:
    """Wait for every rank, then close the process group.

    A rank that exits with its gloo group still open can abort in the group's destructor
    ("terminate called without an active exception").
    """
    import torch.distributed as dist

    if dist.is_initialized():
        with _meeting("the ranks' end"):
            state.wait_for_everyone()
        dist.destroy_process_group()
