"""The chemical-string classes of issue 48 (``data.chemistry``): CAS numbers by their check
digit, formulas by real element symbols, SMILES by RDKit, the rest text. Hand-checked values and
a brute force of the CAS rule. About 1 s."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chemteb_eval.data import chemistry
from chemteb_eval.data.chemistry import classify, entities_in_text, is_cas, is_formula


@pytest.mark.parametrize("cas", ["7732-18-5", "50-00-0", "64-17-5", "50-78-2", "7440-48-4"])
def test_real_cas_numbers_are_cas(cas: str) -> None:
    assert is_cas(cas) and classify(cas) == "cas"


@pytest.mark.parametrize("text", ["64-17-6", "7732-18-4", "1-00-0", "12345678-00-1", "64-17-5 "])
def test_a_bad_check_digit_or_shape_is_not_cas(text: str) -> None:
    assert not is_cas(text)


# a CAS number's first digit is never 0 (attack 48 #12: "050-00-0" was one)
@given(
    st.text("123456789", min_size=1, max_size=1),
    st.text("0123456789", min_size=1, max_size=6),
    st.text("0123456789", min_size=2, max_size=2),
)
def test_cas_check_digit_brute_force(first: str, rest: str, middle: str) -> None:
    head = first + rest
    digits = [int(c) for c in head + middle]
    check = sum(d * (i + 1) for i, d in enumerate(reversed(digits))) % 10
    assert is_cas(f"{head}-{middle}-{check}")
    assert not is_cas(f"{head}-{middle}-{(check + 1) % 10}")
    assert not is_cas(f"0{head}-{middle}-{check}")  # the same number behind a leading zero


def test_attack48_cas_is_ascii_digits_without_a_leading_zero() -> None:
    assert is_cas("50-00-0")
    arabic, wide = "\u0665\u0660-\u0660\u0660-\u0660", "\uff15\uff10-\uff10\uff10-\uff10"
    for text in (arabic, "050-00-0", "0050-00-0", wide):
        assert not is_cas(text) and classify(text) != "cas", text


@pytest.mark.parametrize(
    "text", ["H2O", "CO", "Co2", "NaCl", "C9H8O4", "(NH4)2SO4", "CuSO4·5H2O", "CuSO4.5H2O", "NO"]
)
def test_formulas(text: str) -> None:
    assert is_formula(text) and classify(text) == "formula"


@pytest.mark.parametrize("text", ["Co", "I", "In", "CCO", "Xx2", "C0", "H02", "", "(H2O", "Zz"])
def test_not_formulas(text: str) -> None:
    # a lone symbol is a word as often as an element; C twice is ethanol's SMILES, not a formula
    assert not is_formula(text)


def test_smiles_by_rdkit_and_text_otherwise() -> None:
    pytest.importorskip("rdkit")
    assert classify("CCO") == "smiles" and classify("CC(=O)Oc1ccccc1C(=O)O") == "smiles"
    assert classify("C1CC") == "text"  # an unclosed ring: RDKit refuses it
    assert classify("benzene ring") == "text" and classify("aspirin") == "text"
    assert chemistry.canonical_smiles("OCC") == chemistry.canonical_smiles("CCO")
    assert chemistry.canonical_smiles("x" * (chemistry.MAX_SMILES + 1)) is None


def test_without_rdkit_the_smiles_class_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chemistry, "_chem", lambda: None)
    assert classify("CCO") == chemistry.UNAVAILABLE
    assert classify("H2O") == "formula" and classify("50-00-0") == "cas"
    with pytest.raises(ValueError, match="chem"):
        chemistry.canonical_smiles("CCO")


def test_entities_inside_a_sentence() -> None:
    pytest.importorskip("rdkit")
    found = list(entities_in_text("I took aspirin CC(=O)Oc1ccccc1C(=O)O with H2O, CAS 50-78-2; Cl"))
    # "I" and "Cl" are one-atom SMILES (words as often); the punctuation around a word is not it
    assert found == ["smiles", "formula", "cas"]


# attack 48 #5: PipChem's SMILES of inorganics were classed formulas (the "no element twice"
# check looked at the top level only), so left out of the SMILES figures and same_molecule
@pytest.mark.parametrize(
    "text",
    [
        "[Cl][Pt][Cl]",
        "[Br][V]([Br])[Br]",
        "C[Si](C)(Cl)[Si](C)(Cl)Cl",
        "FB(Cl)Br",
        "NP(F)F",
        "[GeH3][N]([GeH3])[GeH3]",
        "C[Si](C)(C)[Si]",
        "[GaH2][O][GaH2]",
        "C(C)O",
    ],
)
def test_attack48_smiles_of_bracket_atoms_and_branches_are_not_formulas(text: str) -> None:
    assert not is_formula(text)
    if chemistry.rdkit_available():
        assert classify(text) == "smiles"


@pytest.mark.parametrize("text", ["(HH)2", "Ca(OHO)2", "0H2O", "[Cl]", "(OH)", "(OH)1", "[Fe]2"])
def test_attack48_an_element_twice_in_a_group_or_a_zero_multiplier_is_no_formula(
    text: str,
) -> None:
    assert not is_formula(text)


@pytest.mark.parametrize(
    "text",
    ["Ca(OH)2", "Fe(CO)5", "[Cu(H2O)4]SO4", "K4[Fe(CN)6]", "[Co(NH3)6]Cl3", "H2O2", "C6H12O6"],
)
def test_attack48_formulas_with_groups_stay_formulas(text: str) -> None:
    assert is_formula(text) and classify(text) == "formula"


def test_attack48_one_molecule_as_a_branch_and_a_chain_is_one_molecule() -> None:
    pytest.importorskip("rdkit")
    from chemteb_eval.data.quality import data_quality
    from chemteb_eval.data.types import ClassificationData

    data = ClassificationData(["CCO", "x"], [0, 1], ["C(C)O", "y"], [0, 1])
    assert data_quality({"default": {"test": data}})["same_molecule"] == 1


@pytest.mark.parametrize(
    ("sentence", "entity"),
    [
        ("Formaldehyde has CAS number 50-00-0.", "50-00-0"),
        ("Water is H2O.", "H2O"),
        ("Ethanol, CCO.", "CCO"),
        ("Formaldehyde (50-00-0) is toxic", "50-00-0"),
        ("as glucose (C6H12O6) in water", "C6H12O6"),
        ("(CAS 50-00-0)", "50-00-0"),
    ],
)
def test_attack48_an_entity_at_a_sentence_end_or_in_an_aside_is_found(
    sentence: str, entity: str
) -> None:
    pytest.importorskip("rdkit")
    assert [token for token, _ in chemistry.named_entities(sentence)] == [entity]


def test_attack48_without_rdkit_no_word_is_an_entity(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chemistry, "_chem", lambda: None)
    chemistry.word_entity.cache_clear()
    try:
        assert list(entities_in_text("hello world, H2O and CCO")) == ["formula"]
    finally:
        chemistry.word_entity.cache_clear()  # the words classed without RDKit


def _told_apart(text: str) -> bool:
    """Whether the SMILES test rejects ``text`` before RDKit sees it."""
    return chemistry._FOREIGN_LETTER.search(chemistry._BRACKET_ATOM.sub("", text)) is not None


def test_the_letters_outside_brackets_are_every_letter_rdkit_parses_there() -> None:
    """The pre-parse rule's premise, by brute force: each ASCII letter and pair of letters, as
    a molecule, after a chain, before one and inside a ring; RDKit parses none with another
    letter outside brackets. Every string RDKit parses keeps its letters."""
    pytest.importorskip("rdkit")
    import itertools
    import string

    chem = chemistry._chem()
    letters = string.ascii_letters
    for word in [*letters, *("".join(p) for p in itertools.product(letters, repeat=2))]:
        for text in (word, f"C{word}", f"{word}C", f"c1c{word}cc1", f"c1cc{word}c1"):
            if chem.MolFromSmiles(text) is not None:
                assert not _told_apart(text), text


@given(st.text("BCNOPSFIHKLZabcdeghilnoprstuz()[]=#1234@+-*.%/\\", max_size=12))
def test_no_string_rdkit_parses_is_told_apart_before_it(text: str) -> None:
    pytest.importorskip("rdkit")
    if chemistry._chem().MolFromSmiles(text) is not None:
        assert not _told_apart(text)


def test_attack48b_a_formula_that_opens_with_a_bracket_keeps_it_at_an_asides_end() -> None:
    found = list(chemistry.named_entities("salts (e.g. (NH4)2SO4) and (NH4)3PO4) were used"))
    assert found == [("(NH4)2SO4", "formula"), ("(NH4)3PO4", "formula")]


@pytest.mark.parametrize(
    "text", ["C\u00e9", "CC\u00e9", "C\u20ac", "\u20acC", "C\u00b0", "CCO\ufeff", "C\ud800"]
)
def test_attack48b_a_smiles_is_ascii(text: str) -> None:
    """RDKit skips some non-ASCII characters ("Cé" parses as C) and raises on a lone
    surrogate; a SMILES here is ASCII, as OpenSMILES defines it."""
    if chemistry.rdkit_available():
        assert not chemistry.is_smiles(text)
    assert classify(text) == "text"  # with RDKit or without: never a SMILES, never unavailable
    assert chemistry.word_entity(f"({text})") is None
