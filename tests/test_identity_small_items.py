"""Four small items: a task file that writes a key twice, a non-UTF-8 byte in any CSV (or JSONL,
or qrels) named with its line, a ChemBench confidence that is a range or a percentage, and the
"from the cache" count that a re-encoded row could drive below zero. ~2 s."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from chemteb_eval import _files
from chemteb_eval._files import first_non_utf8
from chemteb_eval.chembench.load import load_questions
from chemteb_eval.chembench.parse import extract_confidence
from chemteb_eval.data.custom import CustomDataError, rows_of
from chemteb_eval.engine import EmbeddingCache, EmbeddingEngine
from chemteb_eval.engine.cache import text_key
from chemteb_eval.results.inputs import read_model_table
from chemteb_eval.results.mteb_scores import read_mteb_csv
from chemteb_eval.tasks.custom import TaskFileError, read_task_file
from chemteb_eval.tasks.recorded import read_recorded_task

from .helpers.cache_files import to_old_layout
from .helpers.hashing_encoder import HashingEncoder
from .test_custom_tasks import _load, write_retrieval

# -- 1. a key written twice in a task file ---------------------------------------------------

_HEAD = "name: X\ntype: PairClassification\n"


@pytest.mark.parametrize(
    ("name", "text", "key", "line"),
    [
        ("top.yaml", _HEAD + "source: {path: .}\nname: Y\n", "name", 4),
        (
            "columns.yaml",
            _HEAD + "source: {path: .}\ncolumns: {sentence1: a, sentence1: b}\n",
            "sentence1",
            4,
        ),
        ("source.yaml", _HEAD + "source: {path: .}\nsource: {path: ..}\n", "source", 4),
        ("nested.yaml", _HEAD + "source:\n  path: .\n  format: csv\n  path: ..\n", "path", 6),
        ("top.json", '{"name": "X",\n "type": "STS",\n "name": "Y"}', "name", 3),
        (
            "nested.json",
            '{"name": "X", "type": "STS",\n "source": {"path": "."},\n "prompts": {"query": "a",'
            '\n  "query": "b"}}',
            "query",
            4,
        ),
    ],
)
def test_task_file_key_written_twice_is_refused(
    tmp_path: Path, name: str, text: str, key: str, line: int
) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(TaskFileError) as caught:
        read_task_file(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:{line}: key {key!r} is written twice")
    assert len(message.splitlines()) == 1
    # recorded beside results, the same file is refused the same way
    with pytest.raises(TaskFileError, match=f"{line}: key {key!r} is written twice"):
        read_recorded_task(path)


def test_task_file_key_written_twice_is_not_found_where_none_is(tmp_path: Path) -> None:
    # the same key in two mappings, a merge key overridden, a JSON string that reads like a
    # key, and a key in a list's objects: none is a key written twice
    (tmp_path / "pairs.csv").write_text("sentence1,sentence2,label\na,b,1\nc,d,0\n")
    yaml_text = (
        "name: X\ntype: PairClassification\nsource: {path: pairs.csv}\n"
        "columns: &c {sentence1: sentence1}\ndescription: 'sentence1: '\n"
    )
    (tmp_path / "t.yaml").write_text(yaml_text)
    assert read_task_file(tmp_path / "t.yaml").columns == {"sentence1": "sentence1"}
    payload = {
        "name": "X",
        "type": "PairClassification",
        "description": '"name": twice?',
        "source": {"path": "pairs.csv"},
        "main_score": "max_ap",
    }
    (tmp_path / "t.json").write_text(json.dumps(payload, indent=1))
    assert read_task_file(tmp_path / "t.json").description == '"name": twice?'


# -- 2. a byte that is not UTF-8, named with its line -----------------------------------------

# Over one 64 KiB block of good lines first: a text stream decodes in blocks, so the line it was
# reading when the error came is not the bad byte's line.
_GOOD = 3000


def _bad_csv(path: Path, header: str, row: str) -> Path:
    body = "\ufeff" + header + "\r\n" + (row + "\r\n") * _GOOD
    path.write_bytes(body.encode("utf-8") + b"\xff\xfe,x\r\n" + (row + "\r\n").encode())
    return path


def test_csv_non_utf8_byte_names_its_line_in_a_task_file_csv(tmp_path: Path) -> None:
    path = _bad_csv(tmp_path / "pairs.csv", "sentence1,sentence2,label", "a,b,1")
    with pytest.raises(CustomDataError) as caught:
        rows_of(path, "csv")
    assert str(caught.value).startswith(f"{path}:{_GOOD + 2}: not UTF-8 text (invalid start")


def test_csv_non_utf8_byte_names_its_line_in_jsonl_and_qrels(tmp_path: Path) -> None:
    lines = b"".join(
        json.dumps({"_id": str(i), "text": "t" * 30}).encode() + b"\n" for i in range(3000)
    )
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(lines + b'{"_id": "x", "text": "\xe9"}\n')
    with pytest.raises(CustomDataError, match=r"corpus\.jsonl:3001: not UTF-8 text"):
        rows_of(path, "jsonl")
    task_file = write_retrieval(tmp_path)
    qrels = tmp_path / "solvents" / "qrels" / "test.tsv"
    qrels.write_bytes(qrels.read_bytes() + b"q1\td\xff1\t1\n")
    with pytest.raises(CustomDataError) as caught:
        _load(task_file)
    assert str(caught.value).startswith(f"{qrels}:5: not UTF-8 text (invalid start byte)")


def test_csv_non_utf8_byte_names_its_line_in_the_model_table_and_mteb_scores(
    tmp_path: Path,
) -> None:
    table = _bad_csv(tmp_path / "paper_models.csv", "model_id,results_dir", "org/a,org__a")
    with pytest.raises(ValueError) as caught:
        read_model_table(table)
    assert str(caught.value).startswith(
        f"model_table: {table}: line {_GOOD + 2}: not a readable CSV row (not UTF-8 text"
    )
    scores = _bad_csv(
        tmp_path / "mteb.csv", "model_id,task,task_type,main_score", "org/a,T,Retrieval,0.5"
    )
    with pytest.raises(ValueError) as caught:
        read_mteb_csv(scores)
    assert str(caught.value).startswith(f"{scores}: line {_GOOD + 2}: not a readable CSV row")
    assert len(str(caught.value).splitlines()) == 1


def test_csv_non_utf8_byte_names_its_line_in_chembench_questions(tmp_path: Path) -> None:
    path = tmp_path / "questions.jsonl"
    path.write_bytes(b'{"name": "a"}\n{"name": "\xc3"}\n')
    with pytest.raises(ValueError, match=r"questions: .*questions\.jsonl:2: not UTF-8 text"):
        load_questions(path)


@pytest.mark.parametrize("block", [1, 2, 3, 7, 1 << 16])
def test_csv_non_utf8_byte_line_counts_every_line_end_across_blocks(
    tmp_path: Path, block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_files, "_SCAN_BLOCK", block)
    path = tmp_path / "f.csv"
    # a BOM; \r\n, a lone \r and \n (csv and text files count each as one line end); a character
    # cut at the end of the file
    path.write_bytes(b"\xef\xbb\xbfa\r\n\xc3\xa9\r\rb\n\r\n\xc3\xa9x\xc3")
    assert first_non_utf8(path) == (6, "unexpected end of data")
    path.write_bytes(b"a\r\nb\r\n\xc3\xa9\r\n")
    assert first_non_utf8(path) is None


# -- 3. a ChemBench confidence that is a range or a percentage --------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Confidence: 3-4",
        "Confidence: 3 - 4",
        "Confidence: 3 to 4",
        "Confidence: 3\u20134",
        "Confidence: 3 or 4.",
        "My confidence level is 3-4 out of 5.",
        "95% confidence: 5 of the 6 options are wrong, so B.",
        "I have 90 percent confidence: 4",
        "Confidence: 4 percent",
        "[CONFIDENCE]3-4[/CONFIDENCE]",
        "[CONFIDENCE]3 to 4[/CONFIDENCE]",
        "[CONFIDENCE]95% confidence: 5 of the 6[/CONFIDENCE]",
    ],
)
def test_chembench_confidence_range_or_percentage_is_no_confidence(text: str) -> None:
    assert extract_confidence(text) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The answer is 6. Confidence: 4", 4.0),
        ("Answer: 6\nConfidence: 4/5", 4.0),
        ("The yield is 95%, confidence: 4", 4.0),  # the percentage is another clause's
        ("Confidence: 4/5 (80%)", 4.0),
        ("Confidence: 4 [ANSWER]6[/ANSWER]", 4.0),
        ("Confidence: 4.", 4.0),
    ],
)
def test_chembench_confidence_range_rule_keeps_a_lone_number(text: str, expected: float) -> None:
    assert extract_confidence(text) == expected


# -- 4. "from the cache" never below zero ----------------------------------------------------


def _cache(tmp_path: Path, encoder: HashingEncoder) -> EmbeddingCache:
    return EmbeddingCache(tmp_path, encoder.meta.name, encoder.meta.revision, "tests")


def test_cache_hits_never_negative_when_embed_encodes_what_prefetch_never_counted(
    tmp_path: Path,
) -> None:
    encoder = HashingEncoder(dim=16)
    texts = [f"text {i}" for i in range(6)]
    cache = _cache(tmp_path, encoder)
    first = EmbeddingEngine(encoder, cache, batch_size=4, progress=False)
    first.prefetch(("", t) for t in texts[:3])
    first.close()
    cache.close()
    # one stored row damaged: prefetch counts it a hit, embed() encodes it again
    # an old cache's row (damage in block files: test_cache_layout)
    with sqlite3.connect(to_old_layout(cache.path)) as db:
        db.execute("UPDATE emb SET vec = ? WHERE key = ?", (b"bad", text_key("", texts[0])))
    cache = _cache(tmp_path, encoder)
    engine = EmbeddingEngine(encoder, cache, batch_size=4, progress=False)
    engine.prefetch(("", t) for t in texts[:3])
    assert (engine.stats.cache_hits, engine.stats.encoded) == (3, 0)
    with pytest.warns(UserWarning, match="1 stored vector"):
        # texts[3:] were never prefetched: encoded here, and never taken from the hits
        got = engine.embed(texts, "")
    assert np.array_equal(got, encoder.encode(texts, prompt="", batch_size=6))
    assert (engine.stats.cache_hits, engine.stats.encoded) == (2, 4)  # was (-1, 4)
    engine.embed(texts, "")  # all sound now: nothing encoded, nothing taken back twice
    assert (engine.stats.cache_hits, engine.stats.encoded) == (2, 4)
    engine.close()
    cache.close()


def test_cache_hits_never_negative_without_any_prefetch(tmp_path: Path) -> None:
    encoder = HashingEncoder(dim=16)
    cache = _cache(tmp_path, encoder)
    engine = EmbeddingEngine(encoder, cache, batch_size=4, progress=False)
    engine.embed(["a", "b", "c"], "")
    assert engine.stats.to_dict()["cache_hits"] == 0 and engine.stats.encoded == 3
    engine.close()
    cache.close()
