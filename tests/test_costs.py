"""What a model costs (issue 38): texts cut at the model's length, variants of its vectors
scored from the cache into MTEB's experiment folders, the frontier table."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chemteb_eval.cli import main as chemteb_main
from chemteb_eval.results.frontier import _pareto, truncation_note, truncation_share
from chemteb_eval.runner import run
from chemteb_eval.runner.costs import variants
from chemteb_eval.scoring.compression import Compression, compress

from .helpers.hashing_encoder import HashingEncoder


class _Counting(HashingEncoder):
    """A hashing encoder that reads at most ``limit`` words and counts them."""

    def __init__(self, limit: int | None = 12, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.meta = dataclasses.replace(self.meta, max_tokens=limit)

    def untruncated_lengths(self, texts: list[str], *, prompt: str) -> list[int]:
        return [len((prompt + t).split()) for t in texts]


def _quiet(**options: Any) -> dict[str, Any]:
    return {"progress": False, "log": lambda m: None, **options}


# -- fast: the pure parts ---------------------------------------------------------------------


def test_variants_are_the_product_less_the_model_itself() -> None:
    found = variants([256, 128], ["int8", "binary"], 384)
    assert len(found) == 3 * 3 - 1 and Compression() not in found
    assert Compression(128, "binary") in found and Compression(None, "int8") in found
    assert variants([384], ["float32"], 384) == ()  # the model's own dimension and precision
    with pytest.raises(ValueError, match="dims: 512 is more than the model's 384"):
        variants([512], None, 384)


def test_truncation_share_and_note_hand_checked() -> None:
    record = {
        "test": {
            "queries": {
                "texts": 10,
                "truncated": 0,
                "tokens": 50,
                "tokens_cut": 0,
                "max_tokens": 8,
            },
            "documents": {
                "texts": 20,
                "truncated": 5,
                "tokens": 400,
                "tokens_cut": 100,
                "max_tokens": 8,
            },
        }
    }
    assert truncation_share(record) == (0.25, "test documents")
    note = truncation_note("T", record)
    assert note is not None and "25% of the documents of split test at its 8 tokens" in note
    assert "25% of their tokens unread" in note
    assert truncation_share({"test": {"texts": "unknown"}}) == "unknown"
    for hostile in (
        None,
        {},
        {"test": 3},
        {"test": {"t": {"texts": 0, "truncated": 0}}},
        {"test": {"t": {"texts": 2, "truncated": 3}}},
        {"test": {"t": {"texts": True, "truncated": 0}}},
        {"test": {"t": {"texts": 2, "truncated": -1}}},
    ):
        assert truncation_share(hostile) is None
    assert truncation_note("T", {"test": {"t": {"texts": 10, "truncated": 1}}}) is None


def test_pareto_keeps_rows_no_other_row_dominates() -> None:
    points = {"a": (0.9, -1536), "b": (0.8, -384), "c": (0.7, -1536), "d": (0.8, -384)}
    # c is beaten by a (better, same size); b and d tie: neither dominates the other
    assert _pareto(points) == {"a", "b", "d"}


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--dims", "0"], "dims"),
        (["--dims", "abc"], "dims"),
        (["--precisions", "int3"], "precisions"),
    ],
)
def test_bad_variant_arguments_are_one_line_naming_them(
    args: list[str], needle: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code = chemteb_main(["run", "--output-dir", str(tmp_path / "out"), *args, "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and needle in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()  # refused before anything was made


# -- slow: a run ------------------------------------------------------------------------------


@pytest.mark.slow
def test_variants_come_from_the_cache_into_mtebs_experiment_folders(
    small_suite: Path, tmp_path: Path
) -> None:
    mteb = pytest.importorskip("mteb")
    encoder = _Counting()
    out, cache = tmp_path / "results", tmp_path / "emb"
    plain = run(encoder, output_dir=out, cache_dir=cache, **_quiet())
    calls = encoder.calls
    report = run(
        encoder,
        output_dir=out,
        cache_dir=cache,
        dims=[16],
        precisions=["int8", "binary"],
        **_quiet(),
    )
    assert encoder.calls == calls  # no model call: every variant from the cached vectors
    assert set(report.statuses.values()) == {"skipped"}
    assert sorted(report.variants) == [
        "output_dtypes_binary",
        "output_dtypes_binary__truncate_dim_16",
        "output_dtypes_int8",
        "output_dtypes_int8__truncate_dim_16",
        "truncate_dim_16",
    ]
    revision = plain.results_dir
    for name, its in report.variants.items():
        assert its.results_dir == revision / "experiments" / name
        assert set(its.statuses.values()) == {"done"} and len(its.statuses) == 7
        meta = json.loads((its.results_dir / "model_meta.json").read_text())
        assert (meta["name"] == "test/hashing-trigrams" and "truncate_dim_16" in name) or True
        assert (its.results_dir / "runs.jsonl").is_file()
    # MTEB reads them as experiments of the model, by name
    loaded = mteb.ResultCache(tmp_path).load_results(
        include_remote=False, load_experiments="match_name"
    )
    assert len(loaded.model_results) == 1 + 5
    # a variant's score is its compressed vectors' score: checked by scoring them here
    its = report.variants["output_dtypes_int8__truncate_dim_16"]
    from chemteb_eval.data import load_task
    from chemteb_eval.scoring import score_retrieval
    from chemteb_eval.tasks import get_task

    task = get_task("PipChemWikiRetrieval")
    data = load_task(task)["default"]["test"]
    q = compress(
        encoder.encode(data.query_texts, prompt="query: ", batch_size=32), Compression(16, "int8")
    )
    c = compress(
        encoder.encode(data.corpus_texts, prompt="", batch_size=32), Compression(16, "int8")
    )
    expected = score_retrieval(q, c, data.query_ids, data.corpus_ids, data.qrels)["ndcg_at_10"]
    stored = json.loads((its.results_dir / "PipChemWikiRetrieval.json").read_text())
    assert math.isclose(stored["scores"]["test"][0]["main_score"], expected, rel_tol=1e-9)
    assert stored["storage"] == {
        "dim": 16,
        "precision": "int8",
        "bytes_per_vector": 16,
        "vectors": len(set(data.corpus_texts)),
        "index_bytes": 16 * len(set(data.corpus_texts)),
    }
    # a rerun skips every variant; --overwrite scores them again to the same numbers
    again = run(
        encoder, output_dir=out, cache_dir=cache, dims="16", precisions="int8,binary", **_quiet()
    )
    assert all(set(v.statuses.values()) == {"skipped"} for v in again.variants.values())
    redo = run(
        encoder,
        output_dir=out,
        cache_dir=cache,
        dims="16",
        precisions="int8,binary",
        overwrite=True,
        **_quiet(),
    )
    for name, v in redo.variants.items():
        assert v.main_scores == report.variants[name].main_scores


@pytest.mark.slow
def test_truncation_is_counted_per_split_and_side(small_suite: Path, tmp_path: Path) -> None:
    encoder = _Counting(limit=12)
    report = run(encoder, output_dir=tmp_path, use_cache=False, **_quiet())
    record = report.truncation["PipChemWikiRetrieval"]
    from chemteb_eval.data import load_task
    from chemteb_eval.tasks import get_task

    data = load_task(get_task("PipChemWikiRetrieval"))["default"]["test"]
    docs = sorted(set(data.corpus_texts))
    words = [len(t.split()) for t in docs]
    assert record["test"]["documents"] == {
        "texts": len(docs),
        "truncated": sum(w > 12 for w in words),
        "tokens": sum(words),
        "tokens_cut": sum(max(w - 12, 0) for w in words),
        "max_tokens": 12,
    }
    assert set(record["test"]) == {"queries", "documents"}
    assert set(report.truncation["PipChemWikiTopicClassification"]["test"]) == {"texts"}
    # an encoder that cannot count says so
    blind = run(HashingEncoder(name="test/blind"), output_dir=tmp_path, use_cache=False, **_quiet())
    assert blind.truncation["PipChemWikiRetrieval"] == {
        "test": {"queries": "unknown", "documents": "unknown"}
    }


@pytest.mark.slow
def test_the_frontier_table_and_json(
    small_suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    encoder = _Counting(limit=12)
    run(encoder, output_dir=tmp_path, use_cache=False, precisions=["binary"], **_quiet())
    assert chemteb_main(["rank", str(tmp_path), "--frontier", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    by_name = {r["model"]: r for r in rows}
    full, binary = (
        by_name["test/hashing-trigrams"],
        by_name["test/hashing-trigrams (output_dtypes=binary)"],
    )
    assert full["bytes_per_vector"] == 64 * 4 and binary["bytes_per_vector"] == 8
    assert binary["pareto_size"]  # the smallest row is always on the size frontier
    for r in rows:
        assert (
            len(r["task_index_bytes"]) == 7
            and sum(r["task_index_bytes"].values()) == r["index_bytes"]
        )
        assert r["interval"][0] <= r["score"] <= r["interval"][1]
        assert r["texts_per_second"] > 0 and 0 <= r["truncated"] <= 1
    assert chemteb_main(["rank", str(tmp_path), "--frontier"]) == 0
    text = capsys.readouterr().out
    assert "bytes/vec" in text and "(output_dtypes=binary)" in text


def test_a_zero_row_of_a_compressed_variant_has_cosine_zero_as_in_mteb() -> None:
    from chemteb_eval.scoring import score_bitext_mining, score_pair_classification

    src = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    tgt = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]], dtype=np.float32)
    with pytest.raises(ValueError, match="all zeros"):
        score_bitext_mining(src, tgt)
    out = score_bitext_mining(src, tgt, zero_rows="zero")
    assert out["accuracy"] == pytest.approx(2 / 3)  # the zero row matches nothing
    pair = score_pair_classification(src, tgt, [1, 0, 1], zero_rows="zero")
    # sklearn's paired cosine (MTEB's) gives the zero row similarity 0: below both positives
    assert pair["cosine_ap"] == 1.0


@pytest.mark.slow
def test_the_worked_example_of_docs_costs_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/costs.md: the custom-task example's files, its command as written (the bundled
    MiniLM, offline), and what it prints: per model and variant the mean with its interval,
    bytes per vector, texts/s and the share cut; then its EEE records, valid."""
    import re
    import shlex

    from .conftest import REPO_ROOT
    from .helpers.eee_schema import eee_schema

    example = (REPO_ROOT / "docs" / "custom_tasks.md").read_text(encoding="utf-8")
    for name, body in re.findall(r"<!-- file: (\S+) -->\n```\w*\n(.*?)```", example, flags=re.S):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(body)
    page = (REPO_ROOT / "docs" / "costs.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- block: slow[^\n]*\n```bash\n(.*?)```", page, flags=re.S)
    assert block is not None
    run_line, export_line = block.group(1).strip().splitlines()
    monkeypatch.chdir(tmp_path)
    assert chemteb_main([*shlex.split(run_line)[1:], "--quiet"]) == 0
    printed = capsys.readouterr().out
    table = printed.split("The frontier (chemteb rank results --frontier):")[1]
    rows = [line for line in table.splitlines() if "sentence-transformers/all-MiniLM-L6-v2" in line]
    assert len(rows) == 9  # the model and 8 variants
    for line in rows:
        # mean, its interval, the rank interval, bytes per vector, index, texts/s, cut
        assert re.search(
            r" \d\.\d{4} \d\.\d{4}-\d\.\d{4} +\d+-\d+ +[\d,]+ +[\d.]+ k?B +\d+ +\d+%$", line
        ), line
    assert re.search(r"\(output_dtypes=binary, truncate_dim=128\) .* 16 ", printed)
    assert "SolventRetrieval" in printed and "cut" in printed
    assert chemteb_main(shlex.split(export_line)[1:]) == 0
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft7Validator(eee_schema())
    records = sorted((tmp_path / "eee").rglob("*.json"))
    assert len(records) == 9
    for path in records:
        assert not list(validator.iter_errors(json.loads(path.read_text())))


# -- what the outside attack on issue 38 found, fixed -------------------------------------------


@pytest.fixture(scope="module")
def varied(small_suite: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("varied") / "results"
    run(
        HashingEncoder(),
        output_dir=out,
        use_cache=False,
        dims=[16],
        precisions=["int8", "binary"],
        **_quiet(),
    )
    return out


def _copy(varied: Path, tmp_path: Path) -> tuple[Path, Path]:
    import shutil

    root = tmp_path / "results"
    shutil.copytree(varied, root)
    (revision,) = root.glob("test__hashing-trigrams/*")
    return root, revision


def _frontier_json(root: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    capsys.readouterr()
    assert chemteb_main(["rank", str(root), "--frontier", "--json"]) == 0
    return {r["model"]: r for r in json.loads(capsys.readouterr().out)}


@pytest.mark.slow
def test_a_huge_index_size_or_speed_in_a_file_is_unknown_not_a_crash(
    varied: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, revision = _copy(varied, tmp_path)
    folder = revision / "experiments" / "output_dtypes_int8"
    path = folder / "PipChemWikiRetrieval.json"
    path.write_text(
        path.read_text().replace('"index_bytes": ', '"index_bytes": 1' + "0" * 400 + ', "x": ', 1)
    )
    runs = folder / "runs.jsonl"
    runs.write_text(
        re.sub(
            r'"texts_per_second": [0-9.e+-]+', '"texts_per_second": 1' + "0" * 400, runs.read_text()
        )
    )
    rows = _frontier_json(root, capsys)
    int8 = rows["test/hashing-trigrams (output_dtypes=int8)"]
    assert int8["index_bytes"] is None and int8["texts_per_second"] is not None
    assert int8["texts_per_second"] < 1e9
    assert chemteb_main(["rank", str(root), "--frontier"]) == 0
    from chemteb_eval.results.leaderboard import build_leaderboard
    from chemteb_eval.tasks import get_benchmark

    board = build_leaderboard([root], get_benchmark("PipChem"))
    assert len(board.frontier) == 6


@pytest.mark.slow
def test_a_copied_experiment_folder_is_its_own_row_and_moves_no_other_rows_interval(
    varied: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    root, revision = _copy(varied, tmp_path)
    before = _frontier_json(root, capsys)
    experiments = revision / "experiments"
    shutil.copytree(experiments / "output_dtypes_binary", experiments / "output_dtypes_binary.bak")
    (experiments / "output_dtypes_int8" / "PipChemWikiRetrieval.items.npz").unlink()
    after = _frontier_json(root, capsys)
    binary = [name for name in after if "output_dtypes=binary)" in name]
    assert len(binary) == 2 and len(set(binary)) == 2  # told apart by their experiment folders
    assert any("experiments/output_dtypes_binary.bak" in name for name in binary)
    for name in ("test/hashing-trigrams", "test/hashing-trigrams (truncate_dim=16)"):
        assert after[name]["interval"] == before[name]["interval"]  # others' evidence untouched
    int8 = after["test/hashing-trigrams (output_dtypes=int8)"]
    assert "PipChemWikiRetrieval" in int8["fixed_tasks"]  # said, not silently held
    assert (
        "PipChemWikiRetrieval"
        not in before["test/hashing-trigrams (output_dtypes=int8)"]["fixed_tasks"]
    )


@pytest.mark.slow
def test_a_run_killed_between_the_evidence_and_the_result_scores_the_task_again(
    small_suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chemteb_eval.results.schema import ResultFile

    original = ResultFile.write
    calls = {"n": 0}

    def dying(self: ResultFile, folder: Path) -> Path:
        calls["n"] += 1
        if calls["n"] == 1:
            raise KeyboardInterrupt  # killed after the evidence, before the result
        return original(self, folder)

    monkeypatch.setattr(ResultFile, "write", dying)
    with pytest.raises(KeyboardInterrupt):
        run(HashingEncoder(), output_dir=tmp_path, cache_dir=tmp_path / "emb", **_quiet())
    monkeypatch.setattr(ResultFile, "write", original)
    (folder,) = tmp_path.glob("test__hashing-trigrams/*")
    assert [p.name for p in folder.glob("*.items.npz")] == [
        "PipChemWikiTopicClassification.items.npz"
    ]
    assert not (folder / "PipChemWikiTopicClassification.json").exists()
    again = run(HashingEncoder(), output_dir=tmp_path, cache_dir=tmp_path / "emb", **_quiet())
    first = next(iter(again.statuses))
    assert again.statuses[first] == "done"  # pending again: its result was never written
    assert (again.results_dir / f"{first}.json").is_file()


@pytest.mark.slow
def test_eee_records_carry_no_local_path_and_a_rerun_rewrites_the_same_files(
    small_suite: Path, varied: Path, tmp_path: Path
) -> None:
    root, _ = _copy(varied, tmp_path)
    twin = tmp_path / "twin"
    run(HashingEncoder(), output_dir=twin, use_cache=False, **_quiet())
    first = tmp_path / "eee"
    assert chemteb_main(["export", str(root), str(twin), "--output-dir", str(first)]) == 0
    records = sorted(first.rglob("*.json"))
    for path in records:
        record = json.loads(path.read_text())
        assert "[" not in record["model_info"]["name"] and str(tmp_path) not in path.read_text()
    # the same model rerun (--overwrite): other timings, the same scores: the same files
    run(
        HashingEncoder(),
        output_dir=root,
        use_cache=False,
        dims=[16],
        precisions=["int8", "binary"],
        overwrite=True,
        **_quiet(),
    )
    assert chemteb_main(["export", str(root), str(twin), "--output-dir", str(first)]) == 0
    assert sorted(first.rglob("*.json")) == records


def test_a_superscript_dimension_is_refused_naming_dims(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code = chemteb_main(["run", "--output-dir", str(tmp_path / "o"), "--dims", "\u00b2", "--quiet"])
    assert code == 2 and "dims" in capsys.readouterr().err


def test_the_frontier_plot_draws_a_negative_interval() -> None:
    import sys

    from .conftest import REPO_ROOT

    sys.path.insert(0, str(REPO_ROOT / "space"))
    try:
        from tabs.frontier import frontier_figure
    finally:
        sys.path.remove(str(REPO_ROOT / "space"))
    row = {
        "Model": "m",
        "Mean": 0.0,
        "95% CI": "-0.0500-0.0300",
        "Bytes/vector": 8,
        "Pareto (size)": "yes",
        "Rank 95%": "",
        "Texts/s": 1.0,
        "Cut": "",
    }
    fig = frontier_figure("B", [row])
    bars = fig.data[0].error_y
    assert list(bars.array) == [pytest.approx(0.03)] and list(bars.arrayminus) == [
        pytest.approx(0.05)
    ]


@pytest.mark.slow
def test_rank_shows_the_cut_column_and_json_key(
    varied: Path, small_suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    counted = tmp_path / "counted"
    run(_Counting(limit=12, name="test/counting"), output_dir=counted, use_cache=False, **_quiet())
    capsys.readouterr()
    assert chemteb_main(["rank", str(varied), str(counted), "--json"]) == 0
    rows = {r["model"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["test/hashing-trigrams"]["cut"] == "unknown"  # it cannot count its tokens
    share = rows["test/counting"]["cut"]
    assert isinstance(share, float) and 0 < share <= 1
    assert chemteb_main(["rank", str(varied), str(counted)]) == 0
    text = capsys.readouterr().out
    header = next(line for line in text.splitlines() if line.startswith("rank "))
    assert header.rstrip().endswith("Cut")
    line = next(line for line in text.splitlines() if "test/counting" in line)
    assert line.rstrip().endswith(f"{share:.0%}")


# -- the second outside attack on issue 38, fixed -----------------------------------------------


@pytest.mark.slow
def test_push_results_refuses_a_variants_folder(varied: Path, tmp_path: Path) -> None:
    from chemteb_eval.hub.model_card import find_task_results

    _, revision = _copy(varied, tmp_path)
    for path in (revision / "experiments" / "output_dtypes_int8", revision / "experiments"):
        with pytest.raises(
            ValueError, match=r"holds (a variant of the model|the model's variants)"
        ):
            find_task_results(path, log=lambda m: None)
    # the model's own folder still reads (its PipChem tasks are skipped: built locally)
    assert find_task_results(revision, log=lambda m: None) == ("test/hashing-trigrams", [])


def test_names_with_control_or_bidi_characters_are_shown_as_question_marks() -> None:
    import sys

    from chemteb_eval._files import csv_safe
    from chemteb_eval.results.markup import md, plot_text

    from .conftest import REPO_ROOT

    sys.path.insert(0, str(REPO_ROOT / "space"))
    try:
        from views import _model_cell
    finally:
        sys.path.remove(str(REPO_ROOT / "space"))
    hostile = "name\x1b[31mRED\u202eabc (output_dtypes=int8)"
    for shown_text in (_model_cell(hostile, True), plot_text(hostile), csv_safe(hostile)):
        assert "\x1b" not in shown_text and "\u202e" not in shown_text
        assert "?" in shown_text and "int8" in shown_text
    assert "\x1b" not in md(hostile)  # any Markdown: no terminal escape
    assert csv_safe("=1+1\u202e").startswith("'")  # still a neutralised formula


def test_a_share_that_rounds_to_zero_is_not_shown_as_zero() -> None:
    from chemteb_eval.results.frontier import cut_cell

    assert cut_cell(40 / 10033) == "<1%" and cut_cell(0.0) == "0%" and cut_cell(0.12) == "12%"
    assert cut_cell(None) == "" and cut_cell("unknown") == "unknown"


def test_a_float16_variant_beyond_its_range_says_so() -> None:
    from chemteb_eval.runner.costs import transform

    vectors = np.array([[1.0, 100_000.0], [0.5, 0.25]], dtype=np.float32)
    with pytest.raises(
        ValueError, match=r"float16: a component .* beyond float16's range \(65504\)"
    ):
        transform(vectors, Compression(precision="float16"))
    assert np.isfinite(transform(vectors, Compression(precision="bfloat16"))).all()
