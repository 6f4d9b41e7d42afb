"""Bootstrap intervals, paired comparisons and rank intervals: hand-checked cases, properties,
coverage by simulation, and the surfaces (rank --ci, compare, the items files)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chemteb_eval.cli import main as chemteb_main
from chemteb_eval.scoring import score_pair_classification, score_retrieval
from chemteb_eval.scoring.uncertainty import (
    bootstrap_ci,
    mean_ci,
    paired_bootstrap,
    paired_statistic_bootstrap,
    rank_intervals,
    task_statistic,
)
from chemteb_eval.tasks import get_benchmark


def test_hand_checked_cases() -> None:
    # A constant sample has a zero-width interval at its value.
    assert mean_ci([0.5] * 20) == (0.5, 0.5, 0.5)
    # Two items 0 and 1: a resample's mean is 0, 0.5 or 1 with probabilities 1/4, 1/2, 1/4.
    mean, low, high = mean_ci([0.0, 1.0], resamples=4000, seed=1)
    assert mean == 0.5 and low == 0.0 and high == 1.0
    # Identical models: difference 0 everywhere, p = 1.
    same = paired_bootstrap([0.2, 0.4, 0.9], [0.2, 0.4, 0.9])
    assert (same.difference, same.low, same.high, same.p_value) == (0.0, 0.0, 0.0, 1.0)
    # Better on every item by 0.1: the interval is [0.1, 0.1] and p = 0.
    better = paired_bootstrap([0.3, 0.5, 1.0], [0.2, 0.4, 0.9])
    assert better.difference == pytest.approx(0.1) and better.p_value == 0.0
    assert better.low == pytest.approx(0.1) and better.high == pytest.approx(0.1)
    # Seeded: the same seed gives the same interval.
    values = np.random.default_rng(3).random(50)
    assert mean_ci(values, seed=7) == mean_ci(values, seed=7)


def test_errors_name_the_argument() -> None:
    with pytest.raises(ValueError, match="values: must be a non-empty"):
        mean_ci([])
    with pytest.raises(ValueError, match=r"values: 1 value\(s\) are NaN or inf, first at 1"):
        mean_ci([0.1, float("nan")])
    with pytest.raises(ValueError, match="confidence"):
        mean_ci([0.1, 0.2], confidence=1.5)
    with pytest.raises(ValueError, match="length mismatch"):
        paired_bootstrap([0.1, 0.2], [0.1])
    with pytest.raises(ValueError, match="missing"):
        rank_intervals({"a": {"t": 1.0}, "b": {}}, {"t": "Retrieval"})


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=2, max_size=40), st.integers(0, 2**16))
def test_the_interval_contains_the_estimate(values: list[float], seed: int) -> None:
    mean, low, high = mean_ci(values, resamples=300, seed=seed)
    assert low - 1e-12 <= mean <= high + 1e-12


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=2, max_size=30), st.integers(0, 2**16))
def test_identical_models_are_never_separated(values: list[float], seed: int) -> None:
    result = paired_bootstrap(values, values, resamples=200, seed=seed)
    assert result.low <= 0 <= result.high and result.p_value == 1.0


def test_coverage_of_the_95_percent_interval_by_simulation() -> None:
    # 600 datasets of 200 items from a known distribution (Beta(2, 5), mean 2/7): the
    # percentile interval should contain the true mean in about 95% of them.
    rng = np.random.default_rng(2024)
    truth = 2 / 7
    hits = 0
    for i in range(600):
        _, low, high = mean_ci(rng.beta(2, 5, size=200), resamples=1000, seed=i)
        hits += low <= truth <= high
    assert 0.93 <= hits / 600 <= 0.97, hits / 600


def test_rank_intervals_separate_clear_gaps_and_not_noise() -> None:
    types = {f"t{i}": ("Retrieval", "Clustering", "BitextMining")[i % 3] for i in range(12)}
    rng = np.random.default_rng(0)
    # "best" is ahead on every task by a wide margin; "b" and "c" are the same model plus noise.
    scores: dict[str, dict[str, float]] = {
        "best": {t: 0.9 for t in types},
        "b": {t: 0.5 + rng.normal(0, 0.02) for t in types},
        "c": {t: 0.5 + rng.normal(0, 0.02) for t in types},
    }
    for aggregation in ("rrf", "mean", "borda"):
        r = rank_intervals(scores, types, aggregation=aggregation, resamples=500)  # type: ignore[arg-type]
        got = r.as_dict()
        assert got["best"]["rank"] == 1 and got["best"]["rank_high"] == 1
        assert got["best"]["tied_with_top"] and not got["b"]["tied_with_top"]
        assert got["b"]["rank_low"] == 2 and got["b"]["rank_high"] == 3  # b and c overlap


def test_rank_intervals_on_the_paper_results_are_fast(shared_dir: Path) -> None:
    import time

    from chemteb_eval.results.board import read_results
    from chemteb_eval.results.ranking import rank_models, rank_uncertainty

    bench = get_benchmark("ChemTEB(paper)")
    models = read_results([shared_dir / "reference" / "paper_results"], bench)
    started = time.perf_counter()
    intervals = rank_uncertainty(models, bench)
    assert time.perf_counter() - started < 2.0  # 34 models x 35 tasks x 1,000 resamples
    rows = rank_models(models, bench)
    for row in rows:  # the point ranks are the table's
        assert intervals[row["model"]]["rank"] == row["rank"]
        lo, hi = intervals[row["model"]]["rank_low"], intervals[row["model"]]["rank_high"]
        assert lo <= row["rank"] <= hi
    tied = sorted(m for m, x in intervals.items() if x["tied_with_top"])
    assert tied == ["text-embedding-3-large"]  # README: 0 others not separable from it
    widths = sorted(x["rank_high"] - x["rank_low"] for x in intervals.values())
    assert np.median(widths) == 10.5  # README: the median 95% rank interval is 10.5 places wide


def test_rank_ci_on_the_command_line(shared_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = str(shared_dir / "reference" / "paper_results")
    assert chemteb_main(["rank", results, "-b", "ChemTEB(paper)", "--ci"]) == 0
    out = capsys.readouterr().out
    first = next(line for line in out.splitlines() if "text-embedding-3-large" in line)
    assert "95% rank 1-1" in first and "~#1" in first
    assert (
        "Not separable from #1 (ranked first in >= 2.5% of 1,000 task resamples): text-embedding-3-large."
        in out
    )


def test_task_statistics_recompute_the_scores() -> None:
    rng = np.random.default_rng(1)
    q, c = rng.normal(size=(30, 8)), rng.normal(size=(60, 8))
    qids, dids = [f"q{i}" for i in range(30)], [f"d{i}" for i in range(60)]
    qrels = {q_: {dids[i]: 1, dids[i + 30]: 1} for i, q_ in enumerate(qids)}
    out = score_retrieval(q, c, qids, dids, qrels, decimals=None, return_items=True)
    stat, n = task_statistic("Retrieval", out["items"], "ndcg_at_10")
    assert n == 30 and stat(np.arange(n)) == pytest.approx(out["ndcg_at_10"])
    a, b = rng.normal(size=(80, 8)), rng.normal(size=(80, 8))
    labels = rng.integers(0, 2, 80)
    pc = score_pair_classification(a, b, labels, return_items=True)
    stat, n = task_statistic("PairClassification", pc["items"], "max_f1")
    assert stat(np.arange(n)) == pytest.approx(pc["max_f1"])
    estimate, low, high = bootstrap_ci(stat, n, resamples=200)
    assert low <= estimate <= high
    # pair classification at ChemTEB scale: 4,096 pairs x 1,000 resamples stays within 10 s
    # (benchmarks/bench_uncertainty.py measures it; here a smaller check of the same path)
    paired = paired_statistic_bootstrap(stat, stat, n, resamples=50)
    assert paired.difference == 0 and paired.p_value == 1.0


@pytest.mark.slow
def test_runner_writes_items_and_compare_and_rank_ci_read_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from chemteb_eval.results.board import read_results
    from chemteb_eval.results.leaderboard import build_leaderboard
    from chemteb_eval.results.ranking import _item_resampler
    from chemteb_eval.runner import run
    from chemteb_eval.tasks import benchmark_tasks

    from .helpers.hashing_encoder import HashingEncoder

    monkeypatch.setenv("CHEMTEB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CHEMTEB_PIPCHEM_SCALE", "small")
    for name, dim in (("test/a", 64), ("test/b", 16)):
        run(
            HashingEncoder(dim=dim, name=name),
            output_dir=tmp_path / "results",
            use_cache=False,
            progress=False,
            log=lambda m: None,
        )
    folder = tmp_path / "results" / "test__a" / ("1" * 40)
    items = np.load(folder / "PipChemWikiRetrieval.items.npz")
    result = json.loads((folder / "PipChemWikiRetrieval.json").read_text())
    per_query = items["test/default/ndcg_at_10"]
    assert per_query.mean() == pytest.approx(result["scores"]["test"][0]["ndcg_at_10"], abs=1e-5)
    bench = get_benchmark("PipChem")
    args = [str(tmp_path / "results" / "test__a"), str(tmp_path / "results" / "test__b")]
    assert chemteb_main(["compare", *args, "-b", "PipChem", "--resamples", "200"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("PipChem") and ":" not in line[:8]]
    assert len(rows) == len(benchmark_tasks(bench)) and all("[" in line for line in rows)
    assert "Verdict:" in out
    # rank --ci resamples the items of retrieval and accuracy tasks inside each task resample
    models = read_results([tmp_path / "results"], bench)
    assert _item_resampler(models, bench, benchmark_tasks(bench)) is not None
    assert chemteb_main(["rank", str(tmp_path / "results"), "-b", "PipChem", "--ci"]) == 0
    assert "95% rank" in capsys.readouterr().out
    # the Space's per-task table shows the interval where the items allow it
    board = build_leaderboard([tmp_path / "results"], bench)
    retrieval = board.per_task["PipChemWikiRetrieval"]
    assert all("95% CI" in row for row in retrieval)
