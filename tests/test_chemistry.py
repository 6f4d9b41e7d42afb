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


@given(st.text("0123456789", min_size=2, max_size=7), st.text("0123456789", min_size=2, max_size=2))
def test_cas_check_digit_brute_force(head: str, middle: str) -> None:
    digits = [int(c) for c in head + middle]
    check = sum(d * (i + 1) for i, d in enumerate(reversed(digits))) % 10
    assert is_cas(f"{head}-{middle}-{check}")
    assert not is_cas(f"{head}-{middle}-{(check + 1) % 10}")


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
