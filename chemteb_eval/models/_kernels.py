"""Which kernels compute a local model's vectors: the same model, text and library versions give
other bits on another instruction set (a cache filled on an AMD EPYC with AVX2 served on an
Intel Xeon with AMX: 84 of 110 MiniLM vectors differ; PipChemWikiTopicClassification reads
0.728393 on one, 0.728549 on the other). So the kernel set is part of a local model's cache
identity and of every result's ``software`` record, beside the library versions.

On a CPU: the widest instruction set oneDNN dispatches to (what ``ONEDNN_MAX_CPU_ISA`` caps;
ONNX Runtime's MLAS and numpy dispatch on the same CPU flags), from the CPU's flags, and
torch's own CPU capability where torch is loaded. On CUDA: the device's name and compute
capability. Imports nothing: torch is read only where the model already loaded it.
"""

from __future__ import annotations

import os
import platform
import sys

__all__ = ["KERNELS", "encoder_device", "kernel_set"]

# The ``software`` record's entry naming the kernel set (beside "torch", "numpy", ...)
KERNELS = "cpu-kernels"

# oneDNN's CPU ISAs, widest first, each with the CPU flags (as Linux names them) it needs
_ISAS = (
    ("avx512_core_amx", ("amx_tile", "amx_bf16", "amx_int8", "avx512_bf16")),
    ("avx512_core_bf16", ("avx512_bf16", "avx512_vnni", "avx512bw")),
    ("avx512_core_vnni", ("avx512_vnni", "avx512bw", "avx512vl")),
    ("avx512_core", ("avx512f", "avx512bw", "avx512vl", "avx512dq")),
    ("avx2_vnni", ("avx_vnni", "avx2")),
    ("avx2", ("avx2", "fma")),
    ("avx", ("avx",)),
    ("sse41", ("sse4_1",)),
)


def _cpu_flags() -> frozenset[str]:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith(("flags", "Features")):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def _isa(flags: frozenset[str]) -> str:
    found = next((name for name, need in _ISAS if flags.issuperset(need)), None)
    if found is None:
        return platform.machine() or "unknown"
    cap = os.environ.get("ONEDNN_MAX_CPU_ISA", "").strip().lower()
    names = [name for name, _ in _ISAS]
    if cap in names and names.index(cap) > names.index(found):
        return cap  # capped below what the CPU offers
    return found


def kernel_set(device: str | None = None) -> str:
    """The kernel set of a local model's arithmetic on ``device`` (``None``: the CPU): e.g.
    ``avx2; torch AVX2`` or ``cuda NVIDIA H200 (sm_90)``."""
    torch = sys.modules.get("torch")
    if device is not None and device.startswith("cuda") and torch is not None:
        try:
            index = torch.device(device).index
            index = torch.cuda.current_device() if index is None else index
            name = torch.cuda.get_device_name(index)
            major, minor = torch.cuda.get_device_capability(index)
            return f"cuda {name} (sm_{major}{minor})"
        except Exception:  # no CUDA after all: the CPU's
            pass
    out = _isa(_cpu_flags())
    if torch is not None:
        try:
            out += f"; torch {torch.backends.cpu.get_cpu_capability()}"
        except Exception:  # an older torch without it: the flags alone
            pass
    return out


def encoder_device(encoder: object) -> str | None:
    """The device an encoder's model computes on (``cuda:1``, ``cpu``), where it says one
    (``encoder.device`` or its torch model's; a CUDA device without an index is the current
    one); ``None``: not said (the CPU)."""
    for holder in (encoder, getattr(encoder, "model", None)):
        device = getattr(holder, "device", None)
        if isinstance(device, str):
            return device
        if isinstance(getattr(device, "type", None), str):
            index = getattr(device, "index", None)
            if device.type == "cuda" and index is None:  # type: ignore[union-attr]
                torch = sys.modules.get("torch")
                index = torch.cuda.current_device() if torch is not None else 0
            return str(device.type) + (f":{index}" if index is not None else "")  # type: ignore[union-attr]
    return None
