"""ChemTEB against MTEB per task type, and the correlation matrices (issue 19, first part):
hand-checked small cases, the MTEB readers, the CLI, and the paper's directions on the shipped
data when ../shared is there. ~3 s."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from scipy.stats import spearmanr

from chemteb_eval.cli import main
from chemteb_eval.results.board import ModelResults
from chemteb_eval.results.correlations import model_correlations, task_correlations
from chemteb_eval.results.domains import compare_domains
from chemteb_eval.results.mteb_scores import MtebScores, read_mteb_csv, read_mteb_folder
from chemteb_eval.tasks import Aggregation, Benchmark, benchmark_tasks, get_benchmark

PAPER = get_benchmark("ChemTEB(paper)")
CLASSIFICATION = [t.name for t in benchmark_tasks(PAPER) if t.type == "Classification"]


def _model(name: str, accuracy: float, tasks: list[str] = CLASSIFICATION) -> ModelResults:
    return ModelResults(
        model=name,
        folder=Path(name),
        scores={t: accuracy for t in tasks},
        details={t: {"accuracy": accuracy, "f1": accuracy} for t in tasks},
    )


def _mteb(values: dict[str, list[float]]) -> MtebScores:
    out = MtebScores(task_types={"T1": "Classification", "T2": "Classification"})
    out.splits = {"T1": "test", "T2": "test"}
    for model, (a, b) in values.items():
        out.scores[model] = {"T1": a, "T2": b}
    return out


def test_points_rho_and_rank_changes_by_hand() -> None:
    models = [_model("a", 0.9), _model("b", 0.8), _model("c", 0.7), _model("d", 0.6)]
    mteb = _mteb({"a": [0.5, 0.7], "b": [0.55, 0.55], "c": [0.4, 0.4], "d": [0.9, 0.9]})
    (comp,) = compare_domains(models, PAPER, mteb, resamples=200)
    assert comp.kind == "Classification" and comp.metric == "accuracy"
    assert comp.points["a"] == pytest.approx((0.6, 0.9))  # MTEB mean of 0.5 and 0.7
    # MTEB ranks: d 1, a 2, b 3, c 4; ChemTEB ranks: a 1, b 2, c 3, d 4
    # rho = 1 - 6 * sum(d^2) / (n (n^2 - 1)) = 1 - 6 * (1 + 1 + 1 + 9) / 60 = -0.2
    assert comp.rho == pytest.approx(-0.2)
    # with a tie (b at 0.6 like a): average ranks, as scipy's spearmanr
    tied = _mteb({"a": [0.5, 0.7], "b": [0.6, 0.6], "c": [0.4, 0.4], "d": [0.9, 0.9]})
    (with_tie,) = compare_domains(models, PAPER, tied, resamples=10)
    x = [tied.scores[m]["T1"] / 2 + tied.scores[m]["T2"] / 2 for m in "abcd"]
    assert with_tie.rho == pytest.approx(spearmanr(x, [0.9, 0.8, 0.7, 0.6]).statistic)
    assert comp.rank_changes[0] == ("d", 1, 4)
    assert comp.interval is not None and -1 <= comp.interval[0] <= comp.interval[1] <= 1


def test_models_lacking_scores_are_listed_not_plotted() -> None:
    models = [
        _model("a", 0.9),
        _model("b", 0.8),
        _model("c", 0.7),
        _model("partial", 0.5, CLASSIFICATION[:-1]),
        _model("no-mteb", 0.5),
    ]
    mteb = _mteb({"a": [0.5, 0.7], "b": [0.6, 0.6], "c": [0.4, 0.4], "partial": [0.1, 0.1]})
    mteb.scores["half"] = {"T1": 0.3}
    models.append(_model("half", 0.4))
    (comp,) = compare_domains(models, PAPER, mteb, resamples=50)
    assert set(comp.points) == {"a", "b", "c"}
    assert "ChemTEB Classification tasks without accuracy" in comp.excluded["partial"]
    assert comp.excluded["no-mteb"] == "0 of 2 MTEB Classification tasks (needs 2)"
    assert comp.excluded["half"] == "1 of 2 MTEB Classification tasks (needs 2)"
    (loose,) = compare_domains(models, PAPER, mteb, min_mteb_coverage=0.5, resamples=50)
    assert "half" in loose.points
    with pytest.raises(ValueError, match="min_mteb_coverage"):
        compare_domains(models, PAPER, mteb, min_mteb_coverage=0)


def test_the_mteb_readers(tmp_path: Path) -> None:
    table = tmp_path / "scores.csv"
    table.write_text(
        "model_id,task,task_type,split,main_score\n"
        "m,T1,Classification,test,0.5\nm,T2,Classification,test,0.7\n"
    )
    reference = read_mteb_csv(table)
    assert reference.scores == {"m": {"T1": 0.5, "T2": 0.7}}
    table.write_text("model_id,task,task_type,split,main_score\nm,T1,Classification,test,x\n")
    with pytest.raises(ValueError, match="line 2: main_score 'x'"):
        read_mteb_csv(table)
    # a user's MTEB results folder: the English subset of each known task
    folder = tmp_path / "mteb" / "me__new-model" / "abc"
    folder.mkdir(parents=True)
    entries = [
        {"hf_subset": "de", "main_score": 0.1, "languages": ["deu-Latn"]},
        {"hf_subset": "en", "main_score": 0.8, "languages": ["eng-Latn"]},
    ]
    for task in ("T1", "Unknown"):
        (folder / f"{task}.json").write_text(
            json.dumps({"task_name": task, "scores": {"test": entries}})
        )
    merged = read_mteb_folder(tmp_path / "mteb", reference)
    assert merged.scores["me/new-model"] == {"T1": 0.8}
    assert "me/new-model" not in reference.scores  # the reference is not changed


def test_correlation_matrices_by_hand() -> None:
    bench = Benchmark("tiny", "release", tuple(CLASSIFICATION[:3]), Aggregation("mean"))
    t1, t2, t3 = CLASSIFICATION[:3]
    rows = {"a": (0.1, 0.9, 0.5), "b": (0.2, 0.8, 0.5), "c": (0.3, 0.7, 0.6)}
    models = [
        ModelResults(model=m, folder=Path(m), scores=dict(zip((t1, t2, t3), v, strict=True)))
        for m, v in rows.items()
    ]
    tasks = task_correlations(models, bench)
    i1, i2 = tasks.labels.index(t1), tasks.labels.index(t2)
    assert tasks.spearman[i1][i2] == pytest.approx(-1.0)  # t2 falls as t1 rises
    assert tasks.pearson[i1][i1] == pytest.approx(1.0)
    models.append(ModelResults(model="d", folder=Path("d"), scores={t1: 0.5}))
    by_model = model_correlations(models, bench, {"a": "X", "b": "X", "c": "Y"})
    ia = by_model.labels.index("a")
    id_ = by_model.labels.index("d")
    assert by_model.spearman[ia][id_] is None  # one common task: fewer than 3 pairs
    assert by_model.groups[ia] == "X"


def test_cli_on_the_paper_results_reproduces_the_papers_directions(
    shared_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = shared_dir / "reference" / "paper_results"
    assert main(["compare-domains", str(results), "--json"]) == 0
    out = {c["type"]: c for c in json.loads(capsys.readouterr().out)}
    assert set(out) == {"Classification", "Clustering", "PairClassification", "Retrieval"}

    def gaps(kind: str) -> list[float]:
        return [p["chemteb"] - p["mteb"] for p in out[kind]["points"].values()]

    # the paper: pair classification lower on ChemTEB, retrieval mostly higher, classification
    # higher with less spread
    assert all(g < 0 for g in gaps("PairClassification"))
    assert sum(g > 0 for g in gaps("Retrieval")) > 0.8 * len(gaps("Retrieval"))
    assert all(g > 0 for g in gaps("Classification"))
    chem = [p["chemteb"] for p in out["Classification"]["points"].values()]
    general = [p["mteb"] for p in out["Classification"]["points"].values()]
    assert max(chem) - min(chem) < max(general) - min(general)
    assert "BAAI/bge-m3" in out["Classification"]["excluded"]
    # correlations as CSV
    folder = tmp_path / "corr"
    table = str(shared_dir / "reference" / "paper_models.csv")
    assert main(["rank", str(results), "--model-table", table, "--correlations", str(folder)]) == 0
    with (folder / "models_spearman.csv").open() as handle:
        rows = list(csv.reader(handle))
    assert len(rows) == 35 and rows[0][:2] == ["", "group"] and rows[1][1]  # families


def test_vectorised_correlations_equal_scipy_pair_by_pair() -> None:
    """The matrices (all pairs at once where no value is missing) and the bootstrap's row-wise
    Spearman equal scipy pair by pair: random tables with ties, missing values and constant
    columns, 30 cases."""
    import math

    import numpy as np
    from scipy.stats import pearsonr

    from chemteb_eval.results.correlations import MIN_PAIRS, _matrix, spearman_rows

    rng = np.random.default_rng(7)
    for case in range(30):
        n_rows, n_cols = int(rng.integers(2, 12)), int(rng.integers(1, 8))
        table = rng.integers(0, 5, (n_rows, n_cols)).astype(float)  # small ints: many ties
        table[rng.random(table.shape) < 0.15] = math.nan
        if case % 5 == 0:
            table[:, 0] = 1.0  # a constant column: no correlation
        out = _matrix(table, [str(i) for i in range(n_cols)], [""] * n_cols)
        for i in range(n_cols):
            for j in range(n_cols):
                keep = ~(np.isnan(table[:, i]) | np.isnan(table[:, j]))
                a, b = table[keep, i], table[keep, j]
                if keep.sum() < MIN_PAIRS or a.std() == 0 or b.std() == 0:
                    assert out.spearman[i][j] is None and out.pearson[i][j] is None
                    continue
                assert out.spearman[i][j] == pytest.approx(spearmanr(a, b).statistic, abs=1e-12)
                assert out.pearson[i][j] == pytest.approx(pearsonr(a, b).statistic, abs=1e-12)
        u = rng.integers(0, 4, (20, max(n_rows, 3))).astype(float)
        v = rng.integers(0, 4, u.shape).astype(float)
        u[0] = 2.0  # a constant row
        rows = spearman_rows(u, v)
        assert math.isnan(rows[0])
        for k in range(1, len(u)):
            if u[k].std() == 0 or v[k].std() == 0:
                assert math.isnan(rows[k])
            else:
                assert rows[k] == pytest.approx(spearmanr(u[k], v[k]).statistic, abs=1e-12)


def test_types_narrow_the_comparison() -> None:
    models = [_model("a", 0.9), _model("b", 0.8), _model("c", 0.7)]
    mteb = _mteb({"a": [0.5, 0.7], "b": [0.6, 0.6], "c": [0.4, 0.4]})
    assert compare_domains(models, PAPER, mteb, types=["Clustering"]) == []
    (only,) = compare_domains(models, PAPER, mteb, types=["Classification"], resamples=20)
    (full,) = compare_domains(models, PAPER, mteb, resamples=20)
    assert only.to_dict() == full.to_dict() and only.n_mteb_needed == 2


def test_correlation_csvs_name_families_without_a_model_table(
    shared_dir: Path, tmp_path: Path
) -> None:
    """As the leaderboard does: the paper_models.csv beside the results, else the org."""
    results = shared_dir / "reference" / "paper_results"
    assert main(["rank", str(results), "--correlations", str(tmp_path)]) == 0
    with (tmp_path / "models_spearman.csv").open() as handle:
        groups = {row[0]: row[1] for row in list(csv.reader(handle))[1:]}
    assert groups["sentence-transformers/all-MiniLM-L6-v2"] == "SBERT"
    assert groups["nomic-ai/nomic-embed-text-v1"] == "Nomic"
