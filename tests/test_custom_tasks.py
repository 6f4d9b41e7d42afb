"""A user's own data as a task (issue 29): task files, every row checked, results that know their
data, Custom ranked apart, publish-dataset and a run from the Hub source. The runs use the hashing
encoder (no model); the Hub round trip runs against the loopback Hub (slow). ~8 s, ~20 s slow."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chemteb_eval.cli import main
from chemteb_eval.data import load_task
from chemteb_eval.data.custom import HUB_CONFIGS, ROW_BUILDERS, CustomDataError
from chemteb_eval.results.board import read_results
from chemteb_eval.results.ranking import rank_models
from chemteb_eval.results.scan import catalog_of, scan_results
from chemteb_eval.runner import run
from chemteb_eval.scoring import score_pair_classification, score_retrieval
from chemteb_eval.tasks import KINDS, get_benchmark
from chemteb_eval.tasks.catalog import TaskCatalog
from chemteb_eval.tasks.custom import TaskFileError, read_task_file

from .conftest import REPO_ROOT
from .helpers.hashing_encoder import HashingEncoder

CORPUS = [
    ("d1", "Ethanol", "Ethanol is a polar protic solvent that mixes with water."),
    ("d2", "Hexane", "Hexane is a nonpolar solvent used to extract oils from seeds."),
    ("d3", "Acetone", "Acetone is a polar aprotic solvent that dissolves plastics."),
    ("d4", "Toluene", "Toluene is an aromatic solvent used in paints."),
]
QUERIES = [("q1", "solvent to extract seed oils"), ("q2", "polar aprotic solvent"), ("q3", "x")]
QRELS = "query-id\tcorpus-id\tscore\nq1\td2\t1\nq2\td3\t2\nq2\td1\t0\n"
PAIRS = """sentence1,sentence2,label
aspirin,acetylsalicylic acid,1
ethanol,ethyl alcohol,1
aspirin,paracetamol,0
caffeine,ethanol,0
toluene,methylbenzene,1
"""


def write_retrieval(folder: Path, qrels: str = QRELS) -> Path:
    data = folder / "solvents"
    (data / "qrels").mkdir(parents=True)
    lines = [json.dumps({"_id": i, "title": t, "text": x}) for i, t, x in CORPUS]
    (data / "corpus.jsonl").write_text("\n".join(lines) + "\n")
    queries = [json.dumps({"_id": i, "text": x}) for i, x in QUERIES]
    (data / "queries.jsonl").write_text("\n".join(queries) + "\n")
    (data / "qrels" / "test.tsv").write_text(qrels)
    task_file = folder / "solvents.yaml"
    task_file.write_text("name: SolventRetrieval\ntype: Retrieval\nsource:\n  path: solvents\n")
    return task_file


def write_pairs(folder: Path, rows: str = PAIRS) -> Path:
    (folder / "synonyms.csv").write_text(rows)
    task_file = folder / "synonyms.yaml"
    task_file.write_text(
        "name: SynonymPairs\ntype: PairClassification\nsource: {path: synonyms.csv}\n"
    )
    return task_file


def declare(folder: Path, text: str, name: str = "task.yaml") -> Path:
    path = folder / name
    path.write_text(text)
    return path


# -- the task file: one line naming the key --------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- a list\n", "must be a mapping"),
        ("name: [unclosed\n", "not valid YAML"),
        ("type: Retrieval\nsource: {path: .}\n", "name is missing"),
        ("name: a/b\ntype: Retrieval\nsource: {path: .}\n", "name 'a/b'"),
        ("name: X\ntype: Reranking\nsource: {path: .}\n", "type 'Reranking'"),
        ("name: X\ntype: NER\nsource: {path: .}\n", "type 'NER'"),
        ("name: X\ntype: Retrieval\nsource: {path: .}\ncolour: red\n", "unknown key 'colour'"),
        ("name: X\ntype: Retrieval\n", "source is missing"),
        ("name: X\ntype: Retrieval\nsource: {path: ., hub: a/b}\n", "either path"),
        ("name: X\ntype: Retrieval\nsource: {hub: a/b}\n", "source.revision"),
        ("name: X\ntype: Retrieval\nsource: {hub: a/b, revision: main}\n", "40-hex"),
        ("name: X\ntype: Retrieval\nsource: {path: nowhere}\n", "does not exist"),
        ("name: X\ntype: Retrieval\nsource: {path: ., revision: x}\n", "local files have none"),
        ("name: X\ntype: Retrieval\nsource: {path: ., format: xml}\n", "source.format 'xml'"),
        ("name: X\ntype: Clustering\nsource: {path: ., format: beir}\n", "retrieval's layout"),
        ("name: X\ntype: Retrieval\nsource: {path: ., format: csv}\n", "not one file of rows"),
        ("name: X\ntype: Retrieval\nsource: {path: .}\nsplits: []\n", "splits must be"),
        ("name: X\ntype: Retrieval\nsource: {path: .}\nsplits: [a, a]\n", "twice"),
        ("name: X\ntype: Retrieval\nsource: {path: .}\ntrain_split: tr\n", "trains nothing"),
        (
            "name: X\ntype: Classification\nsource: {path: .}\nsplits: [train]\n",
            "also among splits",
        ),
        ("name: X\ntype: Retrieval\nsource: {path: .}\ncolumns: {label: y}\n", "'label' is not"),
        ("name: X\ntype: Retrieval\nsource: {path: .}\nmain_score: f1\n", "not a Retrieval"),
        ("name: X\ntype: Retrieval\nsource: {path: .}\nprompts: {passage: p}\n", "'passage'"),
    ],
)
def test_a_task_file_that_contradicts_itself_is_one_line_naming_the_key(
    tmp_path: Path, text: str, message: str
) -> None:
    (tmp_path / "corpus.jsonl").write_text("")  # a folder whose format is beir
    with pytest.raises(TaskFileError, match=message) as caught:
        read_task_file(declare(tmp_path, text))
    assert len(str(caught.value).splitlines()) == 1 and str(tmp_path) in str(caught.value)


def test_defaults_come_from_the_type(tmp_path: Path) -> None:
    declared = read_task_file(write_pairs(tmp_path))
    pairs = KINDS["PairClassification"]
    assert declared.main_score == pairs.paper_metric and declared.splits == ("test",)
    assert declared.format == "csv" and declared.train_split is None
    assert declared.fingerprint is not None and declared.fingerprint.startswith("sha256:")
    classification = read_task_file(
        declare(tmp_path, "name: C\ntype: Classification\nsource: {path: .}\n", "c.yaml")
    )
    assert classification.train_split == "train"
    task = classification.to_task()
    assert task.collection == "custom" and task.builder == "custom"
    with pytest.raises(ValueError, match="is the registered task 'PipChemWikiTopicClassification'"):
        TaskCatalog.with_tasks(
            [
                read_task_file(
                    declare(
                        tmp_path,
                        "name: PipChemWikiTopicClassification\ntype: Classification\nsource: {path: .}\n",
                        "p.yaml",
                    )
                ).to_task()
            ]
        )


def test_a_huge_task_file_is_refused_unread(tmp_path: Path) -> None:
    path = declare(tmp_path, "name: X\n" + "#" * (1 << 20))
    with pytest.raises(TaskFileError, match="over 1 MiB"):
        read_task_file(path)


# -- every row checked, the file and line named ----------------------------------------------


def _load(task_file: Path, log: Callable[[str], None] | None = None) -> Any:
    declared = read_task_file(task_file)
    task = declared.to_task()
    return load_task(task, data_path=declared.source, log=log)


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ("sentence1,sentence2,label\n", "has no rows"),
        ("sentence1,sentence2,label\na,,1\nc,d,0\n", r"synonyms.csv:2: sentence2 is empty"),
        ("sentence1,sentence2,label\na,b,1\nc,d,2\n", r"synonyms.csv:3: label is '2'"),
        ("sentence1,sentence2,label\na,b,1\nc,d,1\n", "every pair is labelled 1"),
        ("sentence1,other,label\na,b,1\nc,d,0\n", r"no 'sentence2' column .* columns: "),
        ("sentence1,sentence2,label\na,b,1,extra\n", r"synonyms.csv:2: 4 fields"),
    ],
)
def test_bad_pair_rows_name_file_and_line(tmp_path: Path, rows: str, message: str) -> None:
    with pytest.raises(CustomDataError, match=message):
        _load(write_pairs(tmp_path, rows))


def test_bad_retrieval_files_name_file_and_line(tmp_path: Path) -> None:
    task_file = write_retrieval(tmp_path, QRELS + "q9\td1\t1\n")
    with pytest.raises(CustomDataError, match=r"test.tsv:5: query 'q9' is not in queries"):
        _load(task_file)
    (tmp_path / "solvents" / "qrels" / "test.tsv").write_text(QRELS + "q1\td9\t1\n")
    with pytest.raises(CustomDataError, match=r"document 'd9' is not in corpus"):
        _load(task_file)
    (tmp_path / "solvents" / "qrels" / "test.tsv").write_text(QRELS + "q1\td1\tmany\n")
    with pytest.raises(CustomDataError, match=r"score 'many'"):
        _load(task_file)
    (tmp_path / "solvents" / "qrels" / "test.tsv").write_text(QRELS)
    corpus = tmp_path / "solvents" / "corpus.jsonl"
    corpus.write_text(corpus.read_text() + json.dumps({"_id": "d1", "text": "again"}) + "\n")
    with pytest.raises(CustomDataError, match=r"corpus.jsonl:5: id 'd1' occurs twice"):
        _load(task_file)


def test_queries_without_a_relevant_document_are_counted_not_dropped_silently(
    tmp_path: Path,
) -> None:
    said: list[str] = []
    data = _load(write_retrieval(tmp_path), said.append)["default"]["test"]
    assert data.query_ids == ["q1", "q2"] and data.corpus_texts[0].startswith("Ethanol Ethanol")
    assert len(said) == 1 and "1 of 3 queries have no relevant document" in said[0]


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_each_row_type_loads_from_each_format(tmp_path: Path, fmt: str) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    def write(name: str, rows: list[dict[str, Any]]) -> None:
        path = tmp_path / fmt / name / f"{{split}}.{fmt}"
        path.parent.mkdir(parents=True, exist_ok=True)
        for split, part in (("train", rows), ("test", rows[::-1])):
            target = Path(str(path).format(split=split))
            if fmt == "csv":
                head = ",".join(part[0])
                target.write_text(
                    head + "\n" + "".join(",".join(map(str, r.values())) + "\n" for r in part)
                )
            elif fmt == "jsonl":
                target.write_text("".join(json.dumps(r) + "\n" for r in part))
            else:
                pq.write_table(pa.Table.from_pylist(part), target)

    texts = [f"compound {i}" for i in range(6)]
    write("Classification", [{"text": t, "label": f"c{i % 2}"} for i, t in enumerate(texts)])
    write("Clustering", [{"text": t, "label": f"c{i % 2}"} for i, t in enumerate(texts)])
    write("BitextMining", [{"sentence1": t, "sentence2": t.upper()} for t in texts])
    write("STS", [{"sentence1": t, "sentence2": t, "score": i} for i, t in enumerate(texts)])
    for name in ("Classification", "Clustering", "BitextMining", "STS"):
        task_file = declare(
            tmp_path,
            f"name: My{name}\ntype: {name}\nsource: {{path: {fmt}/{name}}}\n",
            f"{name}.yaml",
        )
        data = _load(task_file)["default"]["test"]
        assert type(data).__name__ == KINDS[name].data_class


def test_the_tables_cover_every_type_a_task_file_may_declare() -> None:
    rows = {n for n, k in KINDS.items() if k.file_columns and k.file_layout == "rows"}
    assert set(ROW_BUILDERS) == rows
    assert set(HUB_CONFIGS) == {n for n, k in KINDS.items() if k.file_columns}


# -- a run: results that know their data, the task recorded, Custom ranked apart -------------


def _run(task_files: list[Path], out: Path, lines: list[str] | None = None) -> Any:
    from chemteb_eval.cli.run import _custom_tasks

    tasks, paths = _custom_tasks([str(p) for p in task_files])
    return run(
        HashingEncoder(),
        tasks=tasks,
        data_paths=paths,
        output_dir=out,
        use_cache=False,
        progress=False,
        log=(lines.append if lines is not None else lambda m: None),
    )


def test_a_run_records_its_data_and_its_task_file(tmp_path: Path) -> None:
    files = [write_retrieval(tmp_path), write_pairs(tmp_path)]
    out = tmp_path / "results"
    report = _run(files, out)
    assert report.statuses == {"SolventRetrieval": "done", "SynonymPairs": "done"}
    folder = report.results_dir
    result = json.loads((folder / "SolventRetrieval.json").read_text())
    declared = read_task_file(files[0])
    assert result["dataset_revision"] == declared.fingerprint
    recorded = (folder / "SolventRetrieval.task.yaml").read_text()
    assert "path: solvents" in recorded and str(tmp_path) not in recorded  # as written
    # the score equals the scoring function's on the same vectors
    encoder = HashingEncoder()
    data = _load(files[0])["default"]["test"]
    q = encoder.encode(data.query_texts, prompt="", batch_size=8)
    c = encoder.encode(data.corpus_texts, prompt="", batch_size=8)
    expected = score_retrieval(q, c, data.query_ids, data.corpus_ids, data.qrels)["ndcg_at_10"]
    assert result["scores"]["test"][0]["ndcg_at_10"] == expected
    pairs = _load(files[1])["default"]["test"]
    e1 = encoder.encode(pairs.sentences1, prompt="", batch_size=8)
    e2 = encoder.encode(pairs.sentences2, prompt="", batch_size=8)
    got = json.loads((folder / "SynonymPairs.json").read_text())["scores"]["test"][0]
    assert got["max_f1"] == score_pair_classification(e1, e2, pairs.labels)["max_f1"]


def test_a_rerun_on_changed_files_is_scored_again(tmp_path: Path) -> None:
    files = [write_pairs(tmp_path)]
    out = tmp_path / "results"
    first = _run(files, out)
    lines: list[str] = []
    assert _run(files, out, lines).statuses == {"SynonymPairs": "skipped"}
    (tmp_path / "synonyms.csv").write_text(PAIRS + "benzene,cyclohexane,0\n")
    again = _run(files, out, lines)
    assert again.statuses == {"SynonymPairs": "done"}
    assert any("files changed since SynonymPairs.json" in line for line in lines)
    result = json.loads((first.results_dir / "SynonymPairs.json").read_text())
    assert result["dataset_revision"] == read_task_file(files[0]).fingerprint


def test_custom_tasks_rank_apart_and_never_mix_into_a_registered_benchmark(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "results"
    _run([write_retrieval(tmp_path), write_pairs(tmp_path)], out)
    _run([write_pairs(tmp_path)], out)  # a skip: nothing new

    scanned = scan_results([out])  # what a fresh `chemteb rank` process knows: these results
    custom = catalog_of(scanned).get_benchmark("Custom")
    assert set(custom.tasks) == {"SolventRetrieval", "SynonymPairs"}
    (row,) = rank_models(read_results(scanned, custom), custom)
    assert row.complete and row.rank == 1
    pipchem = read_results(scanned, get_benchmark("PipChem"))
    assert all(not m.scores for m in pipchem)  # never mixed into another benchmark
    assert main(["rank", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    (ranked,) = json.loads(captured.out)
    assert set(ranked["means"]) == {"PairClassification", "Retrieval"}
    assert "Ranked on Custom" in captured.err


def test_the_space_shows_custom_tasks_on_their_own_board(tmp_path: Path) -> None:
    import sys

    sys.path.insert(0, str(REPO_ROOT / "space"))
    import app

    out = tmp_path / "results"
    _run([write_pairs(tmp_path)], out)
    state = app.build_state([out])
    assert state.default_benchmark == "Custom"
    assert state.boards["Custom"].overall[0]["Model"] == "test/hashing-trigrams"
    assert not any(b.overall for n, b in state.boards.items() if n != "Custom")


def test_a_hostile_recorded_task_file_is_skipped_with_the_reason(tmp_path: Path) -> None:
    out = tmp_path / "results"
    report = _run([write_pairs(tmp_path)], out)
    (report.results_dir / "SynonymPairs.task.yaml").write_text("name: [oops\n")

    (model,) = scan_results([out])
    assert any("SynonymPairs.task.yaml" in s and "not valid YAML" in s for s in model.skipped)


def test_prompts_of_a_task_file_reach_the_model(tmp_path: Path) -> None:
    write_retrieval(tmp_path)
    task_file = declare(
        tmp_path,
        "name: PromptedRetrieval\ntype: Retrieval\nsource: {path: solvents}\n"
        "prompts: {query: 'Find the solvent: '}\n",
    )
    seen: list[str] = []

    class Recording(HashingEncoder):
        def encode(self, texts: list[str], *, prompt: str, batch_size: int) -> Any:
            seen.append(prompt)
            return super().encode(texts, prompt=prompt, batch_size=batch_size)

    from chemteb_eval.cli.run import _custom_tasks

    tasks, paths = _custom_tasks([str(task_file)])
    run(
        Recording(),
        tasks=tasks,
        data_paths=paths,
        output_dir=tmp_path / "r",
        use_cache=False,
        progress=False,
        log=lambda m: None,
    )
    assert "Find the solvent: " in seen


# -- share it: publish-dataset, then a run from the Hub source (loopback Hub) ----------------

_HUB_RUN = """
import json, sys
sys.path.insert(0, sys.argv[1])
from tests.helpers.hashing_encoder import HashingEncoder
from chemteb_eval.cli.run import _custom_tasks
from chemteb_eval.runner import run
tasks, paths = _custom_tasks([sys.argv[2]])
report = run(HashingEncoder(), tasks=tasks, data_paths=paths, output_dir=sys.argv[3],
             use_cache=False, progress=False, log=lambda m: None)
print(json.dumps(report.statuses))
"""


@contextmanager
def published(tmp_path: Path, task_file: Path) -> Iterator[tuple[Any, str, str]]:
    """``publish-dataset --task-file`` to ``chemteb/sol`` on a loopback Hub: the Hub, the
    commit made and what the command printed."""
    from .helpers.fake_hub import FakeHub
    from .test_hub import TOKEN, chemteb

    hub = FakeHub()
    try:
        hub.add_token(TOKEN, "alice", orgs=("chemteb",))
        done = chemteb(
            hub,
            tmp_path,
            "publish-dataset",
            "--task-file",
            str(task_file),
            "--repo-id",
            "chemteb/sol",
        )
        assert done.returncode == 0, done.stderr
        yield hub, hub.repos[("dataset", "chemteb/sol")].refs["main"], done.stdout
    finally:
        hub.close()


@pytest.mark.slow
def test_publish_a_task_and_run_it_from_the_hub(tmp_path: Path) -> None:
    from .test_hub import python

    local = write_retrieval(tmp_path)
    ours = _run([local], tmp_path / "local")
    with published(tmp_path, local) as (hub, sha, printed):
        assert f"revision: {sha}" in printed
        card = hub.files("chemteb/sol", repo_type="dataset")["README.md"].decode()
        assert "--task-file" in card and "hub: chemteb/sol" in card
        remote = declare(
            tmp_path,
            f"name: SolventRetrieval\ntype: Retrieval\nsource: {{hub: chemteb/sol, revision: {sha}}}\n",
            "remote.yaml",
        )
        ran = python(hub, tmp_path, _HUB_RUN, str(REPO_ROOT), str(remote), str(tmp_path / "hub"))
        assert ran.returncode == 0, ran.stderr[-3000:]
        assert json.loads(ran.stdout.strip().splitlines()[-1]) == {"SolventRetrieval": "done"}
    (path,) = (tmp_path / "hub").glob("*/*/SolventRetrieval.json")
    result = json.loads(path.read_text())
    assert result["dataset_revision"] == sha
    local_result = json.loads((ours.results_dir / "SolventRetrieval.json").read_text())
    assert result["scores"] == local_result["scores"]  # the same data, the same scores
    assert np.isfinite(result["scores"]["test"][0]["ndcg_at_10"])


def test_the_worked_example_in_the_docs_runs_as_written(tmp_path: Path) -> None:
    """docs/custom_tasks.md's files (each block after a ``<!-- file: PATH -->`` marker),
    written as they are and run; the README points there."""
    import re

    text = (REPO_ROOT / "docs" / "custom_tasks.md").read_text(encoding="utf-8")
    files = re.findall(r"<!-- file: (\S+) -->\n```\w*\n(.*?)```", text, flags=re.S)
    assert len(files) == 6
    for name, body in files:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
    report = _run([tmp_path / "solvents.yaml", tmp_path / "synonyms.yaml"], tmp_path / "results")
    assert report.statuses == {"SolventRetrieval": "done", "SynonymPairs": "done"}

    scanned = scan_results([tmp_path / "results"])
    custom = catalog_of(scanned).get_benchmark("Custom")
    (row,) = rank_models(read_results(scanned, custom), custom)
    assert row.complete and set(row.means) == {"PairClassification", "Retrieval"}


def test_a_large_corpus_is_gathered_to_disk_and_scores_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over SPILL_ROWS texts, the runner writes a group's vectors to a memory-mapped file
    block by block (here: 2 texts a block) and ranks from it: the same result file."""
    import chemteb_eval.engine.encode as encode
    import chemteb_eval.runner.encode as stages

    files = [write_retrieval(tmp_path)]
    whole = _run(files, tmp_path / "whole")
    spilled: list[Any] = []
    original = encode.EmbeddingEngine.embed_to_file

    def recording(self: Any, texts: list[str], prompt: str, path: Path, *, block: int = 2) -> Any:
        out = original(self, texts, prompt, path, block=2)
        spilled.append(out)
        return out

    monkeypatch.setattr(stages, "SPILL_ROWS", 3)
    monkeypatch.setattr(encode.EmbeddingEngine, "embed_to_file", recording)

    disk = _run(files, tmp_path / "disk")
    assert len(spilled) == 1 and isinstance(spilled[0], np.memmap)  # the 4-document corpus
    assert not Path(str(spilled[0].filename)).exists()  # removed once the task was scored
    a = json.loads((whole.results_dir / "SolventRetrieval.json").read_text())["scores"]
    b = json.loads((disk.results_dir / "SolventRetrieval.json").read_text())["scores"]
    assert a == b


# -- what the outside attack on issue 29 found, fixed ----------------------------------------


def test_a_yaml_bomb_recorded_beside_results_is_refused_at_once(tmp_path: Path) -> None:
    import time

    from chemteb_eval.tasks.recorded import read_recorded_task

    out = tmp_path / "results"
    report = _run([write_pairs(tmp_path)], out)
    recorded = report.results_dir / "SynonymPairs.task.yaml"
    levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=False):
        levels.append(f"{name}: &{name} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]")
    recorded.write_text("\n".join(levels) + "\n" + recorded.read_text())
    started = time.perf_counter()
    with pytest.raises(TaskFileError, match="unknown key 'a'"):
        read_recorded_task(recorded)
    assert time.perf_counter() - started < 5


def test_a_fifo_source_is_one_line_not_a_hang(tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / "fifo.csv")
    task_file = declare(tmp_path, "name: F\ntype: PairClassification\nsource: {path: fifo.csv}\n")
    with pytest.raises(TaskFileError, match="not a regular file or a folder"):
        read_task_file(task_file)


def test_the_fingerprint_covers_only_the_files_read(tmp_path: Path) -> None:
    (tmp_path / "test.csv").write_text(PAIRS)
    task_file = declare(tmp_path, "name: Dot\ntype: PairClassification\nsource: {path: .}\n")
    first = read_task_file(task_file).fingerprint
    (tmp_path / "notes.txt").write_text("results and notes beside the data")
    (tmp_path / "results").mkdir()
    assert read_task_file(task_file).fingerprint == first
    (tmp_path / "test.csv").write_text(PAIRS + "a,b,1\n")
    assert read_task_file(task_file).fingerprint != first


def test_names_are_checked_in_any_case_and_by_publish_too(tmp_path: Path) -> None:
    with pytest.raises(TaskFileError, match="start with a letter or digit"):
        read_task_file(declare(tmp_path, "name: ..\ntype: Retrieval\nsource: {path: .}\n"))
    (tmp_path / "test.csv").write_text(PAIRS)
    task_file = declare(
        tmp_path, "name: pubchemsynonympc\ntype: PairClassification\nsource: {path: .}\n"
    )
    with pytest.raises(ValueError, match="registered task 'PubChemSynonymPC'"):
        TaskCatalog.with_tasks([read_task_file(task_file).to_task()])
    assert (
        main(["publish-dataset", "--task-file", str(task_file), "--repo-id", "a/b", "--dry-run"])
        == 2
    )


def test_mixed_labels_and_doubled_headers_name_the_file(tmp_path: Path) -> None:
    folder = tmp_path / "rows"
    folder.mkdir()
    (folder / "train.jsonl").write_text(
        json.dumps({"text": "a", "label": 1})
        + "\n"
        + json.dumps({"text": "b", "label": "1"})
        + "\n"
    )
    (folder / "test.jsonl").write_text(json.dumps({"text": "c", "label": 1}) + "\n")
    task_file = declare(tmp_path, "name: Mixed\ntype: Classification\nsource: {path: rows}\n")
    with pytest.raises(CustomDataError, match=r"train.jsonl:2: label '1' is str"):
        _load(task_file)
    with pytest.raises(CustomDataError, match="names 'sentence1' twice"):
        _load(write_pairs(tmp_path, "sentence1,sentence1,sentence2,label\na,b,c,1\n"))


def test_a_recorded_task_under_another_name_is_said_and_compare_knows_custom_tasks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:

    out = tmp_path / "results"
    files = [write_pairs(tmp_path), write_retrieval(tmp_path)]
    report = _run(files, out)
    tasks, paths = _custom_tasks_of(files)
    _run_other = run(
        HashingEncoder(name="test/other", dim=32),
        tasks=list(tasks),
        data_paths=paths,
        output_dir=out,
        use_cache=False,
        progress=False,
        log=lambda m: None,
    )
    code = main(
        [
            "compare",
            str(report.results_dir.parent),
            str(_run_other.results_dir.parent),
            "-b",
            "Custom",
        ]
    )
    assert code == 0, capsys.readouterr().err
    assert "SynonymPairs" in capsys.readouterr().out
    recorded = report.results_dir / "SynonymPairs.task.yaml"
    recorded.write_text(recorded.read_text().replace("name: SynonymPairs", "name: Other"))
    skipped = [s for m in scan_results([out]) for s in m.skipped]
    assert any("declares a task named 'Other'" in s for s in skipped)


def _custom_tasks_of(files: list[Path]) -> Any:
    from chemteb_eval.cli.run import _custom_tasks

    return _custom_tasks([str(p) for p in files])


@pytest.mark.parametrize("task_type", sorted(ROW_BUILDERS))
def test_every_row_type_round_trips_through_the_hub_layout(tmp_path: Path, task_type: str) -> None:
    """publish-dataset's layout (HUB_CONFIGS) read back by the type's Hub loader gives the very
    data the user's files gave: what a colleague runs from the Hub is what was published."""
    from chemteb_eval.data.custom import hub_configs
    from chemteb_eval.data.hub_layout import write_hub_dataset

    columns = KINDS[task_type].file_columns
    values: dict[str, Callable[[int], Any]] = {
        "text": lambda i: f"compound {i}",
        "sentence1": lambda i: f"name {i}",
        "sentence2": lambda i: f"other name {i}",
        "label": lambda i: i % 2 if task_type == "PairClassification" else f"class {i % 2}",
        "score": lambda i: float(i),
    }
    rows = [{c: values[c](i) for c in columns} for i in range(8)]
    (tmp_path / "rows").mkdir()
    for split in ("train", "test"):
        (tmp_path / "rows" / f"{split}.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in rows[::-1] if split == "train" or r)
        )
    local = read_task_file(
        declare(tmp_path, f"name: Mine\ntype: {task_type}\nsource: {{path: rows}}\n", "a.yaml")
    )
    data = load_task(local.to_task(), data_path=local.source)
    task = local.to_task()
    write_hub_dataset(
        tmp_path / "hub", hub_configs(task, data), pretty_name="Mine", license="mit", card="x"
    )
    remote = read_task_file(
        declare(
            tmp_path,
            f"name: Mine\ntype: {task_type}\nsource: {{path: hub, format: hub}}\n",
            "b.yaml",
        )
    )
    assert load_task(remote.to_task(), data_path=remote.source) == data
