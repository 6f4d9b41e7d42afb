"""The adversarial suite, round 2 (issue 25): what issues 14-19 added, attacked as an outsider
would — evidence files, ``compare``, ``compare-domains`` and its CSV, ``rank --ci --json``,
``rank --correlations``, local model folders, run records. Tests are named by the issue's item.
Every entry point answers with a result, a notice or one line naming the file: never a
traceback or a silently wrong number.
"""

from __future__ import annotations

import json
import math
import sys
import warnings
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chemteb_eval.cli import main as chemteb_main
from chemteb_eval.results import evidence as evidence_module
from chemteb_eval.results.board import read_results
from chemteb_eval.results.compare import compare_models, format_p, load_model
from chemteb_eval.results.correlations import pearson, spearman
from chemteb_eval.results.domains import compare_domains
from chemteb_eval.results.evidence import check_evidence, read_items
from chemteb_eval.results.io import model_dir
from chemteb_eval.results.mteb_scores import (
    MtebScores,
    check_mteb_score,
    read_mteb_csv,
    read_mteb_folder,
)
from chemteb_eval.results.ranking import rank_uncertainty, task_interval
from chemteb_eval.results.runs import run_record
from chemteb_eval.results.schema import write_items
from chemteb_eval.scoring.uncertainty import min_tasks_for, sign_flip_test
from chemteb_eval.tasks import benchmark_tasks, get_benchmark, main_score

from .conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "space"))

PIPCHEM = get_benchmark("PipChem")
RETRIEVAL = next(t for t in benchmark_tasks(PIPCHEM) if t.type == "Retrieval")
N_QUERIES = 40


def _per_query(level: float, seed: int) -> np.ndarray:
    """Per-query nDCG@10 values around ``level`` in [0, 1]."""
    rng = np.random.default_rng(seed)
    return np.clip(level + rng.normal(0, 0.05, N_QUERIES), 0, 1)


def _write_model(root: Path, name: str, level: float, seed: int, items: bool = True) -> Path:
    """A model's PipChem results: every task's main score near ``level``; the retrieval task's
    per-query items beside its JSON (their mean is the JSON's score, as a run writes them)."""
    folder = root / name / "rev"
    folder.mkdir(parents=True)
    per_query = _per_query(level, seed)
    for i, task in enumerate(benchmark_tasks(PIPCHEM)):
        key = main_score(PIPCHEM, task)
        score = float(per_query.mean()) if task is RETRIEVAL else level + 0.001 * i
        entry = {key: score, "main_score": score, "hf_subset": "default"}
        payload = {
            "task_name": task.name,
            "dataset_revision": task.revision,
            "evaluation_time": 1.0,
            "scores": {"test": [entry]},
        }
        (folder / f"{task.name}.json").write_text(json.dumps(payload))
    if items:
        arrays = {"ndcg_at_10": per_query, "query_ids": np.array([f"q{i}" for i in range(40)])}
        write_items(folder / f"{RETRIEVAL.name}.items.npz", {("test", "default"): arrays})
    return folder


@pytest.fixture
def three(tmp_path: Path) -> Path:
    root = tmp_path / "results"
    for name, level, seed in (("org__best", 0.9, 1), ("org__mid", 0.6, 2), ("org__last", 0.2, 3)):
        _write_model(root, name, level, seed)
    return root


def _items_path(root: Path, model: str) -> Path:
    return root / model / "rev" / f"{RETRIEVAL.name}.items.npz"


def _replace_items(root: Path, model: str, **arrays: Any) -> None:
    write_items(_items_path(root, model), {("test", "default"): arrays})


def _notices(models: list[Any]) -> list[str]:
    return [s for m in models for s in m.skipped]


# -- item 1: evidence files are untrusted ------------------------------------------------------


def test_item1_good_evidence_is_used(three: Path) -> None:
    models = read_results([three], PIPCHEM)
    assert _notices(models) == []
    interval = task_interval(models[0], PIPCHEM, RETRIEVAL)
    assert interval is not None and interval[0] < models[0].scores[RETRIEVAL.name] < interval[1]
    assert _notices(models) == []


def test_item1_a_nan_item_does_not_tie_the_last_model_with_the_first(three: Path) -> None:
    values = _per_query(0.2, 3)
    values[5] = np.nan
    _replace_items(three, "org__last", ndcg_at_10=values)
    models = read_results([three], PIPCHEM)
    intervals = rank_uncertainty(models, PIPCHEM)
    assert not intervals["org/last"]["tied_with_top"]
    assert intervals["org/last"]["rank_low"] == intervals["org/last"]["rank_high"] == 3
    notes = _notices(models)
    assert len(notes) == 1 and "NaN" in notes[0] and "evidence left out" in notes[0]
    assert str(_items_path(three, "org__last")) in notes[0]


def test_item1_items_that_disagree_with_the_json_are_left_out(three: Path) -> None:
    # items of a much better model planted beside the last model's JSON
    _replace_items(three, "org__last", ndcg_at_10=_per_query(0.95, 9))
    models = read_results([three], PIPCHEM)
    intervals = rank_uncertainty(models, PIPCHEM)
    for model, row in intervals.items():  # a point rank always lies inside its interval
        assert row["rank_low"] <= row["rank"] <= row["rank_high"], model
    assert any("the result file says" in n for n in _notices(models))
    last = next(m for m in models if m.model == "org/last")
    assert task_interval(last, PIPCHEM, RETRIEVAL) is None


def test_item1_out_of_range_and_inf_items_are_left_out(three: Path) -> None:
    for bad in (np.full(N_QUERIES, 1.5), np.full(N_QUERIES, -0.1), np.full(N_QUERIES, np.inf)):
        _replace_items(three, "org__mid", ndcg_at_10=bad)
        models = read_results([three], PIPCHEM)
        mid = next(m for m in models if m.model == "org/mid")
        assert task_interval(mid, PIPCHEM, RETRIEVAL) is None
        assert len(mid.skipped) == 1


def test_item1_sizes_are_checked_from_the_headers_before_loading(
    three: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _items_path(three, "org__mid")
    # a zip whose member declares more unpacked bytes than the limit: refused unread
    monkeypatch.setattr(evidence_module, "MAX_ITEMS_BYTES", 2**20)
    _replace_items(three, "org__mid", ndcg_at_10=np.zeros(2**18))  # 2 MiB of zeros, ~2 KB
    assert path.stat().st_size < 20_000
    with pytest.raises(ValueError, match="over the 1,048,576 limit"):
        read_items(path)
    # an .npy header declaring 10**12 rows in a member of a few hundred bytes
    header = np.lib.format.header_data_from_array_1_0(np.zeros(3))
    header["shape"] = (10**12,)
    with (
        zipfile.ZipFile(path, "w") as archive,
        archive.open("test/default/ndcg_at_10.npy", "w") as out,
    ):
        np.lib.format.write_array_header_1_0(out, header)
        out.write(np.zeros(3).tobytes())
    with pytest.raises(ValueError, match="more than the member holds"):
        read_items(path)


def test_item1_a_pickled_or_structured_array_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.items.npz"
    arrays: dict[str, Any] = {"test/default/ndcg_at_10": np.array([{"a": 1}], dtype=object)}
    np.savez(path, allow_pickle=True, **arrays)
    with pytest.raises(ValueError, match="not a number or text array"):
        read_items(path)
    arrays = {"test/default/y": np.zeros(2, dtype=[("a", "f8")])}
    np.savez(path, allow_pickle=True, **arrays)
    with pytest.raises(ValueError, match="not a number or text array"):
        read_items(path)


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(
        st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=0, max_size=30
    ),
    score=st.floats(min_value=0, max_value=1),
)
def test_item1_check_evidence_accepts_only_items_that_reproduce_a_valid_score(
    values: list[float], score: float
) -> None:
    arr = np.array(values, dtype=np.float64)
    try:
        found = check_evidence("Retrieval", {"ndcg_at_10": arr}, "ndcg_at_10", score)
    except ValueError:
        return
    assert np.isfinite(arr).all() and ((arr >= 0) & (arr <= 1)).all() and arr.size > 0
    assert abs(found.statistic(np.arange(found.n)) - score) <= 1e-5


# -- item 14: one malformed items file costs its task's interval, nothing else -----------------


def _malformed(path: Path, kind: str) -> None:
    good = path.read_bytes()
    if kind == "empty":
        path.write_bytes(b"")
    elif kind == "truncated":
        path.write_bytes(good[: len(good) // 2])
    elif kind == "missing key":
        write_items(path, {("test", "default"): {"recall_at_10": _per_query(0.6, 2)}})
    elif kind == "2-D":
        write_items(path, {("test", "default"): {"ndcg_at_10": np.zeros((2, 20))}})
    elif kind == "text":
        path.write_text("ndcg_at_10,0.5\n")
    elif kind == "bad member name":
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("../../etc/passwd", b"x")


MALFORMED = ("empty", "truncated", "missing key", "2-D", "text", "bad member name")


@pytest.mark.parametrize("kind", MALFORMED)
def test_item14_malformed_items_files_give_a_notice_in_rank_ci_and_compare(
    three: Path, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _items_path(three, "org__mid")
    _malformed(path, kind)
    assert chemteb_main(["rank", str(three), "-b", "PipChem", "--ci"]) == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and "95% rank" in captured.out
    assert f"[skipped] {path}: evidence left out" in captured.err
    a, b = str(three / "org__best"), str(three / "org__mid")
    assert chemteb_main(["compare", a, b, "-b", "PipChem", "--resamples", "100"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith(RETRIEVAL.name))
    assert "no per-item evidence" in row


def test_item14_the_space_starts_with_malformed_items(three: Path) -> None:
    import app

    for kind in MALFORMED:
        _malformed(_items_path(three, "org__mid"), kind)
        state = app.build_state([three], default_benchmark="PipChem")
        board = state.boards["PipChem"]
        assert len(board.overall) == 3


def test_item14_pair_items_of_one_class_are_left_out() -> None:
    items: dict[str, Any] = {"labels": np.ones(10, dtype=np.int64)}
    items.update({name: np.linspace(0, 1, 10) for name in ("cosine", "euclidean", "manhattan")})
    items["dot"] = np.linspace(0, 1, 10)
    with pytest.raises(ValueError, match="one class"):
        check_evidence("PairClassification", items, "max_ap", 0.5)
    with pytest.raises(ValueError, match=r"1 dimensions, not 2"):
        check_evidence(
            "Classification", {"y_true": np.zeros(4), "y_pred": np.zeros(4)}, "accuracy", 1.0
        )


# -- item 2: compare on few tasks --------------------------------------------------------------


def test_item2_exact_sign_flip_values() -> None:
    assert sign_flip_test([0.5001, 0.6001], [0.5, 0.6]) == 0.5  # 2 of 4 patterns as extreme
    assert sign_flip_test([1, 1, 1], [0, 0, 0]) == 2 / 8
    assert sign_flip_test([0.3, 0.4], [0.3, 0.4]) == 1.0
    assert min_tasks_for(0.05) == 6 and 2 / 2**6 < 0.05 <= 2 / 2**5
    # Monte Carlo beyond 16 tasks: never 0
    p = sign_flip_test(np.ones(40), np.zeros(40), resamples=999)
    assert p == 1 / 1000


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1, 1), min_size=1, max_size=10))
def test_item2_sign_flip_is_symmetric_and_a_probability(diffs: list[float]) -> None:
    d = np.array(diffs)
    p = sign_flip_test(d, np.zeros_like(d))
    assert 0 < p <= 1 and p >= 2 / 2 ** len(d) - 1e-12
    assert sign_flip_test(np.zeros_like(d), d) == p


def test_item2_two_close_tasks_give_no_verdict(tmp_path: Path) -> None:
    from chemteb_eval.results.board import ModelResults

    tasks = [t.name for t in benchmark_tasks(PIPCHEM)[:2]]
    a = ModelResults("a", tmp_path, scores={tasks[0]: 0.5001, tasks[1]: 0.6001})
    b = ModelResults("b", tmp_path, scores={tasks[0]: 0.5, tasks[1]: 0.6})
    result = compare_models(a, b, PIPCHEM, resamples=200)
    assert result.overall.p_value == 0.5
    assert result.verdict.startswith("none: 2 shared tasks") and "at least 6" in result.verdict
    assert "better" not in result.verdict


def test_item2_a_p_value_is_never_printed_as_zero(
    three: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert format_p(0.0) == "<0.001" and format_p(0.0, 200) == "<0.005"
    assert format_p(0.0312) == "0.031"
    a, b = str(three / "org__best"), str(three / "org__last")
    assert chemteb_main(["compare", a, b, "-b", "PipChem", "--resamples", "200"]) == 0
    out = capsys.readouterr().out
    assert "0.000" not in out.replace("+0.000", "").replace("-0.000", "")
    assert "Verdict: none: 7 shared tasks" not in out  # 7 tasks allow a verdict
    assert "org/best is better (p = 0.016, sign-flip test over 7 tasks)" in out


def test_item2_load_model_compares_what_it_reads(three: Path) -> None:
    a, b = load_model(three / "org__best", PIPCHEM), load_model(three / "org__mid", PIPCHEM)
    result = compare_models(a, b, PIPCHEM, resamples=100)
    retrieval = next(r for r in result.tasks if r.task == RETRIEVAL.name)
    assert retrieval.paired is not None and retrieval.paired.low > 0


# -- item 3: MTEB scores are untrusted too -----------------------------------------------------


def test_item3_a_nan_never_reads_as_a_perfect_correlation() -> None:
    u = np.array([0.1, 0.2, np.nan, 0.4])
    assert pearson(u, np.array([1.0, 2.0, 3.0, 4.0])) is None
    assert spearman(np.array([1.0, 2.0, 3.0]), np.array([3.0, 1.0, np.nan])) is None
    big = np.array([1e300, -1e300, 1e300])
    # no overflow: r is scale-free
    expected = pearson(np.array([1.0, -1, 1]), np.array([1.0, 2.0, 3.0]))
    assert expected is not None
    assert pearson(big, np.array([1.0, 2.0, 3.0])) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    ("value", "why"),
    [
        (True, "not a finite number"),
        ("0.5", "not a finite number"),
        (None, "not a finite number"),
        (1e300, "outside"),
        (-7, "outside"),
        (55.3, "0-100 scale"),
    ],
)
def test_item3_check_mteb_score(value: Any, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        check_mteb_score(value)
    assert check_mteb_score(0.5) == 0.5 and check_mteb_score(1) == 1.0


def _mteb_csv(path: Path, rows: list[str]) -> Path:
    head = "model_id,task,task_type,split,main_score"
    path.write_text("\n".join([head, *rows]) + "\n", encoding="utf-8")
    return path


def test_item3_mteb_csv_rows_are_checked_with_their_line(tmp_path: Path) -> None:
    good = "org/a,TaskA,Retrieval,test,0.5"
    cases = {
        "org/a,TaskA,Retrieval,test": "line 3: 4 fields where the header has 5",
        "org/a,TaskA,Retrieval,test,nan": "line 3: main_score 'nan' is not a finite",
        "org/a,TaskA,Retrieval,test,55.1": "line 3: main_score 55.1 is outside",
        "org/a,,Retrieval,test,0.5": "line 3: task is empty",
        f"org/a,{'x' * 5000},Retrieval,test,0.5": "line 3: task is 5,000 characters",
        # found by the outside attack: rows that contradict an earlier one
        "org/a,TaskA,Retrieval,test,0.99": "line 3: a second score for org/a on TaskA",
        "org/b,TaskA,Clustering,test,0.5": "line 3: task TaskA is 'Clustering' here but another",
        "org/b,TaskB,retrieval,test,0.5": "line 3: task_type 'retrieval': MTEB spells it",
        f"org/a,{'x' * 140_000},Retrieval,test,0.5": "line 3: not a readable CSV row",
    }
    for row, message in cases.items():
        path = _mteb_csv(tmp_path / "m.csv", [good, row])
        with pytest.raises(ValueError, match=message) as caught:
            read_mteb_csv(path)
        assert str(path) in str(caught.value)
    (tmp_path / "bin.csv").write_bytes(b"model_id,task,task_type,main_score\n\xff\xfe,1,2,3\n")
    with pytest.raises(ValueError, match="not a readable CSV row"):
        read_mteb_csv(tmp_path / "bin.csv")


def _mteb_result(root: Path, model: str, task: str, value: Any) -> None:
    folder = root / model / "rev"
    folder.mkdir(parents=True, exist_ok=True)
    payload = {
        "task_name": task,
        "dataset_revision": "r",
        "evaluation_time": 1,
        "scores": {"test": [{"main_score": value, "hf_subset": "default"}]},
    }
    (folder / f"{task}.json").write_text(json.dumps(payload))


def test_item3_hostile_mteb_result_files_are_left_out_with_a_notice(tmp_path: Path) -> None:
    reference = MtebScores(task_types={"T1": "Retrieval", "T2": "Retrieval"})
    root = tmp_path / "mteb"
    _mteb_result(root, "org__ok", "T1", 0.4)
    _mteb_result(root, "org__ok", "T2", 0.5)
    for i, value in enumerate(["NaN", True, 1e300, -7, 55.0]):
        folder = root / f"org__bad{i}" / "rev"
        folder.mkdir(parents=True)
        raw = '{"task_name": "T1", "dataset_revision": "r", "evaluation_time": 1, '
        raw += '"scores": {"test": [{"main_score": %s, "hf_subset": "default"}]}}'
        (folder / "T1.json").write_text(raw % json.dumps(value).replace('"NaN"', "NaN"))
    out = read_mteb_folder(root, reference)
    assert out.scores == {"org/ok": {"T1": 0.4, "T2": 0.5}}
    bad = [line for line in out.skipped if "bad" in line]
    assert len(bad) >= 4, out.skipped


def test_item3_compare_domains_never_reports_rho_from_a_nan(tmp_path: Path) -> None:
    from chemteb_eval.results.board import ModelResults

    bench = get_benchmark("ChemTEB(paper)")
    retrieval = [t.name for t in benchmark_tasks(bench) if t.type == "Retrieval"]
    mteb = MtebScores(task_types={"M1": "Retrieval"})
    models = []
    for i, name in enumerate(("a", "b", "c", "d")):
        details = {t: {"ndcg_at_10": 0.1 * (i + 1)} for t in retrieval}
        models.append(ModelResults(name, tmp_path, details=details))
        mteb.scores[name] = {"M1": [0.4, 0.3, 0.2, 0.1][i]}
    (found,) = compare_domains(models, bench, mteb, types=["Retrieval"])
    assert found.rho == pytest.approx(-1.0)
    mteb.scores["a"]["M1"] = math.nan  # as a reader that did not check would leave it
    (found,) = compare_domains(models, bench, mteb, types=["Retrieval"])
    assert found.rho is None or found.rho < 0


def test_item3_the_space_starts_on_a_malformed_mteb_csv(three: Path) -> None:
    import app

    _mteb_csv(three / "mteb_eng_v1_scores.csv", ["org/a,T,Retrieval,test"])
    state = app.build_state([three], default_benchmark="PipChem")
    assert state.mteb is None and "line 2" in state.mteb_source
    with pytest.raises(ValueError, match="--mteb-scores"):
        app.build_state(
            [three], default_benchmark="PipChem", mteb_scores=three / "mteb_eng_v1_scores.csv"
        )


def test_item3_compare_domains_cli_gives_one_line(
    three: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _mteb_csv(three.parent / "m.csv", ["org/a,T,Retrieval,test,true"])
    code = chemteb_main(
        ["compare-domains", str(three), "-b", "PipChem", "--mteb-scores", str(path)]
    )
    err = capsys.readouterr().err
    assert code != 0 and "Traceback" not in err and "line 2: main_score 'true'" in err


# -- item 4 and 13: local model folders --------------------------------------------------------


def test_item4_model_dir_never_leaves_the_output_dir(tmp_path: Path) -> None:
    for name in ("..", ".", ""):
        with pytest.raises(ValueError, match="cannot name a results folder"):
            model_dir(tmp_path, name, None)
    with pytest.raises(ValueError):
        model_dir(tmp_path, "org/model", "..")
    assert model_dir(tmp_path, "../x", None).resolve().is_relative_to(tmp_path.resolve())


# -- item 12: every --json output is JSON ------------------------------------------------------


def test_item12_rank_ci_json_round_trips(three: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert chemteb_main(["rank", str(three), "-b", "PipChem", "--ci", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["model"] for r in rows] == ["org/best", "org/mid", "org/last"]
    assert rows[0]["rank_interval"]["tied_with_top"] is True
    assert rows[2]["rank_interval"]["tied_with_top"] is False


# -- items 4, 6, 13, 22: what a run writes -------------------------------------------------------


class _LocalModel:
    """A model whose weights are a file in a folder (like ``exp1/final``)."""

    def __init__(self, folder: Path) -> None:
        from chemteb_eval.models.base import ModelMeta

        self.weights = np.frombuffer((folder / "weights.bin").read_bytes(), dtype=np.float32)
        self.meta = ModelMeta(
            name=folder.name,
            revision=None,
            n_parameters=16,
            embedding_dim=64,
            max_tokens=None,
            framework="test",
            source=str(folder.resolve()),
        )

    def prompt(self, task_type: str, role: str | None) -> str:
        return ""

    def encode(self, texts: list[str], *, prompt: str, batch_size: int) -> np.ndarray:
        from .helpers.hashing_encoder import HashingEncoder

        base = HashingEncoder(dim=64).encode(texts, prompt=prompt, batch_size=batch_size)
        return base * np.tile(self.weights, 4)  # other weights, other (reweighted) vectors


def _local_model(folder: Path, seed: int) -> _LocalModel:
    folder.mkdir(parents=True, exist_ok=True)
    weights = np.random.default_rng(seed).normal(size=16).astype(np.float32)
    (folder / "weights.bin").write_bytes(weights.tobytes())
    return _LocalModel(folder)


def _run(model: Any, out: Path, **options: Any) -> Any:
    from chemteb_eval.runner import run

    task = next(t for t in benchmark_tasks(PIPCHEM) if t.type == "BitextMining")
    return run(
        model,
        tasks=[task],
        output_dir=out,
        use_cache=False,
        progress=False,
        log=lambda m: None,
        **options,
    )


@pytest.mark.slow
def test_item4_13_two_local_folders_of_one_name_keep_their_own_results(
    small_suite: Path, tmp_path: Path
) -> None:
    out = tmp_path / "results"
    first = _run(_local_model(tmp_path / "exp1" / "final", 1), out)
    second = _run(_local_model(tmp_path / "exp2" / "final", 2), out)
    assert first.results_dir != second.results_dir
    assert set(second.statuses.values()) == {"done"}  # not "skipped" as the first's results
    assert first.main_scores != second.main_scores
    metas = [json.loads((r.results_dir / "model_meta.json").read_text()) for r in (first, second)]
    assert metas[0]["weights"] != metas[1]["weights"]
    for report, meta in zip((first, second), metas, strict=True):
        text = (report.results_dir / "model_meta.json").read_text()
        assert str(tmp_path) not in text  # item 13: no absolute path of the user's machine
        # the second one's name is its folder's (final-<fingerprint>): MTEB keys on names
        assert meta["name"] == report.results_dir.parent.name and meta["source"] == "local:final"
    assert metas[0]["name"] == "final" and metas[1]["name"].startswith("final-")
    # a rerun of each finds its own folder again
    again = _run(_LocalModel(tmp_path / "exp2" / "final"), out)
    assert again.results_dir == second.results_dir and set(again.statuses.values()) == {"skipped"}
    # rank shows both, told apart, each with its own scores
    models = read_results([out], PIPCHEM)
    assert len(models) == 2 and len({m.model for m in models}) == 2


@pytest.mark.slow
def test_item4_a_model_named_dotdot_writes_inside_the_output_dir(
    small_suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = _local_model(tmp_path / "work" / "m", 3)
    monkeypatch.chdir(tmp_path / "work" / "m")
    from dataclasses import replace

    model.meta = replace(model.meta, name="..")
    report = _run(model, tmp_path / "work" / "m" / "out")
    assert report.results_dir.resolve().is_relative_to((tmp_path / "work" / "m" / "out").resolve())


@pytest.mark.slow
def test_item6_every_run_is_recorded_and_each_file_names_its_run(
    small_suite: Path, tmp_path: Path
) -> None:
    from chemteb_eval.results.leaderboard import build_leaderboard

    out = tmp_path / "results"
    model = _local_model(tmp_path / "m", 4)
    first = _run(model, out, batch_size=4)
    meta_before = run_record(first.results_dir)
    second = _run(model, out, batch_size=16)  # finds everything done
    assert set(second.statuses.values()) == {"skipped"}
    assert (
        run_record(first.results_dir) == meta_before
    )  # not the record of the run that did nothing
    runs = [
        json.loads(line) for line in (first.results_dir / "runs.jsonl").read_text().splitlines()
    ]
    assert [r["run_id"] for r in runs] == [first.run_id, second.run_id]
    assert [r["settings"]["batch_size"] for r in runs] == [4, 16]
    (task_file,) = [p for p in first.results_dir.glob("PipChem*.json")]
    assert json.loads(task_file.read_text())["chemteb_run_id"] == first.run_id
    # the efficiency view files the task under its own run's hardware, whatever ran last
    lines = (first.results_dir / "runs.jsonl").read_text().splitlines()
    record = json.loads(lines[0])
    record["hardware"] = {"cuda": "NVIDIA H200", "gpu_count": 1, "cpus": 16}
    later = {**record, "run_id": "later", "hardware": {"cpu": "Some CPU", "cpus": 2}}
    (first.results_dir / "runs.jsonl").write_text(
        "\n".join([json.dumps(record), lines[1], json.dumps(later), "{torn"]) + "\n"
    )
    (first.results_dir / "run_meta.json").write_text(json.dumps(later))
    models = read_results([out], PIPCHEM)
    from chemteb_eval.results.leaderboard import task_hardware

    assert task_hardware(models[0], task_file.stem) == "NVIDIA H200"
    assert any("runs.jsonl: line 4" in s for s in models[0].skipped)
    build_leaderboard([out], PIPCHEM)  # reads the same records without failing


@pytest.mark.slow
def test_item22_fresh_pipchem_results_have_no_revision_mismatch(
    small_suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "results"
    _run(_local_model(tmp_path / "m", 5), out)
    (model,) = read_results([out], PIPCHEM)
    assert model.revision_mismatches == 0
    assert chemteb_main(["rank", str(out), "-b", "PipChem"]) == 0
    assert "revision" not in capsys.readouterr().out.lower()


# -- items 10, 11, 23: what the Space displays -------------------------------------------------


def _column(table: Any, name: str) -> list[str]:
    value = table["value"]
    i = value["headers"].index(name)
    return [row[i] for row in value["metadata"]["display_value"]]


def test_item11_the_space_shows_rank_intervals_and_task_intervals(three: Path) -> None:
    import app

    state = app.build_state([three], default_benchmark="PipChem")
    out = app.view_tables(state, "PipChem", "all", [], [], "")
    overall = out[2]
    assert _column(overall, "Rank 95%") == ["1-1", "2-2", "3-3"]
    assert _column(overall, "Tied with #1") == ["≈ #1", "", ""]
    task = app.view_task(state, "PipChem", "all", [], [], "", RETRIEVAL.name)
    cis = _column(task[2], "95% CI")
    assert len(cis) == 3 and all(c != "—" and "-" in c for c in cis)
    lows = [float(c.split("-")[0]) for c in cis]
    assert lows == sorted(lows, reverse=True)  # best, mid, last


def test_item10_contributed_names_are_text_in_markdown_and_csv(three: Path) -> None:
    import app
    import views

    hostile = {
        "org__best": "![x](http://evil.example/p.png)",
        "org__mid": '=HYPERLINK("http://evil.example","click")',
        "org__last": "x](javascript:alert(1))",
    }
    for folder, name in hostile.items():
        meta = {"name": name, "revision": None, "embedding_dim": 8}
        (three / folder / "rev" / "model_meta.json").write_text(json.dumps(meta))
    state = app.build_state([three], default_benchmark="PipChem")
    out = app.view_tables(state, "PipChem", "all", [], [], "")
    cells = _column(out[2], "Model")
    assert len(cells) == 3
    for cell in cells:
        assert "](" not in cell.replace("\\](", "")  # no live link or image
    assert views.md("![x](http://e/p.png)") == "\\!\\[x\\]\\(http\\://e/p.png\\)"
    assert views.md_code("a`b") == "``a`b``"
    body = Path(out[3]).read_text(encoding="utf-8")
    assert "'=HYPERLINK" in body and "\n=HYPERLINK" not in body and ",=HYPERLINK" not in body
    # the correlation CSV's labels too
    from chemteb_eval._files import csv_safe

    assert csv_safe("=1+1") == "'=1+1" and csv_safe("-0.25") == "-0.25" and csv_safe(0.5) == 0.5
    assert csv_safe("@SUM(A1)") == "'@SUM(A1)" and csv_safe("plain") == "plain"


def test_item23_efficiency_view_without_model_facts(three: Path) -> None:
    import app

    for folder in ("org__best", "org__mid", "org__last"):  # timings, but no dimension known
        meta = {"name": folder.replace("__", "/"), "revision": None}
        (three / folder / "rev" / "model_meta.json").write_text(json.dumps(meta))
        run = {"hardware": {"cpu": "Test CPU", "cpus": 2}}
        (three / folder / "rev" / "run_meta.json").write_text(json.dumps(run))
    state = app.build_state([three], default_benchmark="PipChem")
    board = state.boards["PipChem"]
    board.tasks = list(board.tasks)
    from chemteb_eval.results import leaderboard

    original = leaderboard.task_size
    try:  # PipChem records no sizes: give each task one, as ChemTEB's have
        leaderboard.task_size = lambda task: 100  # type: ignore[assignment]
        state = app.build_state([three], default_benchmark="PipChem")
    finally:
        leaderboard.task_size = original  # type: ignore[assignment]
    assert state.boards["PipChem"].efficiency
    figure, _ = app.view_efficiency(state, "PipChem", "all", [], [], "")
    colours = [c for t in figure.data for c in (t.marker.color or []) if isinstance(c, str)]
    assert colours and set(colours) == {"#9e9e9e"}  # unknown dimensions: grey, not None


@pytest.mark.slow
def test_item23_efficiency_view_on_the_paper_results_without_the_model_table(
    shared_dir: Path, tmp_path: Path
) -> None:
    import shutil

    import app

    copy = tmp_path / "paper_results"
    shutil.copytree(shared_dir / "reference" / "paper_results", copy)
    state = app.build_state([copy], default_benchmark="ChemTEB(paper)")
    figure, csv_path = app.view_efficiency(state, "ChemTEB(paper)", "all", [], [], "")
    assert len(figure.data) >= 2 and Path(csv_path).is_file()


# -- item 17: rank --correlations into a folder that cannot be written -------------------------


@pytest.mark.parametrize("where", ["a file", "below a file", "read-only"])
def test_item17_correlations_folder_problems_keep_the_ranking(
    three: Path,
    tmp_path: Path,
    where: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    target = tmp_path / "corr"
    if where == "a file":
        target.write_text("x")
    elif where == "below a file":
        (tmp_path / "file").write_text("x")
        target = tmp_path / "file" / "corr"
    else:  # as root (CI) permission bits are ignored: the write fails as on a read-only disk
        from chemteb_eval.results import correlations

        def denied(*args: Any, **kwargs: Any) -> None:
            raise PermissionError(13, "Permission denied")

        monkeypatch.setattr(correlations, "write_matrix", denied)
    code = chemteb_main(["rank", str(three), "-b", "PipChem", "--correlations", str(target)])
    captured = capsys.readouterr()
    assert code == 2 and "Traceback" not in captured.err
    assert "org/best" in captured.out  # the ranking came first
    assert f"--correlations: cannot write the matrices into {target}" in captured.err


def test_item17_correlations_with_json_keep_stdout_json(
    three: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["rank", str(three), "-b", "PipChem", "--json", "--correlations", str(tmp_path / "c")]
    assert chemteb_main(args) == 0
    assert len(json.loads(capsys.readouterr().out)) == 3
    assert (tmp_path / "c" / "tasks_spearman.csv").is_file()


# -- item 18: --data-path readers name the file and line ---------------------------------------


def test_item18_data_path_readers_name_file_and_line(tmp_path: Path) -> None:
    from chemteb_eval.data.shared_sets import MAX_LINE_BYTES, read_ner_folder, read_sts_tsv

    path = tmp_path / "test.tsv"
    head = b"sentence1\tsentence2\tscore\n"
    path.write_bytes(head + b"a\tb\t1.0\n" + b"caf\xe9\tb\t2\n")
    with pytest.raises(ValueError, match=r"test.tsv: line 3 is not UTF-8 text \(byte 4"):
        read_sts_tsv(path)
    path.write_bytes(head + b"a\tb\t1.0\n" + b"x" * (MAX_LINE_BYTES + 10) + b"\tb\t2\n")
    with pytest.raises(ValueError, match=r"test\.tsv: line 3 is longer than 100,000 bytes"):
        read_sts_tsv(path)
    path.write_bytes(head + b"a\tb\t1.0\n" + b"a\tb\t" + b"9" * 5000 + b"x\n")
    with pytest.raises(ValueError, match=r"line 3: score '9999.*\.\.\. is not a number"):
        read_sts_tsv(path)
    # Windows line ends read as Unix ones
    path.write_bytes(head.replace(b"\n", b"\r\n") + b"a\tb\t1.0\r\nc\td\t2\r\n")
    assert read_sts_tsv(path).scores == [1.0, 2.0]
    folder = tmp_path / "ner"
    folder.mkdir()
    (folder / "train.tsv").write_bytes(b"Aspirin\tB-Chemical\r\n\r\n")
    (folder / "test.tsv").write_bytes(b"Aspirin\tB-Chemical\n\xff\tO\n")
    with pytest.raises(ValueError, match=r"test\.tsv: line 2 is not UTF-8"):
        read_ner_folder(folder, "test", frozenset({"Chemical"}))


# -- item 19: the embedding cache ----------------------------------------------------------------


def test_item19_a_cache_file_with_another_layout_is_one_line(tmp_path: Path) -> None:
    import sqlite3

    from chemteb_eval.engine import EmbeddingCache
    from chemteb_eval.errors import ChemtebError

    probe = EmbeddingCache(tmp_path, "org/m", "a" * 40, "org/m")
    path = probe.path
    probe.close()
    path.rmdir()
    db = sqlite3.connect(path.with_suffix(".sqlite"))  # a cache of the layout before
    db.execute("CREATE TABLE emb (key TEXT PRIMARY KEY, vector BLOB)")
    db.commit()
    db.close()
    with pytest.raises(ChemtebError, match=r"its table emb has columns \['key', 'vector'\]"):
        EmbeddingCache(tmp_path, "org/m", "a" * 40, "org/m")


def test_item19_a_nan_row_is_re_encoded_not_blamed_on_the_encoder(tmp_path: Path) -> None:
    from chemteb_eval.engine import EmbeddingCache, EmbeddingEngine

    from .helpers.hashing_encoder import HashingEncoder

    encoder = HashingEncoder(dim=16)
    texts = ["benzene", "toluene", "xylene"]
    cache = EmbeddingCache(tmp_path, encoder.meta.name, encoder.meta.revision, "tests")
    engine = EmbeddingEngine(encoder, cache, batch_size=8, progress=False)
    engine.prefetch(("", t) for t in texts)
    good = engine.embed(texts, "")
    cache.close()
    cache = EmbeddingCache(tmp_path, encoder.meta.name, encoder.meta.revision, "tests")
    keys = list(cache.keys())
    cache.put(keys[:1], np.full((1, 16), np.nan, dtype=np.float32), replace=True)
    with pytest.warns(UserWarning, match="damaged"):
        found = cache.lookup(keys)
    assert len(found) == 2  # the NaN row is left out, so it is encoded again
    engine = EmbeddingEngine(encoder, cache, batch_size=8, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the same "damaged" warning, where the engine reads
        engine.prefetch(("", t) for t in texts)
        again = engine.embed(texts, "")
    assert np.isfinite(again).all() and np.allclose(again, good)
    cache.close()
    # a word-vector model's "no vector" rows stay what they are
    static = EmbeddingCache(tmp_path / "s", "w2v", None, "w2v", fingerprint="f", nan_rows=True)
    static.put(["k"], np.full((1, 4), np.nan, dtype=np.float32))
    assert np.isnan(static.lookup(["k"])["k"]).all()
    static.close()


# -- found by hand: a model table beside the results is untrusted too ------------------------


@pytest.mark.parametrize(
    "body",
    [
        b"model_id,results_dir,family\norg/a,org__a\n",  # a short row
        b"model_id,results_dir\norg/a,org__a,extra\n",  # a long one
        b"model_id,results_dir\n" + b'"' + b"x" * 140_000 + b'",y\n',  # over csv's field limit
        b"model_id,results_dir\n\xff\xfe,x\n",  # not UTF-8
    ],
)
def test_found_a_malformed_model_table_is_a_notice_beside_and_an_error_by_name(
    three: Path, body: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    import app

    from chemteb_eval.results.inputs import read_model_table

    table = three.parent / "paper_models.csv"
    table.write_bytes(body)
    (three / ".cache").mkdir()  # a folder with no results, sorted first, is still no model
    with pytest.raises(ValueError, match=r"model_table: .*paper_models\.csv"):
        read_model_table(table)
    assert chemteb_main(["rank", str(three), "-b", "PipChem", "--json"]) == 0
    captured = capsys.readouterr()
    assert len(json.loads(captured.out)) == 3
    assert captured.err.count("paper_models.csv") == 1 and "Traceback" not in captured.err
    state = app.build_state([three], default_benchmark="PipChem")
    assert len(state.boards["PipChem"].overall) == 3
    assert any("paper_models.csv" in n for n in state.boards["PipChem"].notices)
    assert chemteb_main(["rank", str(three), "-b", "PipChem", "--model-table", str(table)]) == 2


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=60))
def test_item10_any_name_renders_as_its_own_text(name: str) -> None:
    """Rendered by a CommonMark parser (Gradio's Markdown is one), an escaped name is one
    paragraph of exactly its text: no link, image, emphasis, code, heading, list or HTML."""
    import html
    import re

    import views

    markdown_it = pytest.importorskip("markdown_it")
    renderer = markdown_it.MarkdownIt("commonmark").enable(["table", "strikethrough"])
    flat = " ".join(name.splitlines()).strip()
    rendered = renderer.render(views.md(name)).strip()
    if not flat:
        assert rendered == ""
        return
    assert rendered.startswith("<p>") and rendered.endswith("</p>"), rendered
    inner = rendered[3:-4]
    assert not re.search(r"<(?!br)", inner), rendered  # no tag at all inside the paragraph
    assert html.unescape(inner).replace("\n", " ") == re.sub(r"\s+", " ", flat) or (
        html.unescape(inner).split() == flat.split()
    )


# -- the outside attack on this work (each test named by what it found) ---------------


@pytest.mark.parametrize("damage", ["deflate", "encrypted", "method 99"])
def test_attack_a_damaged_zip_stream_is_left_out(
    three: Path, damage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _items_path(three, "org__mid")
    raw = bytearray(path.read_bytes())
    if damage == "deflate":
        for i in range(60, min(400, len(raw) - 200)):
            raw[i] ^= 0x5A
    else:  # patch every local and central header: the flags, or the compression method
        for sig, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
            start = 0
            while (start := raw.find(sig, start)) != -1:
                if damage == "encrypted":
                    raw[start + offset] |= 0x01
                else:
                    raw[start + offset + 2 : start + offset + 4] = (99).to_bytes(2, "little")
                start += 4
    path.write_bytes(bytes(raw))
    assert chemteb_main(["rank", str(three), "-b", "PipChem", "--ci", "--json"]) == 0
    captured = capsys.readouterr()
    assert len(json.loads(captured.out)) == 3 and "evidence left out" in captured.err


def test_attack_compare_prints_why_evidence_was_left_out(
    three: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    values = _per_query(0.6, 2)
    values[0] = np.nan
    _replace_items(three, "org__mid", ndcg_at_10=values)
    a, b = str(three / "org__best"), str(three / "org__mid")
    assert chemteb_main(["compare", a, b, "-b", "PipChem", "--resamples", "100"]) == 0
    assert "evidence left out" in capsys.readouterr().err
    for bad in (["--resamples", "1"], ["--seed", "-1"]):
        assert chemteb_main(["compare", a, b, "-b", "PipChem", *bad]) == 2
        assert bad[0] in capsys.readouterr().err


def test_attack_items_in_another_order_are_paired_by_query_id(three: Path) -> None:
    from chemteb_eval.results.ranking import task_evidence

    b = load_model(three / "org__mid", PIPCHEM)
    ev_b = task_evidence(b, PIPCHEM, RETRIEVAL)
    original = task_evidence(load_model(three / "org__best", PIPCHEM), PIPCHEM, RETRIEVAL)
    order = np.random.default_rng(5).permutation(N_QUERIES)
    ids = np.array([f"q{i}" for i in range(N_QUERIES)])
    _replace_items(three, "org__best", ndcg_at_10=_per_query(0.9, 1)[order], query_ids=ids[order])
    a = load_model(three / "org__best", PIPCHEM)
    ev_a = task_evidence(a, PIPCHEM, RETRIEVAL)
    assert ev_a is not None and ev_b is not None and original is not None
    paired = ev_b.aligned_to(ev_a)
    assert paired is not None
    for seed in range(5):  # a resample of A's positions draws the same queries for B
        idx = np.random.default_rng(seed).integers(0, N_QUERIES, N_QUERIES)
        expected = original.statistic(order[idx]) - ev_b.statistic(order[idx])
        assert ev_a.statistic(idx) - paired(idx) == pytest.approx(expected)
    # other ids than the partner's: no paired interval at all
    _replace_items(three, "org__best", ndcg_at_10=_per_query(0.9, 1), query_ids=ids + "x")
    a = load_model(three / "org__best", PIPCHEM)
    row = next(r for r in compare_models(a, b, PIPCHEM).tasks if r.task == RETRIEVAL.name)
    assert row.paired is None and "query ids differ" in row.why_no_interval


def test_attack_a_fifo_or_device_as_runs_jsonl_never_hangs(three: Path) -> None:
    import os

    fifo = three / "org__mid" / "rev" / "runs.jsonl"
    os.mkfifo(fifo)
    (three / "org__best" / "rev" / "runs.jsonl").symlink_to("/dev/zero")
    models = read_results([three], PIPCHEM)  # returns: a hang would time the suite out
    notes = _notices(models)
    assert sum("not a regular file" in n for n in notes) == 2


def test_attack_terminal_control_characters_in_names_are_not_printed(
    three: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    meta = {"name": "\x1b[31mRED\x1b[0m\x1b]0;title\x07", "revision": None}
    (three / "org__mid" / "rev" / "model_meta.json").write_text(json.dumps(meta))
    meta = {"name": "a\nb | c", "revision": None}
    (three / "org__last" / "rev" / "model_meta.json").write_text(json.dumps(meta))
    assert chemteb_main(["rank", str(three), "-b", "PipChem"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "a?b | c" in out
    assert len(out.strip().splitlines()) == 2 + 1 + 3  # title, header, rule, three rows


def test_attack_correlations_never_write_through_a_symlink(three: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    folder = tmp_path / "corr"
    folder.mkdir()
    (folder / "models_pearson.csv").symlink_to(victim)
    assert chemteb_main(["rank", str(three), "-b", "PipChem", "--correlations", str(folder)]) == 0
    assert victim.read_text() == "precious"
    assert not (folder / "models_pearson.csv").is_symlink()


def test_attack_two_folders_of_one_model_are_a_note_and_keep_the_family(
    three: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    from chemteb_eval.results.leaderboard import build_leaderboard

    shutil.copytree(three / "org__mid", three / "copy")
    meta = {"name": "org/mid", "revision": None}
    (three / "copy" / "rev" / "model_meta.json").write_text(json.dumps(meta))
    assert chemteb_main(["rank", str(three), "-b", "PipChem"]) == 0
    err = capsys.readouterr().err
    assert "[skipped]" not in err and err.count("[note]") == 1
    assert "names the same model (org/mid)" in err
    board = build_leaderboard([three], PIPCHEM)
    assert {board.facts[m].family for m in board.facts if m.startswith("org/mid")} == {"org"}
    assert board.notices == [] and len(board.notes) == 1


def test_attack_mteb_csv_repeats_and_a_byte_order_mark(tmp_path: Path) -> None:
    # rows that contradict each other: test_item3_mteb_csv_rows_are_checked_with_their_line
    good = "org/a,T1,Classification,test,0.5"
    same = _mteb_csv(tmp_path / "m.csv", [good, good])  # a repeated identical row is harmless
    assert read_mteb_csv(same).scores == {"org/a": {"T1": 0.5}}
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbf" + (tmp_path / "m.csv").read_bytes())
    assert read_mteb_csv(bom).scores == {"org/a": {"T1": 0.5}}


def test_attack_mteb_results_add_to_the_csv_scores(tmp_path: Path) -> None:
    reference = MtebScores(
        scores={"org/ok": {"T1": 0.4, "T2": 0.5}},
        task_types={"T1": "Retrieval", "T2": "Retrieval"},
    )
    root = tmp_path / "mteb"
    _mteb_result(root, "org__ok", "T1", 0.45)
    _mteb_result(root, "org__ok", "T2", "0.7")  # a string: left out, with a notice
    out = read_mteb_folder(root, reference)
    assert out.scores["org/ok"] == {"T1": 0.45, "T2": 0.5}
    assert any("T2 left out" in s for s in out.skipped)


def test_attack_plot_labels_are_not_markup(three: Path) -> None:
    import app

    name = '<a href="https://evil.example/">click</a><b>x'
    (three / "org__mid" / "rev" / "model_meta.json").write_text(json.dumps({"name": name}))
    state = app.build_state([three], default_benchmark="PipChem")
    radar = next(
        x for x in app.view_radar(state, "PipChem", "all", [], [], "", [name]) if hasattr(x, "data")
    )
    labels = [str(t.name) for t in radar.data]
    assert labels and all("<" not in label for label in labels)
    assert "&lt;a href" in labels[0]
    corr = app.view_correlations(state, "PipChem", "all", [], [], "", "models", "spearman")
    ticks = [str(x) for t in corr[0].data for x in (t.x if t.x is not None else [])]
    assert ticks and all("<" not in tick for tick in ticks)


def test_attack_space_downloads_are_private_and_rewritten(three: Path) -> None:
    import stat as stat_module

    import app
    import views

    state = app.build_state([three], default_benchmark="PipChem")
    path = Path(app.view_tables(state, "PipChem", "all", [], [], "")[3])
    folder = path.parent
    assert folder.name.startswith("chemteb-space-")
    assert stat_module.S_IMODE(folder.stat().st_mode) == 0o700
    path.write_text('=HYPERLINK("http://evil")')  # planted: the next download rewrites it
    again = Path(app.view_tables(state, "PipChem", "all", [], [], "")[3])
    assert again == path and "HYPERLINK" not in again.read_text()
    assert views.csv_dir() == folder


def test_attack_cached_zero_rows_and_absurd_costs_are_damage(tmp_path: Path) -> None:
    from chemteb_eval.engine import EmbeddingCache

    cache = EmbeddingCache(tmp_path, "org/m", "a" * 40, "org/m")
    cache.put(["z", "ok"], np.array([[0.0] * 4, [1.0] * 4], dtype=np.float32), seconds=[1e308, 0.1])
    with pytest.warns(UserWarning, match="all zeros"):
        assert list(cache.lookup(["z", "ok"])) == ["ok"]
    assert cache.costs(["z", "ok"]) == {"ok": 0.1}
    cache.close()


def test_attack_ner_test_split_without_entities_is_refused(tmp_path: Path) -> None:
    from chemteb_eval.data.shared_sets import read_ner_folder

    (tmp_path / "train.tsv").write_text("Aspirin\tB-Chemical\n\n")
    (tmp_path / "test.tsv").write_text("Aspirin\tO\nis\tO\n\n")
    with pytest.raises(ValueError, match=r"test\.tsv: no entity at all"):
        read_ner_folder(tmp_path, "test", frozenset({"Chemical"}))


def test_attack_data_path_bom_and_trailing_blank_lines(tmp_path: Path) -> None:
    from chemteb_eval.data.shared_sets import read_sts_tsv

    path = tmp_path / "test.tsv"
    path.write_bytes(b"\xef\xbb\xbfsentence1\tsentence2\tscore\na\tb\t1\nc\td\t2\n\n\n")
    assert read_sts_tsv(path).scores == [1.0, 2.0]


def test_attack_api_model_names_keep_their_own_folders(tmp_path: Path) -> None:
    from chemteb_eval.models.base import ModelMeta
    from chemteb_eval.runner.stages import results_folder

    def api(name: str) -> ModelMeta:
        return ModelMeta(name, None, None, 8, None, "openai-compatible-http", "http://127.0.0.1")

    folders = {
        results_folder(tmp_path, api(n), None, lambda m: None)
        for n in ("/models/escape2", "/other/escape2", "escape2")
    }
    assert len(folders) == 3 and all(f.is_relative_to(tmp_path) for f in folders)


def test_attack_an_empty_data_path_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code = chemteb_main(["run", "-t", "ClinicalSTS2018", "--data-path", "ClinicalSTS2018="])
    assert code == 2 and "no folder after '='" in capsys.readouterr().err


def test_item4_a_folder_from_before_fingerprints_is_kept_by_its_own_model(tmp_path: Path) -> None:
    from chemteb_eval.models.base import ModelMeta
    from chemteb_eval.runner.stages import results_folder

    source = tmp_path / "final"
    source.mkdir()
    meta = ModelMeta("final", None, None, 8, None, "test", str(source))
    out = tmp_path / "results"
    old = out / "final" / "no_revision_available"
    old.mkdir(parents=True)  # model_meta.json as earlier versions wrote it: the absolute source
    (old / "model_meta.json").write_text(json.dumps({"name": "final", "source": str(source)}))
    assert results_folder(out, meta, "files:abc", lambda m: None) == old
    other = ModelMeta("final", None, None, 8, None, "test", str(tmp_path / "elsewhere"))
    assert results_folder(out, other, "files:def", lambda m: None) != old
