"""What identifies a model served behind an API: the vectors it returns, not its name.

An OpenAI-compatible server's model name and URL prove nothing: a local server restarted with
other weights answers under the same name. So an API model is named by a **probe**: its vectors
for ``PROBE_TEXTS``, asked ``PROBE_CALLS`` times. How far apart the calls' vectors are is the
server's **noise** now (0 for a deterministic server). Two probes are the same model when every
probe vector (as a unit vector) lies within ``NOISE_FACTOR`` times the larger of their two
noises of the other, and never further than ``SAME_FLOOR`` below that; the dimension agrees.

What it cannot tell apart: two models whose vectors for the probe texts differ by less than
that (three times the server's own call-to-call spread, or 1e-4 of a unit vector on a
deterministic server: the same weights served twice, a model and a copy that rounds a few bits
otherwise). Anything further apart is another model, however close (cosine 0.99999 is).

A probe's label (``probe:<dim>d-<16 hex>``) is made from 64 random-hyperplane sign bits of the
probe the first time a model is seen. It is only a name: the decision is always made on the
vectors, against every probe on record — the registry beside the embedding cache
(``ProbeRegistry``) and the probes that results folders keep in their ``model_meta.json`` — so
an identity survives the loss of the registry (another machine, a new cache), and a label whose
sign bits another model already took is lengthened, never shared.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from chemteb_eval._files import parse_json, public_url, read_regular
from chemteb_eval.errors import ChemtebError

__all__ = [
    "MOST_NOISE",
    "NOISE_FACTOR",
    "PROBE_CALLS",
    "PROBE_TEXTS",
    "REGISTRY_FILE",
    "SAME_FLOOR",
    "Probe",
    "ProbeRegistry",
    "measure_probe",
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
# The probe is asked this many times: the spread of the answers is the server's noise now.
PROBE_CALLS = 3
# Same model: each unit probe vector within NOISE_FACTOR x the larger noise of the two probes
# (the distance between two noisy draws is about the noise itself: for 1e-4 per component of a
# 1,536-d vector both are ~5.5e-3, within 2% of each other), and at least SAME_FLOOR (a
# deterministic server: float32 rounding of another batch moves a unit vector by ~1e-6).
NOISE_FACTOR = 3.0
SAME_FLOOR = 1e-4
# A server whose answers to one text move a unit vector further than this between two calls
# cannot be named (a bfloat16 server's batching moves one by ~0.04); a record claiming more is
# no record (noise 2 would match every model of its dimension).
MOST_NOISE = 0.05
_BITS = 64


def _unit(vectors: NDArray[Any]) -> NDArray[np.float64]:
    rows = np.asarray(vectors, dtype=np.float64)
    if rows.ndim != 2 or not np.all(np.isfinite(rows)):
        raise ChemtebError("the API returned probe vectors that are not finite numbers.")
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms == 0, 1.0, norms)


def _distance(a: NDArray[Any], b: NDArray[Any]) -> float:
    """The largest distance between two probes' corresponding unit vectors."""
    return float(np.max(np.linalg.norm(_unit(a) - _unit(b), axis=1)))


def same_probe(a: NDArray[Any], b: NDArray[Any], noise: float = 0.0) -> bool:
    """Whether two probes come from the same model, ``noise`` the larger of their servers'
    (see the module's note)."""
    if np.shape(a) != np.shape(b):
        return False
    return _distance(a, b) <= max(NOISE_FACTOR * noise, SAME_FLOOR)


class Probe:
    """A model's vectors for ``PROBE_TEXTS`` and its server's noise when they were asked."""

    def __init__(self, vectors: NDArray[Any], noise: float = 0.0) -> None:
        self.vectors = np.asarray(vectors, dtype=np.float32)
        if self.vectors.ndim != 2 or not np.all(np.isfinite(self.vectors)):
            raise ChemtebError("the API returned probe vectors that are not finite numbers.")
        if not (np.isfinite(noise) and 0 <= noise <= MOST_NOISE):
            raise ValueError(
                f"noise: a distance between unit vectors (0 to {MOST_NOISE}), got {noise}."
            )
        self.noise = float(noise)

    def matches(self, other: Probe) -> bool:
        return same_probe(self.vectors, other.vectors, max(self.noise, other.noise))

    def to_record(self) -> dict[str, Any]:
        """As ``model_meta.json`` and the registry keep it: float32 bytes in base64."""
        rows, dim = self.vectors.shape
        data = base64.b64encode(self.vectors.astype("<f4").tobytes()).decode("ascii")
        return {"rows": rows, "dim": dim, "float32": data, "noise": self.noise}

    @classmethod
    def from_record(cls, record: object) -> Probe | None:
        """A probe kept by ``to_record`` (or an older registry's list of rows); ``None`` for
        anything else (a hand-edited or hostile entry is never a match)."""
        try:
            if isinstance(record, list):  # the registry before noise was measured
                return cls(np.asarray(record, dtype=np.float64))
            if not isinstance(record, Mapping):
                return None
            rows, dim = int(record["rows"]), int(record["dim"])
            if not (0 < rows <= 64 and 0 < dim <= 65_536):
                return None
            raw = base64.b64decode(str(record["float32"]), validate=True)
            if len(raw) != rows * dim * 4:
                return None
            vectors = np.frombuffer(raw, dtype="<f4").reshape(rows, dim)
            return cls(vectors, float(record.get("noise", 0.0)))
        except (KeyError, TypeError, ValueError, ChemtebError, OverflowError):
            return None


def measure_probe(encoder: Any, calls: int = PROBE_CALLS) -> Probe:
    """The encoder's probe, asked ``calls`` times: the first answer, and as noise the largest
    distance between any two answers' unit vectors."""
    draws = [probe_of(encoder) for _ in range(max(1, calls))]
    noise = max((_distance(a, b) for a, b in itertools.combinations(draws, 2)), default=0.0)
    if any(np.shape(d) != np.shape(draws[0]) for d in draws):
        raise ChemtebError("the API returned probe vectors of different shapes for one text.")
    if noise > MOST_NOISE:
        raise ChemtebError(
            f"the API's vectors for one text move by {noise:.3g} (of a unit vector) between two "
            f"calls, more than {MOST_NOISE}: the model behind it cannot be told from another. "
            "Check that the server runs one model, deterministically enough to be evaluated."
        )
    return Probe(draws[0], noise)


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

    def identify(
        self,
        model: str,
        source: str,
        probe: Probe | NDArray[Any],
        *,
        elsewhere: Iterable[tuple[str, Probe]] = (),
        in_use: Callable[[str], bool] | None = None,
    ) -> tuple[str, bool]:
        """The label of the model behind ``(model, source)`` that returned ``probe``, and
        whether it was seen before under this name and source. A probe matching one on record
        (the registry's, then ``elsewhere``: labels and probes that results folders keep) takes
        its label; another gets a label of its own, remembered, lengthened while it is among
        the registry's or ``elsewhere``'s, or ``in_use`` says so (a cache folder of the label
        whose probe is not on record)."""
        if not isinstance(probe, Probe):
            probe = Probe(probe)
        known, shown = self._read(), public_url(source)  # never a password: the file is shared
        for label, entry in sorted(known.items()):
            kept = Probe.from_record(entry.get("probe")) if isinstance(entry, dict) else None
            if kept is not None and probe.matches(kept):
                seen = (entry.get("model"), _public(entry.get("source"))) == (model, shown)
                return label, seen
        others = list(elsewhere)
        for label, kept in others:
            if probe.matches(kept):  # the registry was lost: the results folder remembers
                known[label] = {"model": model, "source": shown, "probe": probe.to_record()}
                self._write(known)
                return label, True
        used = {*known, *(label for label, _ in others)}
        label = probe_label(probe.vectors)
        while label in used or (in_use is not None and in_use(label)):  # never shared
            label = label + "-" + hashlib.sha256(label.encode()).hexdigest()[:4]
        known[label] = {"model": model, "source": shown, "probe": probe.to_record()}
        self._write(known)
        return label, False

    def probe(self, label: str) -> Probe | None:
        """The probe the registry keeps for ``label``."""
        entry = self._read().get(label)
        return Probe.from_record(entry.get("probe")) if isinstance(entry, dict) else None

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
