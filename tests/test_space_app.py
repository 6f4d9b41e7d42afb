"""The leaderboard Space without a browser: state, handlers, URL parsing, the Hub source."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO_ROOT
from tests.helpers.fake_hub import FakeHub

sys.path.insert(0, str(REPO_ROOT / "space"))
import analysis
import app
import columns
import tabs
import views
from synthetic import write_synthetic_mteb_scores, write_synthetic_results


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> app.AppState:
    root = write_synthetic_results(
        tmp_path_factory.mktemp("results"), n_models=12, seed=1, incomplete=2, malformed=2
    )
    return app.build_state([root])


def _defaults(state: app.AppState, **changes: Any) -> list[Any]:
    values = app.parse_query(state, {})
    values.update(changes)
    return [values[p] for p in app.PARAMS]


def test_state_has_the_benchmarks_and_lists_broken_files(state: app.AppState) -> None:
    assert set(app.SHOWN_BENCHMARKS) <= set(state.boards)
    assert "PipChem" not in state.boards  # no PipChem results were written
    board = state.boards["ChemTEB(paper)"]
    assert len(board.overall) == 12
    assert sum(1 for n in board.notices if "synthetic-broken" in n) == 2
    assert [r["Rank"] is None for r in board.overall][-2:] == [True, True]


def test_view_all_matches_the_outputs(state: app.AppState) -> None:
    out = app.view_all(state, *_defaults(state))
    summary, notice = out[0], out[1]
    assert "Showing 12 of 12 models (10 complete" in summary
    assert "2 result file(s) skipped" in notice
    csv_path = Path(out[3])
    assert csv_path.is_file() and csv_path.read_text().startswith("Rank,Model,RRF,Borda rank")
    demo = app.build_demo(state)
    assert demo is not None


def test_filters_reach_every_table(state: app.AppState) -> None:
    out = app.view_tables(state, "ChemTEB(paper)", "proprietary", [], [], "")
    overall_csv = Path(out[3]).read_text().splitlines()
    facts = state.boards["ChemTEB(paper)"].facts
    proprietary = [m for m, f in facts.items() if f.open_weights is False]
    assert len(overall_csv) - 1 == len(proprietary) > 0
    for i in range(5):  # per type CSVs
        assert len(Path(out[5 + 2 * i]).read_text().splitlines()) - 1 == len(proprietary)
    out = app.view_tables(state, "ChemTEB(paper)", "all", [], [], "model-003")
    assert len(Path(out[3]).read_text().splitlines()) == 2


def test_task_and_plots(state: app.AppState) -> None:
    dropdown, info, _table, csv_path = app.view_task(
        state, "ChemTEB(paper)", "all", [], [], "", "ChemNQRetrieval"
    )
    assert "ChemNQRetrieval" in info and "ndcg_at_10" in info and "22960" in info
    header = Path(csv_path).read_text().splitlines()[0]
    assert header.startswith("Rank,Model,ndcg_at_10,map_at_10")
    fig, _ = app.view_efficiency(state, "ChemTEB(paper)", "all", [], [], "")
    names = {t.name for t in fig.data}
    assert "Pareto front" in names
    fig = app.view_distribution(state, "ChemTEB(paper)", "all", [], [], "", "Retrieval")
    assert len(fig.data) >= 1 and all(t.type == "box" for t in fig.data)
    picker, radar = app.view_radar(state, "ChemTEB(paper)", "all", [], [], "", [])
    assert len(radar.data) == 3  # default: the top three
    assert picker.value == [t.name for t in radar.data]
    # An unknown task falls back to the benchmark's first task.
    dropdown, *_ = app.view_task(state, "ChemTEB(paper)", "all", [], [], "", "Nope")
    assert dropdown.value == state.boards["ChemTEB(paper)"].tasks[0].name


def test_parse_query_falls_back_on_unknown_values(state: app.AppState) -> None:
    values = app.parse_query(
        state,
        {
            "benchmark": "NotABenchmark",
            "open": "sometimes",
            "size": "< 100M,huge",
            "family": "synthetic-org1,nobody",
            "tab": "secret",
            "models": "a,b",
        },
    )
    assert values["benchmark"] == state.default_benchmark
    assert values["open"] == "all"
    assert values["size"] == ["< 100M"]
    assert values["family"] == ["synthetic-org1"]
    assert values["tab"] == "overall"
    assert values["models"] == ["a", "b"]


def test_url_script_names_every_parameter() -> None:
    script = app._url_js(app.PARAMS)
    assert json.dumps(list(app.PARAMS)) in script and "replaceState" in script


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    server = FakeHub()
    yield server
    server.close()


def _download(
    hub: FakeHub, tmp_path: Path, repo: str, revision: str | None, offline: bool
) -> subprocess.CompletedProcess[str]:
    # huggingface_hub reads HF_ENDPOINT and HF_HUB_OFFLINE at import: a fresh process.
    code = (
        "import sys; from chemteb_eval.hub import download_results; "
        "print(download_results(sys.argv[1], revision=sys.argv[2] or None))"
    )
    env = {
        **os.environ,
        "HF_ENDPOINT": hub.url,
        "HF_HUB_OFFLINE": "1" if offline else "0",
        "HF_HOME": str(tmp_path / "hf-home"),
        "HF_HUB_DISABLE_XET": "1",
    }
    return subprocess.run(
        [sys.executable, "-c", code, repo, revision or ""],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


@pytest.mark.slow
def test_results_from_a_hub_dataset_repo(hub: FakeHub, tmp_path: Path) -> None:
    local = write_synthetic_results(tmp_path / "local", n_models=3, seed=2)
    files = {str(p.relative_to(local)): p.read_bytes() for p in local.rglob("*") if p.is_file()}
    files["README.md"] = b"not fetched: only JSON and CSV are"
    pinned = hub.add_commit("chemteb/results", files)
    extra = dict(files)
    extra.pop(next(k for k in files if k.endswith(".json") and "model_meta" not in k))
    hub.add_commit("chemteb/results", extra)  # main moves on; the pin does not

    done = _download(hub, tmp_path, "chemteb/results", pinned, offline=False)
    assert done.returncode == 0, done.stderr
    folder = Path(done.stdout.strip().splitlines()[-1])
    assert folder.name == pinned and not (folder / "README.md").exists()
    state = app.build_state([folder])
    assert all(r["Complete"] for r in state.boards["ChemTEB(paper)"].overall)
    assert len(state.boards["ChemTEB(paper)"].overall) == 3

    # Offline again: the pinned snapshot comes from the cache.
    again = _download(hub, tmp_path, "chemteb/results", pinned, offline=True)
    assert again.returncode == 0 and Path(again.stdout.strip().splitlines()[-1]) == folder

    # main is the newer commit with one file fewer: one model is incomplete there.
    latest = _download(hub, tmp_path, "chemteb/results", None, offline=False)
    assert latest.returncode == 0, latest.stderr
    board = app.build_state([Path(latest.stdout.strip().splitlines()[-1])]).boards["ChemTEB(paper)"]
    assert sum(not r["Complete"] for r in board.overall) == 1


def test_hub_errors_say_what_to_do(hub: FakeHub, tmp_path: Path) -> None:
    missing = _download(hub, tmp_path, "chemteb/nothing-here", None, offline=False)
    assert missing.returncode != 0
    assert "ChemtebError" in missing.stderr and "Check the repo id" in missing.stderr
    offline = _download(hub, tmp_path, "chemteb/nothing-here", None, offline=True)
    assert "no copy is cached" in offline.stderr
    bad = _download(hub, tmp_path, "not-a-repo-id", None, offline=False)
    assert "repo_id: 'not-a-repo-id'" in bad.stderr


def test_display_bolds_the_best_and_keeps_numbers() -> None:
    import views

    df = views.frame(
        [
            {"Rank": 1, "Model": "org/a", "RRF": 0.5, "Params (M)": 300.0, "Complete": True},
            {"Rank": 2, "Model": "api-model", "RRF": 0.25, "Params (M)": None, "Complete": True},
            {"Rank": None, "Model": "org/b", "RRF": None, "Params (M)": 900.0, "Complete": False},
        ]
    )
    value = views.display(df)
    assert value["headers"] == ["Rank", "Model", "RRF", "Params (M)"]  # Complete is hidden
    assert [row[2] for row in value["data"]] == [0.5, 0.25, None]  # numbers, for sorting
    shown = value["metadata"]["display_value"]
    assert [row[2] for row in shown] == ["0.5000", "0.2500", "—"]
    assert [row[0] for row in shown] == ["1", "2", "—"]
    assert shown[0][1] == "[org/a](https://huggingface.co/org/a)"
    assert shown[1][1] == "api-model" and shown[2][1].endswith("⚠ incomplete")
    styles = value["metadata"]["styling"]
    assert [row[2] for row in styles] == ["font-weight: bold", "", ""]
    assert all(row[3] == "" for row in styles)  # parameters are facts: never bold
    assert views.datatypes(df) == ["number", "markdown", "number", "number"]


def test_space_card_front_matter() -> None:
    text = (REPO_ROOT / "space" / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n")
    front = dict(
        line.split(": ", 1) for line in text.split("---\n")[1].splitlines() if ": " in line
    )
    assert front["sdk"] == "gradio" and front["app_file"] == "app.py"
    assert front["title"] and front["emoji"]
    assert 0 < len(front["short_description"]) <= 60  # the Hub's limit
    requirements = (REPO_ROOT / "space" / "requirements.txt").read_text()
    assert "gradio" in requirements and "plotly" in requirements


def test_an_empty_results_folder_gives_a_page(tmp_path: Path) -> None:
    state = app.build_state([tmp_path])
    out = app.view_all(state, *_defaults(state))
    assert "no model has results" in out[0]
    assert app.build_demo(state) is not None
    with pytest.raises(ValueError, match=r"results: .* is not a folder"):
        app.build_state([tmp_path / "missing"])


def _model_cells(table: Any) -> list[str]:
    value = table["value"]
    column = value["headers"].index("Model")
    return [row[column] for row in value["metadata"]["display_value"]]


def test_the_first_page_of_a_pipchem_only_folder_shows_its_models(tmp_path: Path) -> None:
    """A folder of `chemteb run`'s default (PipChem) results opens on PipChem and says why."""
    root = write_synthetic_results(tmp_path / "results", n_models=3, seed=2, benchmark="PipChem")
    state = app.build_state([root])
    assert state.default_benchmark == "PipChem"
    out = app.view_all(state, *_defaults(state))
    assert "**PipChem** — 7 tasks" in out[0] and "Showing 3 of 3 models (3 complete" in out[0]
    assert (
        "Opened on **PipChem**, the benchmark these results cover best \\(3 of 3 model\\(s\\) "
        "complete on its 7 tasks; no other benchmark has any of their tasks\\); choose another "
        "under *Benchmark*."
    ) in out[0]
    cells = _model_cells(out[2])
    assert sorted(cells) == [
        f"[synthetic-org{i}/model-00{i}](https://huggingface.co/synthetic-org{i}/model-00{i})"
        for i in range(3)
    ]
    # a benchmark named by the caller is opened as before, without the line
    state = app.build_state([root], default_benchmark="ChemTEB(paper)")
    out = app.view_all(state, *_defaults(state))
    assert "no model has results" in out[0] and "Opened on" not in out[0]


def test_two_folders_of_one_model_show_the_model_and_its_folder(tmp_path: Path) -> None:
    import shutil

    root = write_synthetic_results(tmp_path / "a", n_models=1, benchmark="PipChem")
    copy = tmp_path / "b"
    shutil.copytree(root, copy)
    state = app.build_state([root, copy])
    cells = _model_cells(app.view_tables(state, "PipChem", "all", [], [], "")[2])
    link = "[synthetic-org0/model-000](https://huggingface.co/synthetic-org0/model-000)"
    # the model's own link, then the folder as code: no "\\[...\\]" that reads as a broken link
    assert cells == [f"{link} · `{r / 'synthetic-org0__model-000'}`" for r in (root, copy)]


@pytest.mark.slow
def test_the_app_starts_from_a_hub_repo(hub: FakeHub, tmp_path: Path) -> None:
    """As on a Space: no --results, the repo and pinned revision from the environment."""
    import socket
    import time
    import urllib.request

    local = write_synthetic_results(tmp_path / "local", n_models=2, seed=4)
    files = {str(p.relative_to(local)): p.read_bytes() for p in local.rglob("*") if p.is_file()}
    pinned = hub.add_commit("chemteb/space-results", files)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {
        **os.environ,
        "HF_ENDPOINT": hub.url,
        "HF_HUB_OFFLINE": "0",
        "HF_HOME": str(tmp_path / "hf-home"),
        "CHEMTEB_RESULTS_REPO": "chemteb/space-results",
        "CHEMTEB_RESULTS_REVISION": pinned,
        "GRADIO_ANALYTICS_ENABLED": "False",
    }
    log = tmp_path / "app.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, str(REPO_ROOT / "space" / "app.py"), "--port", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
    try:
        deadline = time.monotonic() + 120
        config = ""
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/config", timeout=2) as r:
                    config = r.read().decode()
                break
            except OSError:
                time.sleep(0.3)
        assert config, log.read_text()
        assert f"`chemteb/space-results` @ `{pinned}`" in config
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    # A repo the Hub does not have: a one-line error with the next step, no traceback.
    env["CHEMTEB_RESULTS_REPO"] = "chemteb/absent"
    done = subprocess.run(
        [sys.executable, str(REPO_ROOT / "space" / "app.py"), "--port", str(port)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 1 and "Check the repo id" in done.stderr
    assert "Traceback" not in done.stderr


# ---------------------------------------------------------------------------------------------
# The analysis tabs (issue 19): ChemTEB vs MTEB and the correlation matrices.


@pytest.fixture(scope="module")
def analysis_state(tmp_path_factory: pytest.TempPathFactory) -> app.AppState:
    root = write_synthetic_results(
        tmp_path_factory.mktemp("results"), n_models=12, seed=1, incomplete=2
    )
    scores = write_synthetic_mteb_scores(root.parent / "mteb.csv", n_models=12, seed=5, missing=1)
    return app.build_state([root], mteb_scores=scores)


def test_domain_view_plots_what_the_csv_holds(analysis_state: app.AppState) -> None:
    from chemteb_eval.results.domains import compare_domains

    state = analysis_state
    fig, note, _table, csv_path = app.view_domains(
        state, "ChemTEB(paper)", "all", [], [], "", "Classification"
    )
    board = state.boards["ChemTEB(paper)"]
    assert state.mteb is not None
    (expected,) = [
        c
        for c in compare_domains(board.models, board.benchmark, state.mteb)
        if c.kind == "Classification"
    ]
    with Path(csv_path).open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    # every plotted point is a CSV row with the same coordinates, and nothing else is plotted
    points = {
        name: (x, y)
        for trace in fig.data
        if trace.mode == "markers"
        for name, x, y in zip(trace.text, trace.x, trace.y, strict=True)
    }
    assert set(points) == {r["Model"] for r in rows} == set(expected.points)
    for r in rows:
        assert points[r["Model"]] == pytest.approx(
            (float(r["MTEB mean"]), float(r["ChemTEB mean"]))
        )
        assert expected.points[r["Model"]] == pytest.approx(points[r["Model"]])
        assert int(r["Ranks gained"]) == int(r["MTEB rank"]) - int(r["ChemTEB rank"])
    # the diagonal, the metric on both axes, rho and its interval in the title
    assert any(t.mode == "lines" and list(t.x) == list(t.y) for t in fig.data)
    assert "mean accuracy" in fig.layout.xaxis.title.text
    assert "mean accuracy" in fig.layout.yaxis.title.text
    assert expected.rho is not None and f"{expected.rho:+.2f}" in fig.layout.title.text
    # the excluded: the model without one MTEB task, the models lacking a ChemTEB task
    assert "synthetic-org0/model-000" in expected.excluded
    for model, why in expected.excluded.items():
        assert f"`{model}`: {why}" in note
    assert "ranks classification by f1" in note  # the paper's metric is not the axis metric


def test_domain_view_follows_the_filters(analysis_state: app.AppState) -> None:
    from chemteb_eval.results.domains import compare_domains

    state = analysis_state
    board = state.boards["ChemTEB(paper)"]
    facts = board.facts
    opened = {m for m, f in facts.items() if f.open_weights}
    _fig, note, _table, csv_path = app.view_domains(
        state, "ChemTEB(paper)", "open", [], [], "", "Retrieval"
    )
    shown = {r["Model"] for r in csv.DictReader(Path(csv_path).open(encoding="utf-8"))}
    assert shown and shown <= opened
    assert state.mteb is not None
    kept = [m for m in board.models if m.model in opened]
    (expected,) = [
        c for c in compare_domains(kept, board.benchmark, state.mteb) if c.kind == "Retrieval"
    ]
    assert shown == set(expected.points)
    assert f"{len(shown)} models (the filters apply)" in note
    assert expected.rho is not None and f"ρ = {expected.rho:+.2f}" in note


def test_domain_view_without_mteb_scores_says_what_to_do(state: app.AppState) -> None:
    fig, note, _table, csv_path = app.view_domains(
        state, "ChemTEB(paper)", "all", [], [], "", "Clustering"
    )
    assert "No MTEB scores" in fig.layout.title.text
    assert "--mteb-scores" in note
    assert Path(csv_path).read_text().startswith("Model,Family,MTEB mean,ChemTEB mean")


def test_domain_view_of_a_type_without_mteb_tasks(analysis_state: app.AppState) -> None:
    import dataclasses

    from chemteb_eval.results.mteb_scores import MtebScores

    assert analysis_state.mteb is not None
    only = MtebScores(
        {m: {"SyntheticClassification1": 0.5} for m in analysis_state.mteb.scores},
        {"SyntheticClassification1": "Classification"},
        {"SyntheticClassification1": "test"},
    )
    state = dataclasses.replace(analysis_state, mteb=only)
    fig, note, _table, csv_path = app.view_domains(
        state, "ChemTEB(paper)", "all", [], [], "", "Clustering"
    )
    assert "no Clustering tasks to compare" in fig.layout.title.text
    assert "nothing to compare" in note
    assert len(Path(csv_path).read_text().splitlines()) == 1  # the header only
    _fig, note, _table, _csv = app.view_domains(
        state, "ChemTEB(paper)", "all", [], [], "", "Classification"
    )
    assert "at least 1 of the 1 MTEB(eng, v1) Classification tasks" in note


def test_mteb_scores_sources_and_errors(tmp_path: Path) -> None:
    root = write_synthetic_results(tmp_path / "results", n_models=3, seed=2)
    # found beside the results folder, as paper_models.csv is
    write_synthetic_mteb_scores(tmp_path / app.MTEB_SCORES_FILE, n_models=3)
    state = app.build_state([root])
    assert state.mteb is not None and len(state.mteb.scores) == 3
    assert app.MTEB_SCORES_FILE in state.mteb_source
    with pytest.raises(
        ValueError, match=r"mteb_scores \(--mteb-scores\): .*nope.csv is not a file"
    ):
        app.build_state([root], mteb_scores=tmp_path / "nope.csv")
    with pytest.raises(ValueError, match="min_mteb_coverage"):
        app.build_state([root], min_mteb_coverage=1.5)
    with pytest.raises(ValueError, match=r"mteb_results \(--mteb-results\): .* is not a folder"):
        app.build_state([root], mteb_results=[tmp_path / "absent"])
    alone = write_synthetic_results(tmp_path / "alone" / "results", n_models=1, seed=3)
    with pytest.raises(ValueError, match=r"needs the MTEB\(eng, v1\) scores too"):
        app.build_state([alone], mteb_results=[tmp_path])
    # from the command line: one line naming the flag, no traceback
    done = subprocess.run(
        [
            sys.executable,
            str(REPO_ROOT / "space" / "app.py"),
            *("--results", str(root), "--mteb-scores", str(tmp_path / "nope.csv")),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and "--mteb-scores" in done.stderr
    assert "Traceback" not in done.stderr
    # a user's MTEB results folder adds a model (MTEB's layout, read by the result reader)
    folder = tmp_path / "mine" / "me__new-model" / "abc"
    folder.mkdir(parents=True)
    (folder / "SyntheticRetrieval1.json").write_text(
        json.dumps(
            {
                "task_name": "SyntheticRetrieval1",
                "scores": {"test": [{"hf_subset": "default", "main_score": 0.5}]},
            }
        )
    )
    state = app.build_state([root], mteb_results=[tmp_path / "mine"])
    assert state.mteb is not None and state.mteb.scores["me/new-model"] == {
        "SyntheticRetrieval1": 0.5
    }
    assert "mine" in state.mteb_source


def test_correlation_view_heatmap_equals_its_csv(analysis_state: app.AppState) -> None:
    from chemteb_eval.results.correlations import model_correlations, task_correlations

    state = analysis_state
    board = state.boards["ChemTEB(paper)"]
    for matrix, method in (("tasks", "spearman"), ("models", "pearson")):
        fig, note, csv_path = app.view_correlations(
            state, "ChemTEB(paper)", "all", [], [], "", matrix, method
        )
        rows = list(csv.reader(Path(csv_path).open(encoding="utf-8")))
        (heat,) = fig.data
        assert len(rows) - 1 == len(heat.z) == len(rows[0]) - 2
        for row, z in zip(rows[1:], heat.z, strict=True):
            assert [None if v == "" else float(v) for v in row[2:]] == pytest.approx(
                list(z), abs=5e-7
            )
        if matrix == "tasks":
            expected = task_correlations(board.models, board.benchmark)
            assert [r[0] for r in rows[1:]] == expected.labels
            assert [r[1] for r in rows[1:]] == expected.groups  # grouped by type
            assert "negative correlation inside a type" in note
            assert len(fig.layout.shapes) == len(board.types)  # one outline per type
        else:
            families = {m: f.family for m, f in board.facts.items()}
            expected = model_correlations(board.models, board.benchmark, families)
            assert [r[0] for r in rows[1:]] == expected.labels  # clustering order
            assert [r[1] for r in rows[1:]] == [families[m] for m in expected.labels]
            assert all(" · " in tick for tick in heat.x)  # each name with its family
    # the filters choose the models: three models, three rows in the model matrix
    _fig, _note, csv_path = app.view_correlations(
        state, "ChemTEB(paper)", "all", [], [], "model-00", "models", "spearman"
    )
    assert len(Path(csv_path).read_text().splitlines()) == 1 + 10
    fig, _note, _csv = app.view_correlations(
        state, "ChemTEB(paper)", "all", [], [], "model-001", "models", "spearman"
    )
    assert "too few" in fig.layout.title.text  # one model: no pair


def test_parse_query_reads_the_analysis_controls(analysis_state: app.AppState) -> None:
    state = analysis_state
    values = app.parse_query(
        state,
        {
            "tab": "domains",
            "vs_type": "Pair classification",
            "matrix": "models",
            "method": "pearson",
        },
    )
    assert (values["tab"], values["vs_type"], values["matrix"], values["method"]) == (
        "domains",
        "Pair classification",
        "models",
        "pearson",
    )
    values = app.parse_query(
        state, {"vs_type": "Bitext mining", "matrix": "x", "method": "kendall"}
    )
    assert (values["vs_type"], values["matrix"], values["method"]) == (
        "Classification",
        "tasks",
        "spearman",
    )
    out = app.view_all(state, *[values[p] for p in app.PARAMS])
    # view_all feeds every output: tables, task, plots, the two analysis tabs, the frontier (3),
    # Versus BM25 (5: its note, two tables and their CSVs; issue 47), Tokenization (3: its
    # plot, table and CSV; issue 48)
    assert len(out) == 33 + 5 + 3
    assert app.build_demo(state) is not None


def test_the_space_reproduces_the_cli_on_the_paper_results(shared_dir: Path) -> None:
    from chemteb_eval.results.board import read_results
    from chemteb_eval.results.domains import compare_domains
    from chemteb_eval.results.mteb_scores import read_mteb_csv
    from chemteb_eval.tasks import get_benchmark

    results = shared_dir / "reference" / "paper_results"
    state = app.build_state([results])  # mteb_eng_v1_scores.csv sits beside paper_results
    assert state.mteb is not None
    bench = get_benchmark("ChemTEB(paper)")
    cli = compare_domains(
        read_results([results], bench),
        bench,
        read_mteb_csv(shared_dir / "reference" / app.MTEB_SCORES_FILE),
    )
    for comp in cli:
        label = analysis.DOMAIN_LABELS[[c.kind for c in cli].index(comp.kind)]
        _fig, note, _table, csv_path = app.view_domains(
            state, "ChemTEB(paper)", "all", [], [], "", label
        )
        rows = list(csv.DictReader(Path(csv_path).open(encoding="utf-8")))
        assert {r["Model"] for r in rows} == set(comp.points)
        assert comp.rho is not None and comp.interval is not None
        assert f"{comp.rho:+.2f} (95% {comp.interval[0]:+.2f} to {comp.interval[1]:+.2f})" in note
        if comp.kind == "PairClassification":  # the paper: lower on ChemTEB, for every model
            assert len(rows) == 27 and all(float(r["ChemTEB − MTEB"]) < 0 for r in rows)


# ---------------------------------------------------------------------------------------------
# The declared columns and the table of tabs (issue "One home each", item 1).


def _pipchem_with_items(root: Path) -> Path:
    """Three models' PipChem results, the retrieval task with per-query items beside its JSON,
    so that ranks get intervals and the retrieval task's scores a 95% CI."""
    import numpy as np

    from chemteb_eval.results.schema import write_items
    from chemteb_eval.tasks import benchmark_tasks, get_benchmark, main_score

    bench = get_benchmark("PipChem")
    retrieval = next(t for t in benchmark_tasks(bench) if t.type == "Retrieval")
    for name, level, seed in (("org__best", 0.9, 1), ("org__mid", 0.6, 2), ("org__last", 0.2, 3)):
        folder = root / name / "rev"
        folder.mkdir(parents=True)
        per_query = np.clip(level + np.random.default_rng(seed).normal(0, 0.05, 40), 0, 1)
        for i, task in enumerate(benchmark_tasks(bench)):
            key = main_score(bench, task)
            score = float(per_query.mean()) if task is retrieval else level + 0.001 * i
            entry = {key: score, "main_score": score, "hf_subset": "default"}
            payload: dict[str, Any] = {"task_name": task.name, "dataset_revision": task.revision}
            payload |= {"evaluation_time": 1.0, "scores": {"test": [entry]}}
            (folder / f"{task.name}.json").write_text(json.dumps(payload))
        arrays = {"ndcg_at_10": per_query, "query_ids": np.array([f"q{i}" for i in range(40)])}
        write_items(folder / f"{retrieval.name}.items.npz", {("test", "default"): arrays})
    return root


def _tables(outputs: Any) -> list[dict[str, Any]]:
    """The table values among a handler's outputs."""
    items = outputs if isinstance(outputs, list) else [outputs]
    return [o["value"] for o in items if isinstance(o, dict) and "headers" in o.get("value", {})]


def test_every_column_a_view_can_produce_is_declared(
    analysis_state: app.AppState, tmp_path: Path
) -> None:
    from chemteb_eval.results.board import DETAIL_KEYS
    from chemteb_eval.tasks import main_score

    pipchem = app.build_state([_pipchem_with_items(tmp_path / "pipchem")])
    for state in (analysis_state, pipchem):
        for name, board in state.boards.items():
            # every key of every row the leaderboard hands the Space: declared, or one of the
            # run-time score columns the per-type (Task [metric]) and per-task (metric) views name
            runtime = {board.column(t) for t in board.tasks}
            runtime |= {main_score(board.benchmark, t) for t in board.tasks}
            runtime |= {k for keys in DETAIL_KEYS.values() for k in keys}
            rows = [*board.overall, *board.efficiency]
            rows += [
                r for table in (*board.by_type.values(), *board.per_task.values()) for r in table
            ]
            undeclared = {k for r in rows for k in r} - set(columns.COLUMNS) - runtime
            assert not undeclared, f"{name}: columns not in space/columns.py: {undeclared}"
            # and every table every view shows renders from declarations (frame raises if not)
            values = app.parse_query(state, {"benchmark": name})
            shown = _tables(app.view_all(state, *[values[p] for p in app.PARAMS]))
            for task in board.tasks:
                shown += _tables(app.view_task(state, name, "all", [], [], "", task.name))
            for label in analysis.DOMAIN_LABELS:
                shown += _tables(app.view_domains(state, name, "all", [], [], "", label))
            assert len(shown) >= 7 + len(board.tasks)
            for table in shown:
                assert set(table["headers"]) <= set(columns.COLUMNS) | runtime
    # an undeclared column is an error, not a guess; so is a number column holding text
    with pytest.raises(columns.UndeclaredColumn, match="'Bogus' is not declared"):
        views.frame([{"Model": "org/a", "Bogus": 1.0}])
    with pytest.raises(ValueError, match=r"'Mean' is declared a number but holds '0\.5'"):
        views.frame([{"Model": "org/a", "Mean": "0.5"}])


def test_the_uncertainty_columns_show_their_intervals_not_dashes(tmp_path: Path) -> None:
    import re

    state = app.build_state([_pipchem_with_items(tmp_path / "results")])
    overall = app.view_tables(state, "PipChem", "all", [], [], "")[2]
    ranks = _column_cells(overall, "Rank 95%")
    assert len(ranks) == 3 and all(re.fullmatch(r"\d+-\d+", c) for c in ranks), ranks
    assert _column_cells(overall, "Tied with #1") == ["≈ #1", "", ""]
    board = state.boards["PipChem"]
    retrieval = next(t for t in board.tasks if t.type == "Retrieval")
    task = app.view_task(state, "PipChem", "all", [], [], "", retrieval.name)[2]
    cis = _column_cells(task, "95% CI")
    assert len(cis) == 3 and all(re.fullmatch(r"0\.\d{4}-[01]\.\d{4}", c) for c in cis), cis
    for table, name in ((overall, "Rank 95%"), (overall, "Tied with #1"), (task, "95% CI")):
        assert table["datatype"][table["value"]["headers"].index(name)] == "str"
    # a benchmark whose models have no intervals: empty cells, never "—", still text
    empty = views.display(views.frame([{"Model": "org/a", "Rank 95%": None, "95% CI": None}]))
    assert empty["metadata"]["display_value"] == [["[org/a](https://huggingface.co/org/a)", "", ""]]


def _column_cells(table: Any, name: str) -> list[str]:
    value = table["value"]
    i = value["headers"].index(name)
    return [row[i] for row in value["metadata"]["display_value"]]


def test_the_tab_table_drives_the_tabs_and_the_url(state: app.AppState) -> None:
    from state import Filters

    ids = [t.id for t in tabs.TABS]
    assert len(set(ids)) == len(ids) and ids[0] == "overall" and ids[-1] == "about"
    # the URL's parameters: the filters', then each tab's own, in the tuple's order
    own = [p.name for t in tabs.TABS for p in t.params]
    assert list(app.PARAMS) == ["benchmark", "open", "size", "family", "q", *own]
    for tab_id in ids:
        assert app.parse_query(state, {"tab": tab_id})["tab"] == tab_id
    # one Filters record, built from the filter row's values; unknown values mean no filter
    filters = Filters.of("ChemTEB(paper)", "sometimes", ["< 100M", "huge"], None, None)
    assert filters == Filters("ChemTEB(paper)", "all", ("< 100M",), (), "")
    # the page has every tab of the table, each wired to its view under the tab's id
    config = json.dumps(app.build_demo(state).config)
    for tab_id in ids:
        assert f'"tab-{tab_id}"' in config
    for tab in tabs.TABS:
        if tab.params:
            assert f'"api_name": "{tab.id}"' in config


def _docs_tab_module() -> Any:
    """The example tab of docs/extending.md ("Adding a Space tab"), as the module it shows."""
    import types

    text = (REPO_ROOT / "docs" / "extending.md").read_text(encoding="utf-8")
    section = text.split("## Adding a Space tab", 1)[1]
    code = section.split("```python\n", 1)[1].split("\n```", 1)[0]
    module = types.ModuleType("tabs.leaders")
    module.__package__ = "tabs"
    exec(compile(code, "docs/extending.md", "exec"), module.__dict__)
    return module


def test_a_new_tab_is_one_module_and_one_line(state: app.AppState) -> None:
    leaders = _docs_tab_module()
    with_leaders = (*tabs.TABS[:-1], leaders.TAB, tabs.TABS[-1])  # the one line
    values = tabs.parse_query(state, {"tab": "leaders", "top": "5"}, with_leaders)
    assert values["tab"] == "leaders" and values["top"] == "5"
    assert tabs.parse_query(state, {"top": "7"}, with_leaders)["top"] == "3"
    assert tabs.params_of(with_leaders)[-1] == "top"
    (table,) = _tables(tabs.handler(leaders.TAB)(state, "ChemTEB(paper)", "all", [], [], "", "5"))
    assert table["headers"] == ["Rank", "Model", "Mean"] and len(table["data"]) == 5
    every = tabs.handler(tabs.HEADER, *with_leaders)
    named = tabs.parse_query(state, {}, with_leaders)
    out = every(state, *[named[p] for p in tabs.params_of(with_leaders)])
    # one output more than the page without it (not a count pinned: a new tab adds its own)
    before = tabs.parse_query(state, {}, tabs.TABS)
    page = tabs.handler(tabs.HEADER, *tabs.TABS)(
        state, *[before[p] for p in tabs.params_of(tabs.TABS)]
    )
    assert len(out) == len(page) + 1
    assert '"tab-leaders"' in json.dumps(app.build_demo(state, with_leaders).config)
