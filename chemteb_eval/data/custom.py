"""A user's own files as task data (``--task-file``): every row checked, the file and line named.

Layouts (``tasks.custom`` reads the task file and tells the format):

- rows (``csv``, ``jsonl``, ``parquet``): one file per split, ``<split>.<ext>`` in the source
  folder (or the source file itself for a single scored split), with the type's columns
  (``TaskKind.file_columns``, renamed by the task file's ``columns``);
- ``beir`` (retrieval): ``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl``
  (``_id``, ``text``) and ``qrels/<split>.tsv`` (``query-id``, ``corpus-id``, ``score``), as BEIR
  and MTEB write them;
- ``hub``: a folder in the Hub's Parquet layout (what ``publish-dataset`` uploads and the
  registered tasks load), read by the type's ``HUB_LOADERS`` entry.

Nothing is dropped silently: a bad row stops the load with its file and line; the one thing
left out — a query with no relevant document in the split, which no metric can score — is
counted and said through ``log``.
"""

from __future__ import annotations

import csv
import json
import math
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from chemteb_eval._files import first_non_utf8
from chemteb_eval.errors import ChemtebError
from chemteb_eval.tasks import Task

from .custom_hub import HUB_CONFIGS, hub_configs
from .hub_reader import HUB_LOADERS, SNAPSHOT_PREFIX
from .types import (
    BitextData,
    ClassificationData,
    ClusteringData,
    ClusterSet,
    PairClassificationData,
    RetrievalData,
    SplitData,
    StsData,
    TaskData,
)

__all__ = [
    "HUB_CONFIGS",
    "ROW_BUILDERS",
    "CustomDataError",
    "check_columns",
    "hub_configs",
    "read_custom",
]

_SUFFIX = {"csv": ".csv", "jsonl": ".jsonl", "parquet": ".parquet"}
Row = tuple[str, dict[str, Any]]  # (where: "file:line", the row)


class CustomDataError(ChemtebError, ValueError):
    """A row, file or split of a user's task that cannot be scored (the message names it)."""


def read_custom(
    task: Task,
    splits: Sequence[str],
    source: str | Path | None,
    *,
    log: Callable[[str], None] | None = None,
    scored: Callable[[str], None] | None = None,
) -> TaskData:
    """The data of a task declared by a task file, from its files at ``source``.

    The files are read once: copied into a private folder while their bytes are hashed, and
    parsed from the copy, so the fingerprint ``scored`` receives names exactly the bytes scored
    (a file edited while the model loaded is scored as it was copied, and named so). The copy
    goes when the data is read."""

    from chemteb_eval.tasks.source_files import read_files, snapshot

    if source is None:
        raise ChemtebError(
            f"{task.name}: its files are not given; run it with --task-file TASK_FILE "
            "(the task file names them)."
        )
    fmt = _format(task)
    path = Path(source)
    files = read_files(path, fmt, tuple(splits), task.train_split)
    with tempfile.TemporaryDirectory(prefix=SNAPSHOT_PREFIX) as tmp:
        # named by content: datasets' cache of a Hub-layout copy is then found again
        copy, fingerprint = snapshot(path, files, Path(tmp) / "data")
        if scored is not None:
            scored(fingerprint)
        if task.revision and fingerprint != task.revision and log is not None:
            log(
                f"{task.name}: its files changed after the task file was read ({task.revision} "
                f"-> {fingerprint}); the files as read now are scored, and named by {fingerprint}."
            )
        try:
            return _read(task, splits, copy, fmt, log)
        except Exception as exc:  # datasets' and pyarrow's errors are many
            # one line naming the user's file, never the private copy
            raise CustomDataError(_said(exc, str(copy), str(path))) from None


def _format(task: Task) -> str:
    """The format of a task file's data (``source.format``: csv, jsonl, parquet, beir, hub),
    as its declaration says (parsed in ``tasks``)."""
    return task.declared.source_format


def check_columns(task: Task, source: str | Path, splits: Sequence[str]) -> None:
    """Before the model loads: the header of each of the task's row files (a CSV's first line,
    a JSONL file's first object, a Parquet schema) holds every column its type needs, under the
    names the task file gives them. Every file's every missing column is named in one
    ``CustomDataError``, so one edit fixes them all. Files that are not there, and the formats
    read by other readers (BEIR's, the Hub layout), are left to the load, which checks each row."""
    from chemteb_eval.tasks.kinds import kind

    fmt, facts = _format(task), kind(task.type)
    if fmt not in _SUFFIX or facts.file_layout != "rows":
        return
    needed = [c for c in facts.file_columns if c != "id"]
    names = dict.fromkeys([*splits, *([task.train_split] if task.train_split else [])])
    problems = []
    for split in names:
        try:
            path = _split_file(task, Path(source), fmt, split)
            have = _header(path, fmt)
        except CustomDataError:
            continue  # said by the load, with the rest of what is wrong with the file
        missing = [c for c in needed if _column(task, c) not in have]
        if missing:
            wanted = ", ".join(repr(_column(task, c)) for c in missing)
            noun = "column" if len(missing) == 1 else "columns"
            problems.append(
                f"{path} lacks the {noun} {wanted} (the {', '.join(missing)} of a {task.type} "
                f"row; its columns: {', '.join(map(repr, have)) or 'none'})"
            )
    if problems:
        raise CustomDataError(
            f"{task.name}: " + "; ".join(problems) + ". Name yours in the task file's columns: "
            "{CANONICAL: YOUR_COLUMN}."
        )


def _header(path: Path, fmt: str) -> list[str]:
    """The column names of a row file, read from its start only."""
    try:
        if fmt == "csv":
            with path.open(encoding="utf-8-sig", newline="") as handle:
                return next(csv.reader(handle), [])
        if fmt == "jsonl":
            with path.open(encoding="utf-8-sig") as handle:
                first = next((line for line in handle if line.strip()), "{}")
            row = json.loads(first)
            return list(row) if isinstance(row, dict) else []
        import pyarrow.parquet as pq

        return list(pq.read_schema(path).names)
    except (OSError, ValueError, RecursionError, csv.Error) as exc:
        raise CustomDataError(f"{path}: {exc}") from None  # the load says it in full


def _said(exc: Exception, copy: str, source: str) -> str:
    """An error while reading the copy, as one line about the user's files: our own errors as
    they are, another library's with its type, its first line, at most 300 characters."""
    text = str(exc).replace(copy, source)
    if isinstance(exc, ChemtebError):
        return text
    first = (text.strip().splitlines() or [""])[0]
    first = first if len(first) <= 300 else first[:297] + "..."
    if type(exc) is ValueError:  # ours (the loader's checks): a sentence already
        return first
    return f"{source}: cannot be read as a task's data ({type(exc).__name__}: {first})"


def _read(
    task: Task, splits: Sequence[str], path: Path, fmt: str, log: Callable[[str], None] | None
) -> TaskData:
    if fmt == "hub":
        loader = HUB_LOADERS[task.type]
        assert loader is not None  # tasks.custom admits only types with file columns
        return loader(task, str(path), splits)
    if fmt == "beir":
        return {"default": {split: _beir(task, path, split, log) for split in splits}}
    build = ROW_BUILDERS[task.type]
    return {"default": {split: build(task, path, fmt, split) for split in splits}}


# -- reading rows ---------------------------------------------------------------------------


def _split_file(task: Task, source: Path, fmt: str, split: str) -> Path:
    if source.is_file():
        if len(task.eval_splits) == 1 and split in task.eval_splits:
            return source
        raise CustomDataError(
            f"{task.name}: split {split!r} needs its own file; make source.path a folder "
            f"holding {split}{_SUFFIX[fmt]} (and one file per other split)."
        )
    path = source / f"{split}{_SUFFIX[fmt]}"
    if not path.is_file():
        raise CustomDataError(f"{task.name}: split {split!r}: {path} is not there.")
    return path


def rows_of(path: Path, fmt: str) -> list[Row]:
    """Every row of a CSV, JSONL or Parquet file, with where it is (``file:line``)."""
    try:
        if fmt == "csv":
            return list(_csv_rows(path))
        if fmt == "jsonl":
            return list(_jsonl_rows(path))
        return _parquet_rows(path)
    except OSError as exc:
        raise CustomDataError(f"{path}: cannot be read ({exc.strerror or exc}).") from None
    except UnicodeDecodeError as exc:
        raise _not_utf8(path, exc) from None


def _not_utf8(path: Path, exc: UnicodeDecodeError) -> CustomDataError:
    """A file that is not UTF-8, named with the line of its first bad byte (a text stream
    decodes in blocks: the line it was reading is not that byte's)."""
    found = first_non_utf8(path)
    at, reason = (f"{path}:{found[0]}", found[1]) if found else (f"{path}", exc.reason)
    return CustomDataError(f"{at}: not UTF-8 text ({reason}); save the file as UTF-8.")


def _csv_rows(path: Path) -> Iterator[Row]:
    with path.open(encoding="utf-8-sig", newline="") as handle:  # Excel writes a BOM
        read = [0]  # lines handed to csv: its own line_num lags one on a field over its limit

        def lines() -> Iterator[str]:
            for line in handle:
                read[0] += 1
                yield line

        reader = csv.DictReader(lines())
        try:
            names = list(reader.fieldnames or [])
            twice = sorted({c for c in names if names.count(c) > 1})
            if twice:  # csv keeps the last of two same-named columns, silently
                raise CustomDataError(f"{path}:1: the header names {twice[0]!r} twice.")
            for row in reader:
                where = f"{path}:{reader.line_num}"
                if None in row or any(v is None for v in row.values()):
                    header = len(reader.fieldnames or ())
                    extra = row.get(None)  # csv's overflow key
                    count = (
                        header + len(extra) if extra else sum(v is not None for v in row.values())
                    )
                    raise CustomDataError(f"{where}: {count} fields where the header has {header}.")
                yield where, row
        except csv.Error as exc:  # a field over csv's limit, a stray NUL
            raise CustomDataError(f"{path}:{read[0]}: not a CSV row ({exc}).") from None


def _jsonl_rows(path: Path) -> Iterator[Row]:
    with path.open(encoding="utf-8-sig") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                row = json.loads(line)
            except (ValueError, RecursionError) as exc:
                raise CustomDataError(f"{where}: not a JSON object ({exc}).") from None
            if not isinstance(row, dict):
                raise CustomDataError(f"{where}: a {type(row).__name__}, not a JSON object.")
            if "\\u" in line and _surrogate(row):  # only an escape can make one
                raise CustomDataError(
                    f"{where}: a \\u escape names half a character (a lone surrogate, "
                    "D800-DFFF), which no text holds; write the character itself."
                )
            yield where, row


def _surrogate(value: Any) -> bool:
    """Whether a JSON value holds a lone surrogate (``"\\ud800"`` is valid JSON, but no UTF-8
    text: a tokenizer or RDKit raises on it far from the file)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(_surrogate(k) or _surrogate(v) for k, v in value.items())
    return isinstance(value, list) and any(_surrogate(v) for v in value)


def _parquet_rows(path: Path) -> list[Row]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (pa.ArrowException, ValueError) as exc:
        raise CustomDataError(f"{path}: not a readable Parquet file ({exc}).") from None
    return [(f"{path} row {i}", row) for i, row in enumerate(table.to_pylist(), start=1)]


def _column(task: Task, canonical: str) -> str:
    """The file's name of a canonical column (the task file's ``columns`` renames it)."""
    return next((src for src, dst in task.columns.items() if dst == canonical), canonical)


def _value(task: Task, where: str, row: Mapping[str, Any], canonical: str) -> Any:
    name = _column(task, canonical)
    if name not in row:
        raise CustomDataError(
            f"{where}: no {name!r} column (the {canonical} of a {task.type} row); name yours "
            f"in the task file's columns: {{{canonical}: YOUR_COLUMN}}."
        )
    return row[name]


def _text(task: Task, where: str, row: Mapping[str, Any], canonical: str) -> str:
    value = _value(task, where, row, canonical)
    if not isinstance(value, str):
        raise CustomDataError(f"{where}: {canonical} is {type(value).__name__}, not text.")
    if not value.strip():
        raise CustomDataError(f"{where}: {canonical} is empty.")
    return value


def _label(task: Task, where: str, row: Mapping[str, Any]) -> str | int:
    value = _value(task, where, row, "label")
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise CustomDataError(f"{where}: label is {value!r}; a label is text or an integer.")
    if isinstance(value, str) and not value.strip():
        raise CustomDataError(f"{where}: label is empty.")
    return value


def _labels(task: Task, rows: list[Row]) -> list[str | int]:
    """Every row's label, all text or all integers (a probe cannot tell 1 from "1")."""
    labels = [_label(task, w, r) for w, r in rows]
    first = type(labels[0])
    for (where, _), label in zip(rows, labels, strict=True):
        if type(label) is not first:
            raise CustomDataError(
                f"{where}: label {label!r} is {type(label).__name__}, where {rows[0][0]} has "
                f"{first.__name__}; use one kind of label throughout."
            )
    return labels


def _nonempty(task: Task, path: Path, rows: list[Row]) -> list[Row]:
    if not rows:
        raise CustomDataError(f"{task.name}: {path} has no rows.")
    return rows


# -- one builder per type of rows -----------------------------------------------------------


def _classification(task: Task, source: Path, fmt: str, split: str) -> SplitData:
    assert task.train_split is not None  # tasks.custom gives one to every type that trains
    train_path = _split_file(task, source, fmt, task.train_split)
    test_path = _split_file(task, source, fmt, split)
    train = _nonempty(task, train_path, rows_of(train_path, fmt))
    test = _nonempty(task, test_path, rows_of(test_path, fmt))
    train_labels = _labels(task, train)
    if len(set(train_labels)) < 2:
        raise CustomDataError(
            f"{task.name}: {train_path} holds one class only ({train_labels[0]!r}); a "
            "classifier needs at least two."
        )
    known = set(train_labels)
    test_labels = []
    for (where, _), label in zip(test, _labels(task, test), strict=True):
        if label not in known:
            raise CustomDataError(
                f"{where}: label {label!r} is not among the training labels of {train_path.name}."
            )
        test_labels.append(label)
    return ClassificationData(
        [_text(task, w, r, "text") for w, r in train],
        train_labels,
        [_text(task, w, r, "text") for w, r in test],
        test_labels,
    )


def _clustering(task: Task, source: Path, fmt: str, split: str) -> SplitData:
    path = _split_file(task, source, fmt, split)
    rows = _nonempty(task, path, rows_of(path, fmt))
    labels = _labels(task, rows)
    if len(set(labels)) < 2:
        raise CustomDataError(f"{task.name}: {path} holds one class only; nothing to cluster.")
    return ClusteringData((ClusterSet([_text(task, w, r, "text") for w, r in rows], labels),))


def _pair_label(where: str, value: Any) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int) and value in (0, 1):
        return value
    if isinstance(value, str) and value.strip() in ("0", "1"):
        return int(value)
    raise CustomDataError(f"{where}: label is {value!r}; a pair's label is 0 or 1.")


def _pairs(task: Task, source: Path, fmt: str, split: str) -> SplitData:
    path = _split_file(task, source, fmt, split)
    rows = _nonempty(task, path, rows_of(path, fmt))
    labels = [_pair_label(w, _value(task, w, r, "label")) for w, r in rows]
    if len(set(labels)) < 2:
        raise CustomDataError(
            f"{task.name}: {path}: every pair is labelled {labels[0]}; the best threshold "
            "needs pairs of both labels."
        )
    return PairClassificationData(
        [_text(task, w, r, "sentence1") for w, r in rows],
        [_text(task, w, r, "sentence2") for w, r in rows],
        labels,
    )


def _bitext(task: Task, source: Path, fmt: str, split: str) -> SplitData:
    path = _split_file(task, source, fmt, split)
    rows = _nonempty(task, path, rows_of(path, fmt))
    return BitextData(
        [_text(task, w, r, "sentence1") for w, r in rows],
        [_text(task, w, r, "sentence2") for w, r in rows],
    )


def _score(where: str, value: Any) -> float:
    try:
        score = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError, OverflowError):
        score = math.nan
    if not math.isfinite(score):
        raise CustomDataError(f"{where}: score is {value!r}; a similarity score is a number.")
    return score


def _sts(task: Task, source: Path, fmt: str, split: str) -> SplitData:
    path = _split_file(task, source, fmt, split)
    rows = _nonempty(task, path, rows_of(path, fmt))
    scores = [_score(w, _value(task, w, r, "score")) for w, r in rows]
    if len(set(scores)) < 2:
        raise CustomDataError(f"{task.name}: {path}: every pair has the same score; no ranking.")
    return StsData(
        [_text(task, w, r, "sentence1") for w, r in rows],
        [_text(task, w, r, "sentence2") for w, r in rows],
        scores,
    )


#: How each type of rows becomes its split data: one entry per ``TaskKind`` with
#: ``file_layout == "rows"`` and file columns (the structure test checks it).
ROW_BUILDERS: Mapping[str, Callable[[Task, Path, str, str], SplitData]] = {
    "Classification": _classification,
    "Clustering": _clustering,
    "PairClassification": _pairs,
    "BitextMining": _bitext,
    "STS": _sts,
}


# -- retrieval: BEIR's three files ----------------------------------------------------------


def _records(task: Task, path: Path, what: str) -> dict[str, str]:
    """``{id: text}`` of a BEIR corpus or queries file; titles join their text as MTEB's do."""
    if not path.is_file():
        raise CustomDataError(f"{task.name}: {path} is not there (BEIR's {what} file).")
    out: dict[str, str] = {}
    id_column, text_column = _column(task, "id"), _column(task, "text")  # once, not per line
    for where, row in _nonempty(task, path, rows_of(path, "jsonl")):
        raw = row.get("_id", row.get(id_column))
        if isinstance(raw, bool) or not isinstance(raw, (str, int)) or str(raw) == "":
            raise CustomDataError(f"{where}: no _id (each {what} line needs its id).")
        key = str(raw)
        if key in out:
            raise CustomDataError(f"{where}: id {key!r} occurs twice in {path.name}.")
        title = row.get("title") or ""
        if not isinstance(title, str):
            raise CustomDataError(f"{where}: title is {type(title).__name__}, not text.")
        body = row.get(text_column)
        if not isinstance(body, str):
            raise CustomDataError(f"{where}: text is {type(body).__name__}, not text.")
        text = f"{title} {body}".strip()
        if not text:
            raise CustomDataError(f"{where}: the {what} text is empty.")
        out[key] = text
    return out


def _qrels(
    task: Task, path: Path, queries: Mapping[str, str], corpus: Mapping[str, str]
) -> dict[str, dict[str, int]]:
    if not path.is_file():
        raise CustomDataError(f"{task.name}: {path} is not there (the split's judgements).")
    qrels: dict[str, dict[str, int]] = {}
    for where, fields in _qrel_lines(path):
        if len(fields) != 3:
            raise CustomDataError(
                f"{where}: {len(fields)} fields; a qrel is query-id, corpus-id, score "
                "(tab-separated)."
            )
        qid, did, grade = fields
        if qid not in queries:
            raise CustomDataError(f"{where}: query {qid!r} is not in queries.jsonl.")
        if did not in corpus:
            raise CustomDataError(f"{where}: document {did!r} is not in corpus.jsonl.")
        try:
            value = int(grade)
        except ValueError:
            value = -1
        if value < 0:
            raise CustomDataError(f"{where}: score {grade!r}; a grade is an integer >= 0.")
        if did in qrels.get(qid, {}):
            raise CustomDataError(f"{where}: query {qid!r}, document {did!r} judged twice.")
        qrels.setdefault(qid, {})[did] = value
    return qrels


def _qrel_lines(path: Path) -> Iterator[tuple[str, list[str]]]:
    """``(file:line, fields)`` of each line of a qrels TSV but blank ones and the header."""
    try:
        with path.open(encoding="utf-8-sig") as handle:
            for number, line in enumerate(handle, start=1):
                fields = line.rstrip("\r\n").split("\t")
                if line.strip() and not (number == 1 and fields[:2] == ["query-id", "corpus-id"]):
                    yield f"{path}:{number}", fields
    except OSError as exc:
        raise CustomDataError(f"{path}: cannot be read ({exc.strerror or exc}).") from None
    except UnicodeDecodeError as exc:
        raise _not_utf8(path, exc) from None


def _beir(task: Task, source: Path, split: str, log: Callable[[str], None] | None) -> RetrievalData:
    corpus = _records(task, source / "corpus.jsonl", "corpus")
    queries = _records(task, source / "queries.jsonl", "queries")
    qrels = _qrels(task, source / "qrels" / f"{split}.tsv", queries, corpus)
    relevant = [q for q in queries if any(g > 0 for g in qrels.get(q, {}).values())]
    if not relevant:
        raise CustomDataError(
            f"{task.name}: qrels/{split}.tsv judges no document relevant (score > 0) to any query."
        )
    # mteb2: a judged query with no relevant document is scored (0), as MTEB 2.26 does
    scored = [q for q in queries if q in qrels] if task.protocol == "mteb2" else relevant
    left = len(queries) - len(scored)
    if left and log is not None:
        how = (
            "no judgement in the split"
            if task.protocol == "mteb2"
            else "no relevant document in the split's judgements (nDCG and recall are "
            "undefined without one; protocol: mteb2 scores a judged one 0, as MTEB 2.26)"
        )
        log(f"{task.name} ({split}): {left} of {len(queries)} queries have {how}; not scored.")
    return RetrievalData(
        corpus_ids=list(corpus),
        corpus_texts=list(corpus.values()),
        query_ids=scored,
        query_texts=[queries[q] for q in scored],
        qrels={q: qrels[q] for q in scored},
    )
