"""What a model behind an API is: what the user declares, guarded by the vectors it returns.

An OpenAI-compatible server's model name proves nothing (a server restarted with other weights
answers under the same name), and neither do its vectors name anything: a measurement matched
against the probes on record chose a label by sort order when two matched, and called the same
model "another" when its noise showed only between runs. So the two roles are split:

- **Identity is declared** (``ApiIdentity``): the API's base URL without credentials, the served
  model's name, and the ``--revision`` the user gives (a date, a version: ``None`` until the
  user says the model changed). Its label ``api:<16 hex>`` keys the embedding cache and the
  results folder; two declarations never share them, one declaration always does.
- **The probe guards it** (``ProbeGuard``): the model's vectors for ``PROBE_TEXTS``, asked
  ``PROBE_CALLS`` times at the start, alone and among ``FILLER`` texts (their spread is the
  server's **noise** within a run, a batching server's too), compared with the first probe this
  identity ever gave (its **anchor**, kept in ``api-models.json`` beside the cache and in the
  results folder's ``model_meta.json``). Then every request carries one probe text in its own
  body (``watch``: a gateway that answered the probe alone from another model cannot hide),
  checked before the request's vectors are used, and a few texts the cache holds are encoded
  again and compared with the cached vectors (``compare``). A vector further from the anchor
  than ``tolerance`` stops the run before anything is stored, with one line and the way out
  (``--revision``): vectors the guard has not cleared are never kept, and never scored.

The tolerance: ``NOISE_FACTOR`` times the larger noise within a run (now, or the anchor's run),
and never below ``DRIFT_FLOOR`` (1e-3 of a unit vector, cosine 1 - 5e-7), which is the noise a
server may show only between runs (a gateway's cache, a sticky replica, other traffic in its
batches: 1e-5 per component of a 1,536-d unit vector moves it ~5.5e-4). What it cannot tell
apart: two models whose probe vectors are closer than that; their scores differ by about as much
as two runs of one of them. Each run's distance from the anchor is kept, so the drift between
runs is measured and shown. What no fixed probe can see: a gateway that caches each input's
vector (LiteLLM's embedding cache) answers the probe and every text it has seen from the old
model and only new texts from the new one; a gateway that splits one request over two replicas
vouches for the probe's replica alone. Turn such caching off while evaluating, and give a new
model its ``--revision``.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import os
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from chemteb_eval._files import parse_json, public_url, read_regular
from chemteb_eval.errors import ChemtebError

from .variant import check_api_revision

__all__ = [
    "DRIFT_FLOOR",
    "FILLER",
    "MOST_NOISE",
    "NOISE_FACTOR",
    "PROBE_CALLS",
    "PROBE_TEXTS",
    "REGISTRY_FILE",
    "SAME_FLOOR",
    "Anchor",
    "ApiIdentity",
    "Probe",
    "ProbeGuard",
    "ProbeMoved",
    "ProbeRegistry",
    "canonical_url",
    "measure_probe",
    "same_probe",
    "tolerance",
    "within",
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
# Texts of other lengths the probe is asked beside at the start, as a run's requests carry it
FILLER: tuple[str, ...] = (
    "Sodium chloride dissolves readily in water.",
    "c1ccccc1O",
    "2-methylpropan-2-ol",
    "The filtrate was concentrated under reduced pressure to give a pale yellow oil that "
    "solidified on standing overnight at room temperature.",
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
# The least a declared model's probe may move from its anchor: the noise a server shows only
# between runs (see the module's note): about twice the 5.5e-4 of 1e-5 per component at 1,536-d.
DRIFT_FLOOR = 1e-3
_KEPT_RUNS = 50  # the drifts of the last runs an anchor keeps


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
    """The encoder's probe, asked ``calls`` times: alone, then among other texts (after them,
    before them: a server that batches computes a text otherwise beside others, and the run's
    checks ride in its requests), the first answer as the probe and as noise the largest
    distance between any two answers' unit vectors."""
    draws = [probe_of(encoder, among=i) for i in range(max(1, calls))]
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


def tolerance(a: Probe, b: Probe) -> float:
    """How far apart two probes of one declared model may lie (see the module's note)."""
    return max(NOISE_FACTOR * max(a.noise, b.noise), DRIFT_FLOOR)


def within(a: Probe, b: Probe) -> bool:
    """Whether two probes lie within the tolerance of one declared model."""
    shape = np.shape(a.vectors) == np.shape(b.vectors)
    return shape and _distance(a.vectors, b.vectors) <= tolerance(a, b)


@dataclass(frozen=True)
class ApiIdentity:
    """A model behind an API as the user declares it: the served ``model`` name, the API's
    ``source`` (its public URL: never a password or a key) and the user's ``revision``."""

    model: str
    source: str
    revision: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "source", canonical_url(self.source))
        if self.revision is not None:
            check_api_revision(self.revision)

    @property
    def label(self) -> str:
        """``api:<16 hex>``: what keys the model's embedding cache and results folder."""
        text = json.dumps([self.source, self.model, self.revision])
        return "api:" + hashlib.sha256(text.encode()).hexdigest()[:16]

    def shown(self) -> str:
        at = f" at {self.source}"
        return self.model + at + (f" (--revision {self.revision})" if self.revision else "")


@dataclass(frozen=True)
class Anchor:
    """The first probe a declared model gave, when (ISO date), and how far each later run's
    start lay from it (the drift between runs, newest last)."""

    probe: Probe
    since: str
    drift: tuple[float, ...] = ()

    def to_record(self, identity: ApiIdentity) -> dict[str, Any]:
        return {
            "model": identity.model,
            "source": identity.source,
            "revision": identity.revision,
            "anchor": self.probe.to_record(),
            "since": self.since,
            "drift": list(self.drift[-_KEPT_RUNS:]),
        }

    @classmethod
    def from_record(cls, record: object, identity: ApiIdentity) -> Anchor | None:
        """An anchor kept by ``to_record`` for this very ``identity`` (a record naming another
        model, URL or revision under its label, or a damaged one, is no anchor)."""
        if not isinstance(record, Mapping):
            return None
        said = (record.get("model"), canonical_url(record.get("source")), record.get("revision"))
        probe = Probe.from_record(record.get("anchor"))
        since = record.get("since")
        drift = record.get("drift", [])
        if said != (identity.model, identity.source, identity.revision) or probe is None:
            return None
        if not isinstance(since, str) or not 0 < len(since) <= 40 or not since.isprintable():
            return None
        if not isinstance(drift, list):
            return None
        moved = [float(d) for d in drift if isinstance(d, int | float) and 0 <= d <= 2]
        return cls(probe, since, tuple(moved[-_KEPT_RUNS:]))


class ProbeMoved(ChemtebError):
    """The model behind a declared API identity returns other vectors than its anchor."""


class ProbeGuard:
    """Guards one run of a declared API model: every request the model answers is checked
    before its vectors are used (``watch``), and the vectors the cache already holds for it are
    checked against what it returns now (``compare``); either stops the run (``ProbeMoved``)
    beyond the tolerance of the anchor.

    Args:
        encoder: the API model.
        identity: what the user declared.
        anchor: the identity's first probe.
        start: this run's probe at its start (its noise is the run's).
        registry: where ``settle`` keeps the anchor and this run's drift (``None``: nowhere).
    """

    def __init__(
        self,
        encoder: Any,
        identity: ApiIdentity,
        anchor: Anchor,
        start: Probe,
        registry: ProbeRegistry | None = None,
    ) -> None:
        self.encoder, self.identity, self.anchor, self.start = encoder, identity, anchor, start
        self.limit = tolerance(start, anchor.probe)
        self.registry = registry
        self.checks = 0
        self._lock = threading.Lock()  # requests may be answered on several threads
        self._units = _unit(anchor.probe.vectors)

    def moved(self, probe: Probe) -> float:
        return _distance(probe.vectors, self.anchor.probe.vectors)

    def watch(self, encoder: Any) -> Any:
        """``encoder`` with every request checked: an HTTP encoder carries one probe text in
        each request it sends (``probe_watch``: the same body, route and batch as the texts),
        any other encoder is asked the probe after each call."""
        from .http import HTTPEmbeddingEncoder

        if isinstance(encoder, HTTPEmbeddingEncoder):  # ours: not a wrapper that delegates
            encoder.probe_watch = self
            return encoder
        return _Watched(encoder, self)

    def text(self) -> tuple[int, str]:
        """The probe text the next request carries (each in turn)."""
        with self._lock:
            self.checks += 1
            index = self.checks % len(PROBE_TEXTS)
        return index, PROBE_TEXTS[index]

    def see(self, index: int, vector: NDArray[Any]) -> None:
        """Check the vector a request returned for probe text ``index``."""
        row = _unit(np.asarray(vector, dtype=np.float64).reshape(1, -1))
        if row.shape[1] != self._units.shape[1]:
            self.refuse(Probe(np.asarray(vector).reshape(1, -1)), "in a request")
        moved = float(np.linalg.norm(row[0] - self._units[index]))
        if not moved <= self.limit:
            raise ProbeMoved(self._message(self._moved(moved), "in a request of this run"))

    def check(self, when: str = "after a call") -> None:
        """Ask the probe once; ``ProbeMoved`` (one line, the way out) beyond the tolerance."""
        with self._lock:
            self.checks += 1
        self.refuse(Probe(probe_of(self.encoder)), when)

    def refuse(self, probe: Probe, when: str) -> None:
        """``ProbeMoved`` when ``probe`` lies beyond the tolerance of the anchor."""
        if np.shape(probe.vectors) != np.shape(self.anchor.probe.vectors):
            raise ProbeMoved(
                self._message(
                    f"vectors of {np.shape(probe.vectors)[1]} numbers, "
                    f"not {np.shape(self.anchor.probe.vectors)[1]}",
                    when,
                )
            )
        moved = self.moved(probe)
        if moved > self.limit:
            raise ProbeMoved(self._message(self._moved(moved), when))

    def compare(self, fresh: NDArray[Any], stored: NDArray[Any], where: str) -> None:
        """``ProbeMoved`` when vectors the model returns now for some texts lie beyond the
        tolerance of those ``stored`` for them (the cache at ``where``): a cache filled by
        another model (adopted, or kept while its anchor was lost) is never served."""
        if np.shape(fresh) != np.shape(stored):
            moved = 2.0
        else:
            moved = _distance(fresh, stored)
        if moved > self.limit:
            raise ProbeMoved(
                f"{self.identity.shown()} returns other vectors than those its embedding cache "
                f"holds ({where}; {self._moved(moved)}): they were another model's. Nothing was "
                "scored. If the server runs another model now, rerun with --revision NAME; if "
                "it runs the model that filled the cache, that cache is not its own: delete it "
                f"(rm -r '{where}')."
            )

    def settle(self) -> None:
        """Keep the anchor and this run's drift, once the run's vectors were checked."""
        if self.registry is not None:
            moved = self.moved(self.start)
            drift = (*self.anchor.drift, moved)
            self.registry.remember(
                self.identity, Anchor(self.anchor.probe, self.anchor.since, drift)
            )

    def _moved(self, moved: float) -> str:
        return (
            f"its vectors moved {moved:.3g} of a unit vector, more than the {self.limit:.2g} its "
            "noise allows"
        )

    def _message(self, what: str, when: str) -> str:
        return (
            f"{self.identity.shown()} returns other vectors {when} than on {self.anchor.since} "
            f"({what}): another model is served under this name. Nothing it returned since "
            "the last check is stored or scored. If the server runs another model now, name "
            "it: rerun with --revision NAME (e.g. today's date), which keeps its cache and "
            "results apart from the earlier model's."
        )


class _Watched:
    """An API encoder that is not ours (an object a user passes), asked the probe after each
    call: its vectors are returned only once checked."""

    # the vectors come back through ``encode`` alone: never the pipelined path's ``run``
    pipelined = False

    def __init__(self, inner: Any, guard: ProbeGuard) -> None:
        self._inner, self._guard = inner, guard

    @property
    def meta(self) -> Any:
        return self._inner.meta

    def prompt(self, task_type: str, role: Any) -> str:
        return str(self._inner.prompt(task_type, role))

    def encode(self, texts: list[str], *, prompt: str, batch_size: int) -> NDArray[np.float32]:
        out: NDArray[np.float32] = self._inner.encode(texts, prompt=prompt, batch_size=batch_size)
        self._guard.check("after a call of this run")
        return out

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` (created), waited for; none where the OS has no ``fcntl``."""
    try:
        import fcntl
    except ImportError:  # Windows: the rename is atomic, two writers may still race
        yield
        return
    with open(path, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


class ProbeRegistry:
    """The anchors of the API models seen with one embedding cache, by label (a JSON file;
    unreadable means empty). Entries of the layout before (labels ``probe:...`` chosen by the
    vectors) are kept as they are and read only by ``earlier``.

    Args:
        path: the registry file (the embedding cache folder's ``api-models.json``).
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    @classmethod
    def beside(cls, cache_folder: Path) -> ProbeRegistry:
        """The registry of an embedding cache folder (its ``api-models.json``)."""
        return cls(Path(cache_folder) / REGISTRY_FILE)

    def _read(self, strict: bool = False) -> dict[str, Any] | None:
        """The registry's entries (none where it is not there); what cannot be read as one is
        empty, or ``None`` where ``strict`` (a file that must not be overwritten)."""
        if not self.path.exists() and not self.path.is_symlink():
            return {}
        try:  # a FIFO named like the file hung every API run (--no-cache too)
            data = parse_json(read_regular(self.path))
        except (OSError, ValueError):
            data = None
        if isinstance(data, dict):
            return data
        return None if strict else {}

    def anchor(self, identity: ApiIdentity) -> Anchor | None:
        """The anchor kept for ``identity`` (by its label, checked against what it declares)."""
        return Anchor.from_record((self._read() or {}).get(identity.label), identity)

    def remember(self, identity: ApiIdentity, anchor: Anchor) -> None:
        """Keep ``identity``'s anchor and drift beside the others': read, merged and replaced
        under a lock (two runs at once keep both their anchors), atomically (a temporary file
        renamed). A file that is there but cannot be read as a registry is never rewritten
        (that would wipe every other model's anchor): nothing is kept then, and the results
        folders' and the cache's checks still hold. A folder that cannot be written keeps
        nothing either."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with _locked(self.path.with_name(f".{self.path.name}.lock")):
                known = self._read(strict=True)
                if known is None:
                    return
                known[identity.label] = anchor.to_record(identity)
                for entry in known.values():  # entries written before URLs were cleaned
                    if isinstance(entry, dict) and isinstance(entry.get("source"), str):
                        entry["source"] = public_url(entry["source"])
                fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".api-models-")
                try:
                    with os.fdopen(fd, "w", encoding="utf-8") as handle:
                        json.dump(known, handle)
                    os.replace(tmp, self.path)
                except OSError:
                    Path(tmp).unlink(missing_ok=True)
        except OSError:
            return

    def earlier(self, identity: ApiIdentity) -> list[tuple[str, Probe]]:
        """The labels and probes the layout before gave models served as ``identity``'s name at
        its URL (``probe:...`` labels, chosen by the vectors)."""
        out = []
        for label, entry in sorted((self._read() or {}).items()):
            if not (label.startswith("probe:") and isinstance(entry, dict)):
                continue
            said = (entry.get("model"), canonical_url(entry.get("source")))
            probe = Probe.from_record(entry.get("probe"))
            if said == (identity.model, identity.source) and probe is not None:
                out.append((label, probe))
        return out


def canonical_url(source: object) -> object:
    """An API's URL as an identity names it: without credentials, its scheme and host in lower
    case, without the scheme's default port or a trailing ``/`` (``HTTP://Host:80/v1/`` and
    ``http://host/v1`` are one server)."""
    from urllib.parse import urlsplit, urlunsplit

    if not isinstance(source, str):
        return source
    shown = public_url(source)
    try:
        parts = urlsplit(shown)
        port = parts.port
    except ValueError:
        return shown
    if not parts.scheme or not parts.hostname:
        return shown
    scheme, host = parts.scheme.lower(), parts.hostname.lower()
    host = f"[{host}]" if ":" in host else host
    if port is not None and (scheme, port) not in (("http", 80), ("https", 443)):
        host += f":{port}"
    path = parts.path.rstrip("/")
    return urlunsplit((scheme, host, path, parts.query, parts.fragment))


def probe_of(
    encoder: Any, texts: Sequence[str] = PROBE_TEXTS, among: int = 0
) -> NDArray[np.float32]:
    """The encoder's vectors for the probe texts (no prompt): alone (``among`` 0), after
    ``FILLER`` seven times (1: a call of 32 texts, a full batch's kernels) or before it once
    (2), in one call."""
    batch = [list(texts), [*FILLER * 7, *texts], [*texts, *FILLER]][among % 3]
    out = np.asarray(encoder.encode(batch, prompt="", batch_size=len(batch)), dtype=np.float32)
    at = 7 * len(FILLER) if among % 3 == 1 else 0
    return out[at : at + len(texts)]
