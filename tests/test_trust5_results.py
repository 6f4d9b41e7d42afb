"""Trust, round 5 (results and scale): each defect class an outside attack found, a test named
after it that failed on the code before the fix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chemteb_eval.cli import main as chemteb_main
from chemteb_eval.tasks import benchmark_tasks, get_benchmark

PIPCHEM = get_benchmark("PipChem")


def _write(
    root: Path, model: str, scores: dict[str, float], extra: dict[str, Any] | None = None
) -> None:
    """``model``'s result files of PipChem's tasks in ``scores``, each with ``extra``'s keys."""
    folder = root / model.replace("/", "__") / "rev1"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model_meta.json").write_text(json.dumps({"name": model, "revision": "rev1"}))
    for task in benchmark_tasks(PIPCHEM):
        if task.name not in scores:
            continue
        entry = {
            task.main_score: scores[task.name],
            "main_score": scores[task.name],
            "hf_subset": "default",
            "languages": ["eng-Latn"],
        }
        payload = {
            "task_name": task.name,
            "dataset_revision": None,
            "evaluation_time": 1.0,
            "scores": {"test": [entry]},
            **(extra or {}),
        }
        (folder / f"{task.name}.json").write_text(json.dumps(payload))


# -- round trip: the EEE export carries what the results folder says ---------------------------


def _chemistry(per_smiles: float, unknown: float) -> dict[str, Any]:
    def side(strings: int, tokens: float, unk: float) -> dict[str, Any]:
        return {"strings": strings, "mean_tokens": tokens, "p95_tokens": 2 * tokens,
                "unk_share": unk, "cut_share": 0.0}  # fmt: skip

    return {"smiles": side(50, per_smiles, unknown), "text": side(80, 31.5, 0.0)}


def _rank(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[str, str]:
    assert chemteb_main(["rank", *args, "-b", "PipChem"]) == 0
    captured = capsys.readouterr()
    return captured.out, captured.err


def test_round_trips_software_and_chemistry_through_every_eval_ever(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The export dropped each result file's ``software`` and ``chemistry`` records: ``rank``
    noted "2 versions of numpy" on the results folder and nothing on its export, and ``rank
    --diagnostics`` said "not recorded" for the export."""
    from chemteb_eval.results.eee_check import check_record

    results, out = tmp_path / "results", tmp_path / "data"
    names = [t.name for t in benchmark_tasks(PIPCHEM)]
    software = {"numpy": "1.26.4", "torch": "2.3.1", "scikit-learn": "1.5.0"}
    _write(results, "org/a", dict.fromkeys(names, 0.5),
           {"software": software, "chemistry": _chemistry(20.0, 0.02)})  # fmt: skip
    _write(results, "org/b", dict.fromkeys(names, 0.4),
           {"software": {**software, "numpy": "2.0.1"}, "chemistry": "unknown"})  # fmt: skip
    assert chemteb_main(["export", str(results), "-b", "PipChem", "--output-dir", str(out)]) == 0
    capsys.readouterr()
    records = sorted(out.rglob("*.json"))
    assert len(records) == 2
    for path in records:  # still EEE 0.3.0 records
        check_record(json.loads(path.read_text()))
    # the library note, and the diagnostics table, the same from both
    notes = []
    for folder in (results, out):
        _, err = _rank(capsys, str(folder))
        notes.append([line for line in err.splitlines() if "versions of numpy" in line])
    assert len(notes[0]) == 1 and "1.26.4 (org/a); 2.0.1 (org/b)" in notes[0][0]
    assert notes[1] == notes[0]
    tables = [_rank(capsys, str(folder), "--diagnostics")[0] for folder in (results, out)]
    assert "not recorded" not in tables[1]
    assert tables[1] == tables[0]
    line = next(x for x in tables[1].splitlines() if x.startswith("org/a"))
    assert "20.0" in line and "2.0%" in line
    assert "unknown" in next(x for x in tables[1].splitlines() if x.startswith("org/b"))
    # a hostile record: wrong-typed software and chemistry are no record, never a crash
    hostile = [
        json.dumps([["numpy", "1.26.4"]]),  # a list, not an object
        json.dumps({"numpy": 2.0, "torch": ["2.3.1"]}),  # versions not text
        "[" * 100_000 + "]" * 100_000,  # nested past the recursion limit
        "not json",
        json.dumps(7),  # a number: no score either
    ]
    for path in records:
        record = json.loads(path.read_text())
        for i, result in enumerate(record["evaluation_results"]):
            details = result["score_details"]["details"]
            details["software"] = hostile[i % len(hostile)]
            details["chemistry"] = json.dumps({"smiles": [1, 2], "text": "x" * 50})
        check_record(record)  # details are strings: the record is EEE's
        path.write_text(json.dumps(record))
    out_text, err = _rank(capsys, str(out))
    assert "versions of numpy" not in err and "org/a" in out_text
    _rank(capsys, str(out), "--diagnostics")
    from chemteb_eval.results.board import read_results

    for model in read_results([out], PIPCHEM):
        assert len(model.scores) == 7
        for file in model.files.values():
            assert not isinstance(file.extra.get("software", {}), list)
            assert all("software" not in e for es in file.scores.values() for e in es)


def test_round_trips_records_still_pass_every_eval_evers_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The records that carry the two blocks validate against EEE 0.3.0's own schema."""
    jsonschema = pytest.importorskip("jsonschema")
    from .helpers.eee_schema import eee_schema

    results, out = tmp_path / "results", tmp_path / "data"
    names = [t.name for t in benchmark_tasks(PIPCHEM)]
    _write(results, "org/a", dict.fromkeys(names, 0.5),
           {"software": {"numpy": "1.26.4"}, "chemistry": _chemistry(20.0, 0.0)})  # fmt: skip
    assert chemteb_main(["export", str(results), "-b", "PipChem", "--output-dir", str(out)]) == 0
    capsys.readouterr()
    schema = eee_schema()
    (record,) = sorted(out.rglob("*.json"))
    body = json.loads(record.read_text())
    jsonschema.validate(body, schema)
    assert all("software" in r["score_details"]["details"] for r in body["evaluation_results"])


# -- incomplete rows: no Borda and no RRF beside the complete rows' -----------------------------


def _incomplete_board(root: Path) -> None:
    names = [t.name for t in benchmark_tasks(PIPCHEM)]
    _write(root, "org/first", dict.fromkeys(names, 0.5))
    _write(root, "org/second", dict.fromkeys(names, 0.4))
    _write(root, "org/partial", dict.fromkeys(names[:3], 0.9))  # 3 of 7, best on each


def test_incomplete_rows_get_no_borda_and_no_rrf_in_rank_and_its_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A model with 3 of PipChem's 7 tasks showed Borda 6 and an RRF beside the complete
    rows' (the #1 model's Borda 7): numbers over other tasks, not comparable."""
    _incomplete_board(tmp_path)
    out, _ = _rank(capsys, str(tmp_path))
    lines = {x.split()[1]: x for x in out.splitlines() if x.split()[1:2] and "org/" in x}
    # rank, model, mean, RRF, Borda: the partial row's are all "-"
    assert lines["org/partial"].split()[:5] == ["-", "org/partial", "-", "-", "-"]
    first = lines["org/first"].split()
    assert first[:3] == ["1", "org/first", "0.5000"] and first[4] == "7"
    assert chemteb_main(["rank", str(tmp_path), "-b", "PipChem", "--json"]) == 0
    rows = {r["model"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["org/partial"]["borda"] is None and rows["org/partial"]["rrf"] is None
    assert rows["org/first"]["borda"] == 7 and rows["org/second"]["borda"] == 0
    assert rows["org/first"]["rrf"] is not None


def test_incomplete_rows_get_no_borda_and_no_rrf_on_the_leaderboard(tmp_path: Path) -> None:
    """The leaderboard's overall table (the Space's) showed the partial row's Borda."""
    from chemteb_eval.results.board import read_results
    from chemteb_eval.results.leaderboard import build_leaderboard
    from chemteb_eval.results.ranking import rank_models

    _incomplete_board(tmp_path)
    ranked = {r.model: r for r in rank_models(read_results([tmp_path], PIPCHEM), PIPCHEM)}
    assert ranked["org/partial"].borda is None and ranked["org/partial"].rrf is None
    board = build_leaderboard([tmp_path], PIPCHEM)
    rows = {r["Model"]: r for r in board.overall}
    assert rows["org/partial"]["Borda"] is None and rows["org/partial"]["RRF"] is None
    assert rows["org/partial"]["Borda rank"] is None
    assert rows["org/first"]["Borda"] == 7 and rows["org/first"]["Borda rank"] == 1


# -- scale: a compressed corpus is scored a chunk at a time ------------------------------------


def _retrieval(n_docs: int, n_queries: int, seed: int = 0) -> Any:
    from chemteb_eval.data.types import RetrievalData

    rng = np.random.default_rng(seed)
    ids = [f"d{i}" for i in range(n_docs)]
    qids = [f"q{i}" for i in range(n_queries)]
    qrels = {
        q: {ids[int(j)]: 1} for q, j in zip(qids, rng.integers(0, n_docs, n_queries), strict=True)
    }
    return RetrievalData(ids, [""] * n_docs, qids, [""] * n_queries, qrels)


def _score_variant(data: Any, emb: dict[str, Any], variant: Any) -> dict[str, Any]:
    """What the runner does with one split of a retrieval task for a variant of its vectors."""
    from chemteb_eval.runner.kinds import ScoreContext
    from chemteb_eval.runner.score import _score_one, _Scored

    task = next(t for t in benchmark_tasks(PIPCHEM) if t.type == "Retrieval")
    return _score_one(data, emb, variant, task, _Scored(), ScoreContext(protocol="mteb2"))


def _memmap(path: Path, rows: np.ndarray) -> np.ndarray:
    np.save(path, rows)
    return np.load(path, mmap_mode="r")


def _whole(vectors: Any, variant: Any, chunk: int) -> np.ndarray:
    """The variant's corpus as the runner held it before: every calibration chunk's
    ``transform``, one array (renormalising decided once, on the group's first rows)."""
    from chemteb_eval.runner.costs import _unit_rows, transform

    renormalise = variant.dim is not None and _unit_rows(vectors)
    return np.concatenate(
        [
            np.asarray(transform(vectors[s : s + chunk], variant, renormalise=renormalise))
            for s in range(0, len(vectors), chunk)
        ]
    )


def _expected(data: Any, queries: np.ndarray, corpus: np.ndarray, variant: Any) -> dict[str, Any]:
    """The variant's scores from the whole transformed corpus (the path before)."""
    from chemteb_eval.runner.costs import transform
    from chemteb_eval.scoring.retrieval import score_retrieval

    return score_retrieval(
        np.asarray(transform(queries, variant)),
        corpus,
        data.query_ids,
        data.corpus_ids,
        data.qrels,
        return_items=True,
        no_relevant="zero",
        zero_rows="zero",
    )


def _same(found: dict[str, Any], expected: dict[str, Any]) -> None:
    items, theirs = found.pop("items"), expected.pop("items")
    assert found == expected
    assert items.keys() == theirs.keys()
    for key, values in items.items():
        np.testing.assert_array_equal(values, theirs[key])


@pytest.mark.parametrize(
    ("dim", "precision"),
    [(None, "int8"), (48, "binary"), (32, "float16"), (None, "uint4"), (16, "int4")],
)
def test_scale_a_chunked_variant_scores_what_the_whole_array_scored(
    tmp_path: Path, dim: int | None, precision: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Scored a chunk at a time, a variant's scores and items are the whole array's, bit for
    bit: calibration chunks of 500 rows (one a stub) read whole, in pieces and by index (the
    duplicates' rows), unit rows cut and renormalised, a row with no positive component."""
    from chemteb_eval.runner import costs, score
    from chemteb_eval.scoring.compression import Compression

    rng = np.random.default_rng(3)
    n = 2_345
    corpus = rng.standard_normal((n, 64)).astype(np.float32)
    corpus *= np.linspace(0.3, 2.0, n, dtype=np.float32)[:, None]  # later chunks wider
    corpus /= np.linalg.norm(corpus, axis=1, keepdims=True)  # unit rows: cut ones renormalised
    corpus[1_000] = corpus[17]  # duplicates across chunks
    corpus[2_300] = corpus[17]
    corpus[1_500] = -np.abs(corpus[1_500])  # binary: a zero row
    queries = rng.standard_normal((37, 64)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    data = _retrieval(n, 37)
    variant = Compression(dim, precision)
    emb = {"queries": queries, "corpus": _memmap(tmp_path / "c.npy", corpus)}
    monkeypatch.setattr(score, "CORPUS_CHUNK", 500)
    whole = _whole(corpus, variant, 500)
    lazy = costs.transform(emb["corpus"], variant, chunk=500)
    np.testing.assert_array_equal(np.asarray(lazy), whole)
    picks = np.array([2_300, 17, 499, 500, 1_999, 0, 2_344, 1_000])
    np.testing.assert_array_equal(lazy[picks], whole[picks])
    np.testing.assert_array_equal(lazy[450:1_700], whole[450:1_700])
    _same(_score_variant(data, emb, variant), _expected(data, queries, whole, variant))


def _peak(run: Any) -> int:
    import tracemalloc

    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        run()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def test_scale_a_compressed_memory_mapped_corpus_is_scored_in_one_chunks_memory(
    tmp_path: Path,
) -> None:
    """Scoring an int8 variant of a 200,000 x 64 memory-mapped corpus held the whole
    transformed corpus (51 MB) and its chunks' copies: 47 MiB over scoring the model's own
    vectors from the same file. Its rows are now made as the scorer reads them, a chunk at a
    time: what the variant adds is bounded by the chunk, whatever the corpus's size, and its
    scores are the whole array's, bit for bit."""
    from chemteb_eval.runner.costs import CORPUS_CHUNK
    from chemteb_eval.scoring.compression import Compression

    n, dim = 200_000, 64
    rng = np.random.default_rng(4)
    path = tmp_path / "corpus.npy"
    block = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(n, dim))
    for start in range(0, n, 25_000):
        block[start : start + 25_000] = rng.standard_normal((25_000, dim), dtype=np.float32)
    block.flush()
    del block
    corpus = np.load(path, mmap_mode="r")
    queries = rng.standard_normal((8, dim)).astype(np.float32)
    data = _retrieval(n, 8)
    int8 = Compression(precision="int8")
    found: list[dict[str, Any]] = []
    plain = _peak(
        lambda: _score_variant(data, {"queries": queries, "corpus": corpus}, Compression())
    )
    variant = _peak(
        lambda: found.append(_score_variant(data, {"queries": queries, "corpus": corpus}, int8))
    )
    one_chunk = CORPUS_CHUNK * dim * 4  # 12.2 MiB
    # before: 101.0 MiB against the model's own 52.1 (its ids' tables, the ranking's chunk);
    # now 73.6: the ranking's chunk of 65,536 made rows, and one block on the way
    print(f"peaks: variant {variant / 2**20:.1f} MiB, plain {plain / 2**20:.1f} MiB")
    assert variant - plain < 2.5 * one_chunk < n * dim * 4
    _same(found[0], _expected(data, queries, _whole(corpus, int8, CORPUS_CHUNK), int8))
