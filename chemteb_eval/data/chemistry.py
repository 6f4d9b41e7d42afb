"""What kind of chemical string a text is (issue 48): a CAS number, a molecular formula, a
SMILES, or text — the classes ``chemteb inspect`` and each result's ``chemistry`` block count
tokens by. The rule is the contract (docs/inspect.md), applied in this order:

1. ``cas``: a CAS Registry Number, ``NNNNNNN-NN-N`` (2 to 7 digits, 2 digits, 1 check digit),
   whose check digit is right: the sum of each other digit times its place from the right
   (1, 2, ...), modulo 10.
2. ``formula``: element symbols with counts (``C9H8O4``, ``NaCl``, ``CO``, ``Co2``,
   ``(NH4)2SO4``, hydrates joined by ``.`` or ``·``): each symbol one of the 118 elements, each
   count a whole number > 0, no element twice at one level, and at least two symbols or one
   count (a lone symbol is a word as often as an element: ``I``, ``In``, ``He``, ``Co``). ``CO``
   is a formula here (carbon monoxide), though RDKit would also parse it as methanol's SMILES;
   ``CCO`` repeats C, so it is not one (it is ethanol's SMILES).
3. ``smiles``: no whitespace, and RDKit parses it (``Chem.MolFromSmiles`` returns a molecule, its
   logs silenced). Without RDKit (the ``chem`` extra) this class is unavailable, never guessed:
   such texts are counted apart (``UNAVAILABLE``).
4. ``text``: anything else. Inside a text, each whitespace-separated token is classed by the
   same rule (``entities_in_text``; the punctuation around a word is not part of it), but for a SMILES of one atom (``I``, ``C``, ``Cl``: a
   word as often as a molecule), which a sentence's token is not counted as.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Literal

__all__ = [
    "CLASSES",
    "ELEMENTS",
    "UNAVAILABLE",
    "StringClass",
    "canonical_smiles",
    "classify",
    "entities_in_text",
    "is_cas",
    "is_formula",
    "named_entities",
    "rdkit_available",
]

StringClass = Literal["cas", "formula", "smiles", "text"]
CLASSES: tuple[StringClass, ...] = ("cas", "formula", "smiles", "text")

# The 118 elements (IUPAC, 2016), by atomic number.
ELEMENTS = frozenset(
    """H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu Zn Ga Ge As Se
    Br Kr Rb Sr Y Zr Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe Cs Ba La Ce Pr Nd Pm Sm Eu Gd Tb Dy
    Ho Er Tm Yb Lu Hf Ta W Re Os Ir Pt Au Hg Tl Pb Bi Po At Rn Fr Ra Ac Th Pa U Np Pu Am Cm Bk Cf
    Es Fm Md No Lr Rf Db Sg Bh Hs Mt Ds Rg Cn Nh Fl Mc Lv Ts Og""".split()
)
assert len(ELEMENTS) == 118

_CAS = re.compile(r"(\d{2,7})-(\d{2})-(\d)")
# a symbol (capital, then an optional lower-case letter) or a bracket, with an optional count
_TOKEN = re.compile(r"([A-Z][a-z]?|\(|\)|\[|\])(\d*)")
_HYDRATE = re.compile(r"[.·•]")
_MAX_FORMULA = 200  # characters: no molecular formula is longer; longer strings are not parsed


def is_cas(text: str) -> bool:
    """Whether ``text`` is a CAS Registry Number with a right check digit."""
    found = _CAS.fullmatch(text)
    if found is None:
        return False
    digits = (found.group(1) + found.group(2))[::-1]
    total = sum(int(d) * place for place, d in enumerate(digits, start=1))
    return total % 10 == int(found.group(3))


def _formula_part(part: str) -> bool:
    """One part of a formula: element symbols and bracketed groups with counts, each element
    once at its own level of brackets and once over the part's plain symbols."""
    if not part or (part[0].isdigit() and not part.lstrip("0123456789")):
        return False
    body = part.lstrip("0123456789")  # a hydrate's leading multiplier: 5H2O
    pos, depth, seen = 0, 0, set()
    symbols, counted = 0, body != part
    while pos < len(body):
        found = _TOKEN.match(body, pos)
        if found is None:
            return False
        symbol, count = found.groups()
        if count and (count.startswith("0") or int(count) == 0):
            return False
        counted = counted or bool(count)
        if symbol in "([":
            if count:
                return False
            depth += 1
        elif symbol in ")]":
            depth -= 1
            if depth < 0:
                return False
        else:
            if symbol not in ELEMENTS:
                return False
            if depth == 0:
                if symbol in seen:
                    return False
                seen.add(symbol)
            symbols += 1
        pos = found.end()
    return depth == 0 and (symbols > 1 or (symbols == 1 and counted))


def is_formula(text: str) -> bool:
    """Whether ``text`` is a molecular formula: element symbols with counts (see the module's
    rule); hydrates' parts joined by ``.``/``·``."""
    if not text or len(text) > _MAX_FORMULA or (not text.isascii() and "·" not in text):
        return False
    return all(_formula_part(part) for part in _HYDRATE.split(text))


@functools.cache
def _chem() -> Any:
    """RDKit's ``Chem`` with its parse errors silenced, or ``None`` when it is not installed."""
    try:
        from rdkit import Chem, RDLogger
    except ImportError:
        return None
    RDLogger.DisableLog("rdApp.*")  # type: ignore[attr-defined]
    return Chem


def rdkit_available() -> bool:
    """Whether RDKit (the ``chem`` extra) is installed."""
    return _chem() is not None


# Longer than this, a "SMILES" is not parsed (RDKit takes quadratic time on some pathological
# strings; the longest SMILES in ChEBI-20 is about 1,300 characters).
MAX_SMILES = 5_000


def canonical_smiles(text: str) -> str | None:
    """RDKit's canonical SMILES of ``text`` if it is a SMILES (no whitespace, RDKit parses it,
    at most ``MAX_SMILES`` characters), else ``None``. ``ValueError`` without RDKit."""
    chem = _chem()
    if chem is None:
        raise ValueError("RDKit is not installed: pip install 'chemteb-eval[chem]'.")
    if not text or len(text) > MAX_SMILES or any(c.isspace() for c in text):
        return None
    mol = chem.MolFromSmiles(text)
    if mol is None or mol.GetNumAtoms() == 0:
        return None
    smiles: str = chem.MolToSmiles(mol)
    return smiles


UNAVAILABLE = "unavailable"


def classify(text: str, *, smiles: Callable[[str], bool] | None = None) -> StringClass | str:
    """The class of ``text`` by the module's rule. ``smiles``: the SMILES test (default: RDKit
    parses it); without RDKit a text that would need it is ``"unavailable"``."""
    if is_cas(text):
        return "cas"
    if is_formula(text):
        return "formula"
    if not text or any(c.isspace() for c in text):
        return "text"
    if smiles is None:
        if not rdkit_available():
            return UNAVAILABLE
        return "smiles" if canonical_smiles(text) is not None else "text"
    return "smiles" if smiles(text) else "text"


def named_entities(text: str) -> Iterator[tuple[str, StringClass | str]]:
    """Each whitespace-separated word of a text that names a CAS number, a formula or a
    SMILES (the punctuation around it stripped; a one-atom SMILES is a word), with its class."""
    for word in text.split():
        token = word.strip(_PUNCTUATION)  # "H2O," names water
        if not token:
            continue
        found = _word_class(token)
        if found != "text":
            yield token, found


# A text's words repeat (a Wikipedia lead's "the", "acid", "water"): each distinct word is
# classed once, not once per occurrence (12.4 s of the 21.9 s inspecting PipChem).
@functools.lru_cache(maxsize=65_536)
def _word_class(token: str) -> StringClass | str:
    found = classify(token)
    return "text" if found == "smiles" and _atoms(token) < 2 else found


def entities_in_text(text: str) -> Iterable[StringClass | str]:
    """The class of each entity ``named_entities`` finds in a text."""
    return [found for _, found in named_entities(text)]


# around a word in a sentence, not part of what it names (brackets are kept: a SMILES ends in
# one as often as a sentence's aside does)
_PUNCTUATION = ",;:!?\"'\u201c\u201d\u2018\u2019"


def _atoms(smiles: str) -> int:
    chem = _chem()
    mol = chem.MolFromSmiles(smiles) if chem is not None else None
    return 0 if mol is None else int(mol.GetNumAtoms())
