"""Readers for the scientific-text suite's local copies (``../shared/data``): the STS benchmark and
BC5CDR chemical NER, in their original formats.

The folder is ``$CHEMTEB_SHARED_DATA``, else ``shared/data`` beside the source checkout.
"""

from __future__ import annotations

import csv
from pathlib import Path

from chemteb_eval._env import shared_data_root
from chemteb_eval.errors import ChemtebError

from .types import NerData, StsData

__all__ = ["read_bc5cdr", "read_stsb", "shared_data_root"]  # the root re-exported for callers


def _folder(name: str) -> Path:
    folder = shared_data_root() / name
    if not folder.is_dir():
        raise ChemtebError(
            f"{name}: no local copy at {folder}. Set CHEMTEB_SHARED_DATA to the folder holding "
            f"{name}/ (the STS benchmark or BC5CDR files), or run from a checkout beside shared/."
        )
    return folder


def read_stsb(split: str) -> StsData:
    """The STS benchmark split (``sts-{train,dev,test}.csv``: tab-separated; columns 5-7 are the
    0-5 score and the two sentences; some rows carry extra source columns after them)."""
    name = {"validation": "dev"}.get(split, split)
    path = _folder("stsb") / f"sts-{name}.csv"
    if not path.is_file():
        raise ValueError(f"split: no STS benchmark split {split!r} ({path} is missing).")
    s1, s2, scores = [], [], []
    with path.open(encoding="utf-8", newline="") as handle:
        for n, row in enumerate(
            csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE), start=1
        ):
            if len(row) < 7:
                raise ValueError(f"{path}: line {n} has {len(row)} columns; expected at least 7.")
            scores.append(float(row[4]))
            s1.append(row[5])
            s2.append(row[6])
    return StsData(sentences1=s1, sentences2=s2, scores=scores)


def _read_conll(path: Path) -> tuple[list[list[str]], list[list[str]]]:
    tokens: list[list[str]] = []
    tags: list[list[str]] = []
    words: list[str] = []
    labels: list[str] = []
    with path.open(encoding="utf-8") as handle:
        for n, line in enumerate(handle, start=1):
            line = line.rstrip("\n")
            if not line.strip():
                if words:
                    tokens.append(words)
                    tags.append(labels)
                    words, labels = [], []
                continue
            parts = line.split("\t")
            if len(parts) != 2:
                raise ValueError(f"{path}: line {n} is not 'token<TAB>tag'.")
            words.append(parts[0])
            labels.append(parts[1])
    if words:
        tokens.append(words)
        tags.append(labels)
    return tokens, tags


def read_bc5cdr(split: str) -> NerData:
    """BC5CDR chemical NER (``train.tsv``, ``devel.tsv``, ``test.tsv``: token<TAB>IOB2 tag, a blank
    line between sentences): the training split for the probe, ``split`` for evaluation."""
    folder = _folder("bc5cdr")
    name = {"validation": "devel", "dev": "devel"}.get(split, split)
    if not (folder / f"{name}.tsv").is_file():
        raise ValueError(
            f"split: no BC5CDR split {split!r} ({folder / (name + '.tsv')} is missing)."
        )
    train_tokens, train_tags = _read_conll(folder / "train.tsv")
    test_tokens, test_tags = _read_conll(folder / f"{name}.tsv")
    return NerData(train_tokens, train_tags, test_tokens, test_tags)
