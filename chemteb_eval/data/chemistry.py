"""What kind of chemical string a text is (issue 48): a CAS number, a molecular formula, a
SMILES, or text — the classes ``chemteb inspect`` and each result's ``chemistry`` block count
tokens by. The rule is the contract (docs/inspect.md), applied in this order:

1. ``cas``: a CAS Registry Number, ``NNNNNNN-NN-N`` (2 to 7 ASCII digits, the first not 0;
   2 digits; 1 check digit) whose check digit is right: the sum of each other digit times its
   place from the right (1, 2, ...), modulo 10.
2. ``formula``: element symbols with counts (``C9H8O4``, ``NaCl``, ``CO``, ``Co2``,
   ``(NH4)2SO4``, ``[Cu(H2O)4]SO4``, hydrates joined by ``.`` or ``·``): each symbol one of
   the 118 elements, each count a whole number > 0 without a leading zero, no element twice at
   one level of brackets, each bracketed group two members or a count (``[Cl]`` is a SMILES
   atom), each parenthesised group repeated (``(NH4)2``; ``C(C)O``'s uncounted branch is a
   SMILES), and at least two symbols or one count (a lone symbol is a word as often as an
   element: ``I``, ``In``, ``He``, ``Co``). ``CO`` is a formula here (carbon monoxide), though
   RDKit would also parse it as methanol's SMILES; ``CCO`` repeats C, so it is not one (it is
   ethanol's SMILES).
3. ``smiles``: ASCII, no whitespace, at most ``MAX_SMILES`` (5,000) characters, and RDKit
   parses it (``Chem.MolFromSmiles`` returns a molecule of at least one atom, its logs
   silenced).
   Without RDKit (the ``chem`` extra) this class is unavailable, never guessed: such texts are
   counted apart (``UNAVAILABLE``).
4. ``text``: anything else. Inside a text, each whitespace-separated token is classed by the
   same rule (``entities_in_text``; the punctuation around a word, a full stop and an aside's
   brackets are not part of it), but for a SMILES of one atom (``I``, ``C``, ``Cl``: a word as
   often as a molecule), which a sentence's token is not counted as.
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
    "is_smiles",
    "named_entities",
    "rdkit_available",
    "word_entity",
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

# ASCII digits only (``\d`` would take any script's), and no leading zero: CAS numbers have none
_CAS = re.compile(r"([1-9][0-9]{1,6})-([0-9]{2})-([0-9])")
# a symbol (capital, then an optional lower-case letter) or a bracket, with an optional count
_TOKEN = re.compile(r"([A-Z][a-z]?|\(|\)|\[|\])(\d*)")
_HYDRATE = re.compile(r"[.·•]")
_MULTIPLIER = re.compile(r"[1-9][0-9]*")
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
    """One part of a formula: an optional multiplier (a hydrate's ``5`` in ``5H2O``), then
    element symbols and bracketed groups with counts, each element once at its own level; a
    group holds two members or a count (``[Cl]`` is a SMILES bracket atom) and a parenthesised
    one is repeated (``(NH4)2``; ``C(C)O``'s uncounted branch is SMILES)."""
    multiplier = _MULTIPLIER.match(part)
    body = part[multiplier.end() :] if multiplier else part
    if not body or body[0].isdigit():  # nothing, or a multiplier of 0 ("0H2O")
        return False
    # per open level: its opening bracket, the elements seen at it, its members, whether counted
    levels: list[tuple[str, set[str], list[int]]] = [("", set(), [0, 0])]
    symbols, counted, pos = 0, multiplier is not None, 0
    while pos < len(body):
        found = _TOKEN.match(body, pos)
        if found is None:
            return False
        symbol, count = found.groups()
        if count.startswith("0"):
            return False
        pos = found.end()
        if symbol in "([":
            if count:
                return False
            levels.append((symbol, set(), [0, 0]))
            continue
        if symbol in ")]":
            if len(levels) == 1:
                return False
            opener, _, (members, inner_counts) = levels.pop()
            if opener + symbol not in ("()", "[]") or (members < 2 and not inner_counts):
                return False
            if symbol == ")" and (not count or int(count) < 2):
                return False
        else:
            if symbol not in ELEMENTS or symbol in levels[-1][1]:
                return False
            levels[-1][1].add(symbol)
            symbols += 1
        levels[-1][2][0] += 1  # a member of the enclosing level: the symbol or the group
        levels[-1][2][1] += bool(count)
        counted = counted or bool(count)
    return len(levels) == 1 and (symbols > 1 or (symbols == 1 and counted))


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


# A SMILES is ASCII (OpenSMILES' alphabet): RDKit skips some other characters ("Cé" parses as
# C, "C€" too), which would make junk a molecule; a lone surrogate makes it raise. Outside a
# bracket atom a SMILES holds only these letters (the organic subset, aromatic forms, Cl's l
# and Br's r): RDKit parses no ASCII string with another there (every ASCII letter tried alone
# and in pairs, in and around chains and rings: tests/test_chemistry.py). A sentence's word
# ("the", "acid") is told apart here, without a parse: 0.7 s of 3.2 s on 11k texts.
_SPACE = re.compile(r"\s")  # str.isspace's characters, searched in C
_BRACKET_ATOM = re.compile(r"\[[^\[\]]*\]")
_FOREIGN_LETTER = re.compile(r"[^\W\dBCFINOPSbclnoprs_]")

# Longer than this, a "SMILES" is not parsed (RDKit takes quadratic time on some pathological
# strings; the longest SMILES in ChEBI-20 is about 1,300 characters).
MAX_SMILES = 5_000


def _molecule(text: str) -> Any:
    """RDKit's molecule of ``text`` if it is a SMILES (no whitespace, at most ``MAX_SMILES``
    characters, RDKit parses it into at least one atom), else ``None``. ``ValueError``
    without RDKit."""
    chem = _chem()
    if chem is None:
        raise ValueError("RDKit is not installed: pip install 'chemteb-eval[chem]'.")
    if not text or len(text) > MAX_SMILES or not text.isascii() or _SPACE.search(text):
        return None
    if _FOREIGN_LETTER.search(_BRACKET_ATOM.sub("", text)):
        return None
    mol = chem.MolFromSmiles(text)
    return None if mol is None or mol.GetNumAtoms() == 0 else mol


def is_smiles(text: str) -> bool:
    """Whether RDKit parses ``text`` as a SMILES (``_molecule``): the class's test. Parsing
    only: canonicalising costs ~40x the parse on a 5,000-atom chain (0.28 s against 7 ms)."""
    return _molecule(text) is not None


def canonical_smiles(text: str) -> str | None:
    """RDKit's canonical SMILES of ``text`` if it is a SMILES (``is_smiles``), else ``None``.
    ``ValueError`` without RDKit."""
    mol = _molecule(text)
    if mol is None:
        return None
    smiles: str = _chem().MolToSmiles(mol)
    return smiles


UNAVAILABLE = "unavailable"


def classify(text: str, *, smiles: Callable[[str], bool] | None = None) -> StringClass | str:
    """The class of ``text`` by the module's rule. ``smiles``: the SMILES test (default: RDKit
    parses it); without RDKit a text that would need it is ``"unavailable"``."""
    if is_cas(text):
        return "cas"
    if is_formula(text):
        return "formula"
    if not text or not text.isascii() or _SPACE.search(text):  # a SMILES is ASCII
        return "text"
    if smiles is None:
        if not rdkit_available():
            return UNAVAILABLE
        return "smiles" if is_smiles(text) else "text"
    return "smiles" if smiles(text) else "text"


def named_entities(text: str) -> Iterator[tuple[str, StringClass | str]]:
    """Each whitespace-separated word of a text that names a CAS number, a formula or a
    SMILES, with its class (``word_entity``)."""
    for word in text.split():
        found = word_entity(word)
        if found is not None:
            yield found


# A text's words repeat (a Wikipedia lead's "the", "acid", "water"): each distinct word is
# classed once, not once per occurrence (12.4 s of the 21.9 s inspecting PipChem).
@functools.lru_cache(maxsize=65_536)
def word_entity(word: str) -> tuple[str, StringClass | str] | None:
    """The entity a sentence's word names, with its class, or ``None``: the punctuation
    around it stripped, a sentence's full stop too, and the brackets of an aside
    (``(50-00-0)``) where the word in them is an entity and the word with them is not; a
    one-atom SMILES is a word. Without RDKit, no word is a SMILES (that class is unavailable,
    never guessed)."""
    token = word.strip(_PUNCTUATION).rstrip(".")  # "H2O," and "H2O." name water
    if not token:
        return None
    found = _word_class(token)
    if found == "text" and (token[0] == "(" or token[-1] == ")"):
        inner = _unbracketed(token)
        if inner and inner != token:
            token, found = inner, _word_class(inner)
    return None if found in ("text", UNAVAILABLE) else (token, found)


def _unbracketed(token: str) -> str:
    """``token`` without the brackets of a sentence's aside: an unmatched ``(`` at its start
    or ``)`` at its end (``(NH4)2SO4)`` keeps its own), or a pair around all of it."""
    opened, closed = token.count("("), token.count(")")
    if token.startswith("(") and opened > closed:
        token = token[1:]
    elif token.endswith(")") and closed > opened:
        token = token[:-1]
    elif token.startswith("(") and token.endswith(")") and _balanced(token[1:-1]):
        token = token[1:-1]
    return token.strip(_PUNCTUATION).rstrip(".")


def _balanced(text: str) -> bool:
    """Whether ``text``'s parentheses close in order."""
    depth = 0
    for c in text:
        depth += (c == "(") - (c == ")")
        if depth < 0:
            return False
    return depth == 0


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
