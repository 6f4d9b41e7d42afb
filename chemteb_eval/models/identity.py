"""What identifies a model served behind an API: the vectors it returns, not its name.

An OpenAI-compatible server's model name and URL prove nothing: a local server restarted with
other weights answers under the same name. So an API model is named by a **probe**: its vectors
for ``PROBE_TEXTS``. Two probes are the same model when every probe vector points the same way
(cosine >= ``SAME_COSINE``: APIs return the last digits with noise, 1e-6 to 1e-4 per component,
while two different models' vectors for one text are far apart) and the dimension agrees.

A probe's label (``probe:<dim>d-<16 hex>``) is made from 64 random-hyperplane sign bits of the
probe the first time a model is seen, and remembered with the probe in a small registry beside
the embedding cache (``ProbeRegistry``): a later run whose probe matches a remembered one takes
its label even where noise flipped a bit; one that matches none is another model, with a label
of its own. The label keys the model's embedding cache and its results folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from chemteb_eval._files import parse_json, public_url, read_regular
from chemteb_eval.errors import ChemtebError

__all__ = [
    "PROBE_TEXTS",
    "REGISTRY_FILE",
    "SAME_COSINE",
    "ProbeRegistry",
    "probe_label",
    "same_probe",
]

# The registry's file, in the embedding cache folder: this module alone reads and writes it.
REGISTRY_FILE = "api-models.json"

# Four short texts of the kinds ChemTEB embeds: a name, a sentence, a SMILES, a procedure.
PROBE_TEXTS: tuple[str, ...] = (
    "benzene",
    "Aspirin is a nonsteroidal anti-inflammatory drug.",
    "CC(=O)OC1=CC=CC=C1C(=O)O",
    "The reaction was quenched with water and extracted with ethyl acetate.",
)
# Same model: every probe's cosine to the remembered one at least this (a 1e-4 noise per
# component of a 1,536-d vector moves the cosine by under 1e-5; two models' vectors for one
# text are at cosine 0.1-0.9).
SAME_COSINE = 1.0 - 1e-5
_BITS = 64


def _unit(vectors: NDArray[Any]) -> NDArray[np.float64]:
    rows = np.asarray(vectors, dtype=np.float64)
    if rows.ndim != 2 or not np.all(np.isfinite(rows)):
        raise ChemtebError("the API returned probe vectors that are not finite numbers.")
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms == 0, 1.0, norms)


def same_probe(a: NDArray[Any], b: NDArray[Any]) -> bool:
    """Whether two probes come from the same model (see the module's note)."""
    if np.shape(a) != np.shape(b):
        return False
    cosines = np.sum(_unit(a) * _unit(b), axis=1)
    return bool(np.all(cosines >= SAME_COSINE))


def probe_label(vectors: NDArray[Any]) -> str:
    """``probe:<dim>d-<16 hex>``: the signs of 64 fixed random projections of the probe."""
    flat = _unit(vectors).ravel()
    planes = np.random.default_rng(35).standard_normal((_BITS, flat.size))
    bits = "".join("1" if x > 0 else "0" for x in planes @ flat)
    return f"probe:{np.shape(vectors)[1]}d-{int(bits, 2):016x}"


class ProbeRegistry:
    """The probes seen on this machine, by label (a JSON file; unreadable means empty).

    Args:
        path: the registry file (the embedding cache folder's ``api-models.json``).
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    @classmethod
    def beside(cls, cache_folder: Path) -> ProbeRegistry:
        """The registry of an embedding cache folder (its ``api-models.json``)."""
        return cls(Path(cache_folder) / REGISTRY_FILE)

    def _read(self) -> dict[str, Any]:
        try:  # a FIFO named like the file hung every API run (--no-cache too)
            data = parse_json(read_regular(self.path))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def identify(self, model: str, source: str, vectors: NDArray[Any]) -> tuple[str, bool]:
        """The label of the model behind ``(model, source)`` that returned ``vectors``, and
        whether it was seen before under this name and source. A probe matching a remembered
        one takes its label; another gets a label of its own (a new one, remembered)."""
        known, shown = self._read(), public_url(source)  # never a password: the file is shared
        for label, entry in sorted(known.items()):
            probe = entry.get("probe") if isinstance(entry, dict) else None
            try:
                matches = probe is not None and same_probe(np.asarray(probe, float), vectors)
            except (ValueError, TypeError, ChemtebError):
                matches = False  # a hand-edited entry: never a match
            if matches:
                seen = (entry.get("model"), _public(entry.get("source"))) == (model, shown)
                return label, seen
        label = probe_label(vectors)
        while label in known:  # the same signs for another probe: not seen, but never shared
            label = label + "-" + hashlib.sha256(label.encode()).hexdigest()[:4]
        known[label] = {
            "model": model,
            "source": shown,
            "probe": np.round(np.asarray(vectors, float), 7).tolist(),
        }
        self._write(known)
        return label, False

    def _write(self, known: dict[str, Any]) -> None:
        """Atomically (a temporary file renamed); a folder that cannot be written keeps
        nothing, which only means the next run compares against nothing."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".api-models-")
        except OSError:
            return
        for entry in known.values():  # entries written before URLs were cleaned
            if isinstance(entry, dict) and isinstance(entry.get("source"), str):
                entry["source"] = public_url(entry["source"])
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(known, handle)
            os.replace(tmp, self.path)
        except OSError:
            Path(tmp).unlink(missing_ok=True)

    def labels_of(self, model: str, source: str) -> list[str]:
        """The labels remembered for models served as ``model`` at ``source``."""
        return sorted(
            label
            for label, entry in self._read().items()
            if isinstance(entry, dict)
            and (entry.get("model"), _public(entry.get("source"))) == (model, public_url(source))
        )


def _public(source: object) -> object:
    return public_url(source) if isinstance(source, str) else source


def probe_of(encoder: Any, texts: Sequence[str] = PROBE_TEXTS) -> NDArray[np.float32]:
    """The encoder's vectors for the probe texts (no prompt)."""
    out: NDArray[np.float32] = np.asarray(
        encoder.encode(list(texts), prompt="", batch_size=len(texts)), dtype=np.float32
    )
    return out
