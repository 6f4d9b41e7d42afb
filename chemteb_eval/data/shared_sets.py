"""Readers for the scientific-text suite's local copies (``../shared/data``: the STS benchmark,
SemEval STS, UMNSRS term pairs, BC5CDR and SciERC NER, Reuters-12) in their original formats,
and for the restricted sets a user brings (``--data-path``).

The folder is ``$CHEMTEB_SHARED_DATA``, else ``shared/data`` beside the source checkout.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType

from chemteb_eval._env import shared_data_root
from chemteb_eval._files import parse_json
from chemteb_eval.errors import MissingDataError, short_repr
from chemteb_eval.tasks.scitext import SEMEVAL_PAIRS

from .types import ClassificationData, NerData, SplitData, StsData, WordPairData

__all__ = [  # the root re-exported for callers
    "LOCAL_READERS",
    "SHARED_FOLDERS",
    "SHARED_READERS",
    "check_copies",
    "read_bc5cdr",
    "read_ner_folder",
    "read_reuters12",
    "read_scierc",
    "read_semeval_sts",
    "read_sts_tsv",
    "read_stsb",
    "read_umnsrs",
    "repeated_pairs",
    "shared_data_root",
]


# The longest line accepted: a sentence, a term pair or a token line is far shorter; a longer
# one is a wrong file (csv's own limit, 131,072 characters, failed with no file or line).
MAX_LINE_BYTES = 100_000


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(number, text)`` of each line, its end of line removed: a line that is not UTF-8, or
    longer than ``MAX_LINE_BYTES``, is an error naming the file and the line. Read in binary,
    a bounded line at a time, so one 2 GB line costs 100 kB, not 2 GB."""
    with path.open("rb") as handle:
        for n in itertools.count(1):
            raw = handle.readline(MAX_LINE_BYTES + 1)
            if not raw:
                return
            if len(raw) > MAX_LINE_BYTES:
                raise ValueError(
                    f"{path}: line {n} is longer than {MAX_LINE_BYTES:,} bytes; is this the "
                    "right file?"
                )
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ValueError(
                    f"{path}: line {n} is not UTF-8 text (byte {exc.start + 1} of the line); "
                    "save the file as UTF-8."
                ) from None
            if n == 1:
                text = text.removeprefix("\ufeff")  # a byte-order mark, as Excel saves UTF-8
            yield n, text.rstrip("\r\n")


def _tsv_rows(path: Path) -> Iterator[tuple[int, list[str]]]:
    """Tab-separated rows with no quoting (the formats these sets use), by line number; blank
    lines (a trailing newline left by an editor) hold no row."""
    for n, text in _lines(path):
        if text.strip():
            yield n, text.split("\t")


# What each copy's folder holds (what the readers below open), for the message that asks for it.
_LAYOUT = {
    "stsb": "sts-train.csv, sts-dev.csv, sts-test.csv (the STS benchmark's tab-separated files)",
    "bc5cdr": "train.tsv, devel.tsv, test.tsv (token<TAB>IOB2 tag, a blank line between sentences)",
    "scierc": "train.tsv, dev.tsv, test.tsv (token<TAB>IOB2 tag, a blank line between sentences)",
    "umnsrs": "similarity.tsv, relatedness.tsv, similarity_mod.tsv, relatedness_mod.tsv "
    "(word1<TAB>word2<TAB>score, 0-1600)",
    "semeval_sts": "stsYYYY.<subset>.test.tsv (score<TAB>sentence 1<TAB>sentence 2)",
    "reuters12": "train.jsonl, test.jsonl ({id, text, label} lines)",
}


def _folder(name: str) -> Path:
    folder = shared_data_root() / name
    if not folder.is_dir():
        raise MissingDataError(
            f"{name}: no copy at {folder}. chemteb-eval does not ship this data set (each task's "
            f"source: `chemteb list -b SciEmbed`); put your copy there as {_LAYOUT.get(name, 'its files')}, "
            f"or set CHEMTEB_SHARED_DATA to the folder that holds {name}/."
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
    for n, row in _tsv_rows(path):
        if len(row) < 7:
            raise ValueError(f"{path}: line {n} has {len(row)} columns; expected at least 7.")
        try:
            scores.append(float(row[4]))
        except ValueError:
            raise ValueError(
                f"{path}: line {n}: score {short_repr(row[4])} is not a number."
            ) from None
        s1.append(row[5])
        s2.append(row[6])
    return StsData(sentences1=s1, sentences2=s2, scores=scores)


def _check_tag(path: Path, n: int, tag: str, previous: str, types: frozenset[str]) -> None:
    """IOB2: ``O``, ``B-T`` or ``I-T`` for a known type T, and ``I-T`` only after ``B-T``/``I-T``."""
    prefix, _, kind = tag.partition("-")
    if tag != "O" and (prefix not in ("B", "I") or kind not in types):
        raise ValueError(
            f"{path}: line {n}: unknown tag {tag!r}; expected O or B-/I- with one of "
            f"{sorted(types)}."
        )
    if prefix == "I" and previous not in (f"B-{kind}", f"I-{kind}"):
        raise ValueError(
            f"{path}: line {n}: {tag} does not continue a {kind} entity (I- without B-)."
        )


def _read_conll(
    path: Path, types: frozenset[str] | None = None
) -> tuple[list[list[str]], list[list[str]]]:
    """Sentences of ``token<TAB>tag`` lines; with ``types``, every tag is checked as IOB2."""
    tokens: list[list[str]] = []
    tags: list[list[str]] = []
    words: list[str] = []
    labels: list[str] = []
    for n, line in _lines(path):
        if not line.strip():
            if words:
                tokens.append(words)
                tags.append(labels)
                words, labels = [], []
            continue
        parts = line.split("\t")
        if len(parts) != 2:
            raise ValueError(f"{path}: line {n} is not 'token<TAB>tag'.")
        if types is not None:
            _check_tag(path, n, parts[1], labels[-1] if labels else "O", types)
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


# SciERC's six entity types (as the released data has them).
SCIERC_TYPES = frozenset({"Task", "Method", "Metric", "Material", "OtherScientificTerm", "Generic"})


def read_scierc(split: str) -> NerData:
    """SciERC scientific-entity NER (``train.tsv``, ``dev.tsv``, ``test.tsv``: token<TAB>IOB2 tag,
    a blank line between sentences): the training split for the probe, ``split`` for
    evaluation. An unknown tag, or an ``I-`` that continues no entity, is an error naming file
    and line (the released files have neither)."""
    folder = _folder("scierc")
    name = {"validation": "dev", "devel": "dev"}.get(split, split)
    if not (folder / f"{name}.tsv").is_file():
        raise ValueError(
            f"split: no SciERC split {split!r} ({folder / (name + '.tsv')} is missing)."
        )
    train_tokens, train_tags = _read_conll(folder / "train.tsv", SCIERC_TYPES)
    test_tokens, test_tags = _read_conll(folder / f"{name}.tsv", SCIERC_TYPES)
    return NerData(train_tokens, train_tags, test_tokens, test_tags)


# UMNSRS ratings are means of 0-1600 slider positions (README of ../shared/data/umnsrs).
UMNSRS_SCALE = (0.0, 1600.0)


def _scored_pair(
    path: Path, n: int, row: list[str], *, item: str, scale: tuple[float, float]
) -> tuple[str, str, float]:
    """One ``item1<TAB>item2<TAB>score`` row, checked: three columns, no empty item, a score
    that is a number on ``scale``; else an error naming file and line."""
    where = f"{path}: line {n}"
    if len(row) != 3:
        raise ValueError(f"{where} has {len(row)} columns; expected {item}1<TAB>{item}2<TAB>score.")
    first, second, raw = row
    if not first.strip() or not second.strip():
        noun = "term" if item == "word" else item
        raise ValueError(f"{where} has an empty {noun}.")
    try:
        score = float(raw)
    except ValueError:
        raise ValueError(f"{where}: score {short_repr(raw.strip())} is not a number.") from None
    low, high = scale
    if not low <= score <= high:  # also catches nan
        raise ValueError(f"{where}: score {raw.strip()} is outside the {low:g}-{high:g} scale.")
    return first, second, score


def _umnsrs_row(path: Path, n: int, row: list[str]) -> tuple[str, str, float]:
    first, second, score = _scored_pair(path, n, row, item="word", scale=UMNSRS_SCALE)
    return first.strip(), second.strip(), score


def read_umnsrs(name: str) -> WordPairData:
    """One UMNSRS set (``similarity``, ``relatedness``, ``similarity_mod``, ``relatedness_mod``):
    a TSV with the header ``word1 word2 score``. A row with an empty term, or a score that is not
    a number in 0-1600, is an error naming file and line.

    Repeated pairs are kept: the release rates some pairs twice (in separate sessions, e.g.
    Glaucoma-Fibrillation 279 and 276; similarity 14, relatedness 12, the mod sets 5 and 3 —
    ``repeated_pairs`` counts them), and the published pair counts (566, 587, 449, 458) include
    every rating."""
    path = _folder("umnsrs") / f"{name}.tsv"
    if not path.is_file():
        raise ValueError(f"umnsrs: no set {name!r} ({path} is missing).")
    terms1, terms2, scores = [], [], []
    rows = _tsv_rows(path)
    header = next(rows, (1, None))[1]
    if header != ["word1", "word2", "score"]:
        raise ValueError(
            f"{path}: line 1 is {short_repr(header, 120)}; expected word1<TAB>word2<TAB>score."
        )
    for n, row in rows:
        first, second, score = _umnsrs_row(path, n, row)
        terms1.append(first)
        terms2.append(second)
        scores.append(score)
    if not scores:
        raise ValueError(f"{path}: no term pairs.")
    return WordPairData(terms1=terms1, terms2=terms2, scores=scores)


def repeated_pairs(data: WordPairData) -> int:
    """How many rows repeat an earlier pair (either order, any case)."""
    pairs = [
        frozenset((a.lower(), b.lower())) for a, b in zip(data.terms1, data.terms2, strict=True)
    ]
    return len(pairs) - len(set(pairs))


def _umnsrs(name: str) -> Callable[[str], SplitData]:
    def read(split: str) -> SplitData:
        if split != "test":
            raise ValueError(f"split: UMNSRS has a test split only, not {split!r}.")
        return read_umnsrs(name)

    return read


STS_SCALE = (0.0, 5.0)


def _sts_row(path: Path, n: int, row: list[str]) -> tuple[str, str, float]:
    return _scored_pair(path, n, row, item="sentence", scale=STS_SCALE)


def read_sts_tsv(path: Path) -> StsData:
    """Sentence pairs from a TSV with the header ``sentence1 sentence2 score`` (0-5): an empty
    sentence, a score that is not a number in 0-5 or a wrong column count is an error naming
    file and line."""
    s1, s2, scores = [], [], []
    rows = _tsv_rows(path)
    header = next(rows, (1, None))[1]
    if header != ["sentence1", "sentence2", "score"]:
        raise ValueError(
            f"{path}: line 1 is {_short_header(header)}; expected "
            "sentence1<TAB>sentence2<TAB>score."
        )
    for n, row in rows:
        first, second, score = _sts_row(path, n, row)
        s1.append(first)
        s2.append(second)
        scores.append(score)
    if len(scores) < 2:
        raise ValueError(f"{path}: {len(scores)} sentence pair(s); a correlation needs 2.")
    return StsData(sentences1=s1, sentences2=s2, scores=scores)


def _short_header(header: list[str] | None) -> str:
    return "empty" if header is None else short_repr(header, 120)


def read_semeval_sts(year: int) -> dict[str, StsData]:
    """One SemEval STS year's English test subsets (``stsYYYY.<subset>.test.tsv``), by subset."""
    if year not in SEMEVAL_PAIRS:
        raise ValueError(f"year: SemEval STS {year!r}; use one of {list(SEMEVAL_PAIRS)}.")
    folder = _folder("semeval_sts")
    out = {}
    for subset in SEMEVAL_PAIRS[year]:
        path = folder / f"sts{year}.{subset}.test.tsv"
        if not path.is_file():
            raise ValueError(f"semeval_sts: {path} is missing (subset {subset} of {year}).")
        out[subset] = read_sts_tsv(path)
    return out


def _semeval(year: int) -> Callable[[str], Mapping[str, SplitData]]:
    def read(split: str) -> Mapping[str, SplitData]:
        if split != "test":
            raise ValueError(f"split: SemEval STS has a test split only, not {split!r}.")
        return read_semeval_sts(year)

    return read


def _reuters_docs(path: Path) -> tuple[list[str], list[str]]:
    """``(texts, labels)`` of a JSON-lines file of ``{"id", "text", "label"}`` objects; a line
    that is not such an object, or whose text is empty, is an error naming file and line."""
    texts, labels = [], []
    with path.open("rb") as handle:
        for n, raw in enumerate(handle, start=1):
            where = f"{path}: line {n}"
            try:
                doc = parse_json(raw)
            except ValueError as exc:
                raise ValueError(f"{where} is not JSON ({exc}).") from None
            if not isinstance(doc, dict):
                raise ValueError(f"{where} is {short_repr(doc)}, not a JSON object.")
            text, label = doc.get("text"), doc.get("label")
            if not isinstance(text, str) or not text.strip():
                raise ValueError(f"{where}: the document has no text ({short_repr(text)}).")
            if not isinstance(label, str) or not label:
                raise ValueError(f"{where}: label is {short_repr(label)}, not a topic name.")
            texts.append(text)
            labels.append(label)
    if not texts:
        raise ValueError(f"{path}: no documents.")
    return texts, labels


def read_reuters12(split: str) -> ClassificationData:
    """Reuters-12 (``train.jsonl``, ``test.jsonl``): the training split for the probe, ``split``
    for evaluation. A test topic the training split lacks is an error (the probe could never
    predict it)."""
    folder = _folder("reuters12")
    path = folder / f"{split}.jsonl"
    if split == "train" or not path.is_file():
        raise ValueError(f"split: no Reuters-12 evaluation split {split!r} ({path}).")
    train_texts, train_labels = _reuters_docs(folder / "train.jsonl")
    test_texts, test_labels = _reuters_docs(path)
    unseen = sorted(set(test_labels) - set(train_labels))
    if unseen:
        raise ValueError(f"{path}: topics {unseen} never occur in train.jsonl.")
    return ClassificationData(train_texts, train_labels, test_texts, test_labels)


Reader = Callable[[str], SplitData | Mapping[str, SplitData]]

# Task name -> reader of one split (one subset's data, or ``{subset: data}``), for the tasks
# with ``builder="shared"``.
SHARED_READERS: Mapping[str, Reader] = MappingProxyType(
    {
        **{f"SemEvalSTS{year}": _semeval(year) for year in SEMEVAL_PAIRS},
        "STSBenchmark": read_stsb,
        "Reuters12Classification": read_reuters12,
        "BC5CDRChemicalNER": read_bc5cdr,
        "SciERCNER": read_scierc,
        "UMNSRSSimilarity": _umnsrs("similarity"),
        "UMNSRSRelatedness": _umnsrs("relatedness"),
        "UMNSRSSimilarityMod": _umnsrs("similarity_mod"),
        "UMNSRSRelatednessMod": _umnsrs("relatedness_mod"),
    }
)


# Each shared task's folder (what its reader opens), for the check a run makes before loading a
# model: a missing copy is said then, not after minutes of model loading.
SHARED_FOLDERS: Mapping[str, str] = MappingProxyType(
    {
        **{f"SemEvalSTS{year}": "semeval_sts" for year in SEMEVAL_PAIRS},
        "STSBenchmark": "stsb",
        "Reuters12Classification": "reuters12",
        "BC5CDRChemicalNER": "bc5cdr",
        "SciERCNER": "scierc",
        **{f"UMNSRS{n}": "umnsrs" for n in ("Similarity", "Relatedness")},
        **{f"UMNSRS{n}Mod": "umnsrs" for n in ("Similarity", "Relatedness")},
    }
)


def check_copies(task_names: list[str]) -> None:
    """``MissingDataError`` naming every missing copy the tasks need, once per folder (the
    first message of ``_folder`` and a count of the others)."""
    missing: dict[str, list[str]] = {}
    for name in task_names:
        folder = SHARED_FOLDERS.get(name)
        if folder is not None and not (shared_data_root() / folder).is_dir():
            missing.setdefault(folder, []).append(name)
    if not missing:
        return
    first = next(iter(missing))
    try:
        _folder(first)
    except MissingDataError as exc:
        others = [f for f in missing if f != first]
        tail = f" Also missing: {', '.join(f + '/' for f in others)}." if others else ""
        n = sum(map(len, missing.values()))
        raise MissingDataError(f"{n} task(s) need copies not here. {exc}{tail}") from None


# -- restricted sets: the user's copy, passed as --data-path (Task.obtain names the format) ----

CONLL2003_TYPES = frozenset({"PER", "LOC", "ORG", "MISC"})
CHEMDNER_TYPES = frozenset({"Chemical"})


def read_ner_folder(folder: Path, split: str, types: frozenset[str]) -> NerData:
    """``folder/train.tsv`` (the probe's) and ``folder/<split>.tsv`` (``dev``/``devel`` alike),
    token<TAB>IOB2 tag, every tag checked against ``types`` with file and line."""
    names = {"validation": ("dev", "devel"), "dev": ("dev", "devel"), "devel": ("devel", "dev")}
    candidates = [folder / f"{name}.tsv" for name in names.get(split, (split,))]
    found = [path for path in candidates if path.is_file()]
    train = folder / "train.tsv"
    for path in (train, *(found[:1] or candidates[:1])):
        if not path.is_file():
            raise MissingDataError(
                f"{path} is missing: --data-path needs train.tsv and {split}.tsv "
                "(token<TAB>IOB2-tag lines, a blank line between sentences)."
            )
    train_tokens, train_tags = _read_conll(train, types)
    test_tokens, test_tags = _read_conll(found[0], types)
    for path, tokens in ((train, train_tokens), (found[0], test_tokens)):
        if not tokens:
            raise ValueError(f"{path}: no sentences.")
    for path, tags in ((train, train_tags), (found[0], test_tags)):
        # entity F1 over no gold entity is undefined (seqeval reports 0.0): not a score to keep
        if all(tag == "O" for sentence in tags for tag in sentence):
            raise ValueError(f"{path}: no entity at all (every tag is O); nothing to score.")
    return NerData(train_tokens, train_tags, test_tokens, test_tags)


def _local_sts(folder: Path, split: str) -> StsData:
    path = folder / f"{split}.tsv"
    if not path.is_file():
        raise MissingDataError(
            f"{path} is missing: --data-path needs {split}.tsv with the header "
            "sentence1<TAB>sentence2<TAB>score (scores 0-5)."
        )
    return read_sts_tsv(path)


def _local_ner(types: frozenset[str]) -> Callable[[Path, str], SplitData]:
    return lambda folder, split: read_ner_folder(folder, split, types)


# Task name -> reader of one split of the user's copy, for the tasks with ``builder="local"``.
LOCAL_READERS: Mapping[str, Callable[[Path, str], SplitData]] = MappingProxyType(
    {
        "ClinicalSTS2018": _local_sts,
        "ClinicalSTS2019": _local_sts,
        "CoNLL2003NER": _local_ner(CONLL2003_TYPES),
        "CHEMDNERNER": _local_ner(CHEMDNER_TYPES),
    }
)
