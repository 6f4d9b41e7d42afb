"""Leaderboard tables: model facts, size buckets, Pareto front, speed, filters, robustness."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chemteb_eval.results.board import read_results
from chemteb_eval.results.leaderboard import (
    ModelFacts,
    build_leaderboard,
    filter_rows,
    pareto_front,
    parse_parameters,
    read_model_table,
    size_bucket,
    task_size,
)
from chemteb_eval.results.scan import scan_results
from chemteb_eval.tasks import benchmark_tasks, get_benchmark, get_task, main_score

BENCH = "ChemTEB(paper)"  # its tasks have sizes, so speeds can be checked


def _write(root: Path, model: str, scores: dict[str, float], seconds: float = 2.0) -> Path:
    folder = root / model.replace("/", "__") / "rev"
    folder.mkdir(parents=True, exist_ok=True)
    for task in benchmark_tasks(BENCH):
        if task.name not in scores:
            continue
        key = main_score(get_benchmark(BENCH), task)
        entry = {key: scores[task.name], "hf_subset": "default"}
        payload = {
            "task_name": task.name,
            "dataset_revision": task.revision,
            "evaluation_time": seconds,
            "scores": {split: [entry] for split in task.eval_splits},
        }
        (folder / f"{task.name}.json").write_text(json.dumps(payload))
    return folder


def test_parse_parameters_hand_checked() -> None:
    assert parse_parameters("109.4 M") == 109_400_000
    assert parse_parameters("22.7M") == 22_700_000
    assert parse_parameters("1.2 B") == 1_200_000_000
    assert parse_parameters("278 M") == 278_000_000
    assert parse_parameters("N/A") is None
    assert parse_parameters("") is None
    assert parse_parameters(None) is None
    assert parse_parameters(33_000) == 33_000
    with pytest.raises(ValueError, match="parameters: 'lots'"):
        parse_parameters("lots")


def test_size_buckets_edges() -> None:
    assert size_bucket(None) == "unknown"
    assert size_bucket(99_999_999) == "< 100M"
    assert size_bucket(100_000_000) == "100M-500M"
    assert size_bucket(499_999_999) == "100M-500M"
    assert size_bucket(500_000_000) == "≥ 500M"


def test_facts_validate() -> None:
    with pytest.raises(ValueError, match="embedding_dim"):
        ModelFacts(model="m", embedding_dim=0)
    with pytest.raises(ValueError, match="model"):
        ModelFacts(model="")


def test_pareto_front_hand_checked() -> None:
    # (speed, score): a fast-weak, b slow-strong, c dominated by a and b, d equal to a (kept:
    # equal points do not dominate each other).
    points = [(10.0, 0.5), (1.0, 0.9), (0.5, 0.4), (10.0, 0.5)]
    assert pareto_front(points) == [True, True, False, True]
    assert pareto_front([]) == []


@given(st.lists(st.tuples(st.floats(0, 100), st.floats(0, 1)), min_size=1, max_size=30))
def test_pareto_front_properties(points: list[tuple[float, float]]) -> None:
    front = pareto_front(points)
    # The best-scoring and the fastest point are always on the front.
    best = max(range(len(points)), key=lambda i: (points[i][1], points[i][0]))
    fastest = max(range(len(points)), key=lambda i: (points[i][0], points[i][1]))
    assert front[best] and front[fastest]
    # No front point dominates another front point.
    kept = [p for p, f in zip(points, front, strict=True) if f]
    for x, y in kept:
        assert not any(ox >= x and oy >= y and (ox > x or oy > y) for ox, oy in kept)


def test_task_size_from_records() -> None:
    assert task_size(get_task("ChemNQRetrieval", "release")) == 22960
    # MTEB's records carry split sizes: eval splits plus the probe's training split.
    assert task_size(get_task("SDSEyeProtectionClassification", "mteb")) == 2000 + 6000
    assert task_size(get_task("ChemHotpotQARetrieval", "mteb")) == 10249 + 10077 + 10087


def test_model_table_needs_model_id(tmp_path: Path) -> None:
    bad = tmp_path / "models.csv"
    bad.write_text("name,params\nx,1\n")
    with pytest.raises(ValueError, match=r"model_table: .* no 'model_id' column"):
        read_model_table(bad)


def test_board_from_written_results(tmp_path: Path) -> None:
    names = [t.name for t in benchmark_tasks(BENCH)]
    _write(tmp_path, "org/strong", dict.fromkeys(names, 0.9), seconds=10.0)
    _write(tmp_path, "org/weak", dict.fromkeys(names, 0.4), seconds=1.0)
    _write(tmp_path, "org/partial", {names[0]: 0.99})
    (tmp_path / "org__strong" / "rev" / "model_meta.json").write_text(
        json.dumps({"name": "org/strong", "n_parameters": 600_000_000, "embed_dim": 1024})
    )
    broken = tmp_path / "org__weak" / "rev" / "Broken.json"
    broken.write_text("{ not json")
    table = tmp_path / "models.csv"
    with table.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["model_id", "open_source", "parameters", "embedding_dim", "family"])
        writer.writerow(["org/weak", "False", "N/A", "1536", "API"])
    board = build_leaderboard([tmp_path], get_benchmark(BENCH), model_table=read_model_table(table))
    assert [r["Model"] for r in board.overall] == ["org/strong", "org/weak", "org/partial"]
    first, second, partial = board.overall
    assert (first["Rank"], second["Rank"], partial["Rank"]) == (1, 2, None)
    assert partial["Coverage"] == f"1/{len(names)}" and partial["RRF"] is None
    assert first["Params (M)"] == 600.0 and first["Dim"] == 1024 and first["Size"] == "≥ 500M"
    assert second["Open"] == "proprietary" and second["Family"] == "API"
    assert first["Family"] == "org"  # no table row: the org of the id
    assert any("Broken.json" in n for n in board.notices)
    # Per task: the partial model's 0.99 is ranked first on its one task.
    assert board.per_task[names[0]][0]["Model"] == "org/partial"
    # Speed: sizes over seconds, only for complete models.
    sizes = [task_size(t) for t in board.tasks]
    speed = {e["Model"]: e["Samples/s"] for e in board.efficiency}
    assert all(s is not None for s in sizes)
    total = sum(s for s in sizes if s is not None)
    assert speed["org/weak"] == pytest.approx(total / (len(names) * 1.0))
    assert speed["org/strong"] == pytest.approx(total / (len(names) * 10.0))
    assert "org/partial" not in speed
    # Filters.
    assert [
        r["Model"] for r in filter_rows(board.overall, board.facts, openness="proprietary")
    ] == ["org/weak"]
    assert [r["Model"] for r in filter_rows(board.overall, board.facts, query="STRO")] == [
        "org/strong"
    ]
    assert [r["Model"] for r in filter_rows(board.overall, board.facts, sizes=["≥ 500M"])] == [
        "org/strong"
    ]
    assert [r["Model"] for r in filter_rows(board.overall, board.facts, families=["API"])] == [
        "org/weak"
    ]
    with pytest.raises(ValueError, match="openness"):
        filter_rows(board.overall, board.facts, openness="closed")


def test_models_without_the_benchmarks_tasks_are_left_out(tmp_path: Path) -> None:
    names = [t.name for t in benchmark_tasks(BENCH)]
    _write(tmp_path, "org/a", dict.fromkeys(names, 0.5))
    board = build_leaderboard([tmp_path], get_benchmark("PipChem"))
    assert board.overall == [] and board.efficiency == []


def test_paper_board_and_timings(shared_dir: Path) -> None:
    """The paper's 34 models: text-embedding-3-large first; facts from paper_models.csv; the
    per-type mean evaluation_time equals the paper's V100 timing table (its source)."""
    root = shared_dir / "reference" / "paper_results"
    table = read_model_table(shared_dir / "reference" / "paper_models.csv")
    board = build_leaderboard(
        scan_results([root]), get_benchmark("ChemTEB(paper)"), model_table=table
    )
    assert len(board.overall) == 34 and all(r["Complete"] for r in board.overall)
    top = board.overall[0]
    assert top["Model"] == "text-embedding-3-large" and round(top["RRF"], 4) == 0.3842
    assert top["Open"] == "proprietary" and top["Dim"] == 3072 and top["Params (M)"] is None
    minilm = next(r for r in board.overall if r["Model"].endswith("all-MiniLM-L6-v2"))
    assert minilm["Params (M)"] == 22.7 and minilm["Family"] == "SBERT"
    assert len(board.efficiency) == 34 and any(e["Pareto"] for e in board.efficiency)
    assert all("V100" in e["Hardware"] for e in board.efficiency)
    with (shared_dir / "reference" / "paper_timing_v100.csv").open() as handle:
        timing = {row["paper_name"]: row for row in csv.DictReader(handle)}
    models = {m.model: m for m in read_results([root], get_benchmark("ChemTEB(paper)"))}
    columns = {"Classification": "classification_s", "BitextMining": "bitext_mining_s"}
    for model_id, row in table.items():
        if model_id not in models:
            continue
        m = models[model_id]
        for type_, column in columns.items():
            seconds = [m.seconds[t.name] for t in board.tasks if t.type == type_]
            expected = float(timing[row["paper_name"]][column].split("±")[0])
            assert round(sum(seconds) / len(seconds), 2) == pytest.approx(expected, abs=0.011)


def test_speeds_are_grouped_by_hardware_and_scoring_only_times_are_left_out(
    tmp_path: Path,
) -> None:
    import json
    import sys

    from chemteb_eval.results.leaderboard import build_leaderboard
    from chemteb_eval.tasks import get_benchmark

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "space"))
    from synthetic import write_synthetic_results
    from views import efficiency_figure

    root = write_synthetic_results(tmp_path / "r", n_models=6, seed=3)
    folders = sorted(root.iterdir())
    for i, folder in enumerate(folders[:4]):
        hardware = {"cuda": "NVIDIA H100", "gpu_count": 1} if i < 2 else {"cpu": "Xeon", "cpus": 8}
        (folder / ("0" * 40) / "run_meta.json").write_text(json.dumps({"hardware": hardware}))
    # The last model's files come from an earlier chemteb-eval that timed scoring alone.
    for path in (folders[5] / ("0" * 40)).glob("*.json"):
        if path.name != "model_meta.json":
            payload = json.loads(path.read_text())
            payload["chemteb_eval_version"] = "0.1.0"
            path.write_text(json.dumps(payload))
    board = build_leaderboard([root], get_benchmark("ChemTEB(paper)"))
    machines = {e["Hardware"] for e in board.efficiency}
    assert machines == {"NVIDIA H100", "Xeon CPU (8 cores)", "not recorded"}
    assert not any(e["Model"].endswith("model-005") for e in board.efficiency)
    for machine in machines:  # every panel has its own front
        assert any(e["Pareto"] for e in board.efficiency if e["Hardware"] == machine)
    figure = efficiency_figure(board, board.efficiency)
    titles = [a.text for a in figure.layout.annotations]
    assert sorted(titles) == sorted(machines)
