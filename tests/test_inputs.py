"""One resolver of result inputs (``results/inputs.py``), one competition rank, typed ranking
rows: the rules the CLI, the Space and the cards share."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chemteb_eval.cli import main
from chemteb_eval.results.board import read_results
from chemteb_eval.results.inputs import MODEL_TABLE_FILE, find_beside, read_model_tables
from chemteb_eval.results.model_folder import model_name
from chemteb_eval.results.mteb_scores import MTEB_SCORES_FILE, resolve_mteb_scores
from chemteb_eval.results.ranking import RankedModel, rank_models
from chemteb_eval.scoring.uncertainty import competition_ranks
from chemteb_eval.tasks import get_benchmark, get_task, main_score

MTEB_CSV = (
    "model_id,task,task_type,split,main_score\n"
    "org/a,T1,Classification,test,0.5\n"
    "org/b,T1,Classification,test,0.6\n"
)


def test_competition_ranks_by_hand() -> None:
    assert competition_ranks({"a": 0.9, "b": 0.8, "c": 0.8, "d": 0.7}) == {
        "a": 1,
        "b": 2,
        "c": 2,
        "d": 4,
    }
    # an incomplete model's mean among the complete models': 1 + how many are higher
    assert competition_ranks({"x": 0.85}, [0.9, 0.8, 0.8]) == {"x": 2}
    assert competition_ranks({"x": 0.95}, []) == {"x": 1}
    ranks = competition_ranks(np.array([[0.1, 0.5], [0.3, 0.5], [0.2, 0.9]]))
    assert ranks.tolist() == [[3, 2], [1, 2], [2, 1]]  # axis 0 ranked, each column alone
    with pytest.raises(ValueError, match="against"):
        competition_ranks(np.zeros(3), [1.0])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=12))
def test_competition_ranks_agree_between_mapping_and_array(values: list[int]) -> None:
    by_name = competition_ranks({str(i): float(v) for i, v in enumerate(values)})
    array = competition_ranks(np.asarray(values, dtype=np.float64))
    assert [by_name[str(i)] for i in range(len(values))] == array.tolist()
    for i, v in enumerate(values):  # the definition: 1 + how many are strictly higher
        assert by_name[str(i)] == 1 + sum(o > v for o in values)


def _results(root: Path) -> Path:
    for i, score in enumerate((0.9, 0.5)):
        folder = root / f"org__m{i}" / "no_revision_available"
        folder.mkdir(parents=True)
        for task in get_benchmark("PipChem").tasks:
            t = get_task(task)
            key = main_score(get_benchmark("PipChem"), t)
            payload = {
                "task_name": t.name,
                "dataset_revision": "sha256:0123456789abcdef",
                "mteb_version": "chemteb-eval",
                "scores": {"test": [{"hf_subset": "default", key: score, "main_score": score}]},
            }
            (folder / f"{t.name}.json").write_text(json.dumps(payload))
    return root


def test_ranked_rows_are_typed_and_read_like_the_old_dicts(tmp_path: Path) -> None:
    bench = get_benchmark("PipChem")
    rows = rank_models(read_results([_results(tmp_path / "results")], bench), bench)
    assert all(isinstance(r, RankedModel) for r in rows)
    top = rows[0]
    assert top.model == "org/m0" and top["rank"] == top.rank == 1 and top.complete
    assert list(top.to_dict())[:3] == ["model", "means", "complete"]  # --json's key order
    assert top.get("absent", "x") == "x"
    with pytest.raises(KeyError):
        top["absent"]


def test_a_file_in_or_beside_the_results_folder_is_found_once(tmp_path: Path) -> None:
    root = tmp_path / "results"
    root.mkdir()
    assert find_beside([root], MTEB_SCORES_FILE) == []
    (tmp_path / MTEB_SCORES_FILE).write_text(MTEB_CSV)
    assert find_beside([root, root], MTEB_SCORES_FILE) == [tmp_path / MTEB_SCORES_FILE]
    (root / MTEB_SCORES_FILE).write_text(MTEB_CSV)
    assert find_beside([root], MTEB_SCORES_FILE)[0] == root / MTEB_SCORES_FILE  # inside first


def test_mteb_scores_one_rule_and_errors_naming_the_argument(tmp_path: Path) -> None:
    root = tmp_path / "results"
    root.mkdir()
    assert resolve_mteb_scores([root]).scores is None
    with pytest.raises(ValueError, match=r"--mteb-scores: .*nope.csv is not a file"):
        resolve_mteb_scores([root], tmp_path / "nope.csv")
    with pytest.raises(ValueError, match=r"--mteb-results: needs the MTEB\(eng, v1\) scores"):
        resolve_mteb_scores([root], folders=[tmp_path])
    (tmp_path / MTEB_SCORES_FILE).write_text("not,a\nscores,file\n")
    found = resolve_mteb_scores([root])  # found beside, unreadable: left out with the reason
    assert found.scores is None and found.path == tmp_path / MTEB_SCORES_FILE and found.problem
    with pytest.raises(ValueError, match=r"^mteb_scores \(--mteb-scores\): "):
        resolve_mteb_scores(
            [root], tmp_path / MTEB_SCORES_FILE, scores_arg="mteb_scores (--mteb-scores)"
        )
    (tmp_path / MTEB_SCORES_FILE).write_text(MTEB_CSV)
    found = resolve_mteb_scores([root])
    assert found.scores is not None and set(found.scores.scores) == {"org/a", "org/b"}
    with pytest.raises(ValueError, match=r"--mteb-results: .*absent is not a folder"):
        resolve_mteb_scores([root], folders=[tmp_path / "absent"])


def test_model_tables_named_or_found(tmp_path: Path) -> None:
    root = tmp_path / "results"
    root.mkdir()
    table = "model_id,results_dir,family\norg/m0,org__m0,Fam\n"
    (tmp_path / MODEL_TABLE_FILE).write_text(table)
    rows = read_model_tables([root])
    assert rows["org/m0"]["family"] == "Fam" and rows["org__m0"]["model_id"] == "org/m0"
    (tmp_path / MODEL_TABLE_FILE).write_text("no_id_column\nx\n")
    assert read_model_tables([root]) == {}  # found and unreadable: scan_results tells it
    with pytest.raises(ValueError, match=r"model_table: .* has no 'model_id' column"):
        read_model_tables([root], tmp_path / MODEL_TABLE_FILE)
    with pytest.raises(ValueError, match=r"model_table: .*absent.csv is not a file"):
        read_model_tables([root], tmp_path / "absent.csv")


def test_model_name_rule() -> None:
    folder = Path("org__model")
    assert model_name(folder, {"name": "Org/Real"}, {"org__model": "t/x"}) == "Org/Real"
    assert model_name(folder, {"name": ""}, {"org__model": "t/x"}) == "t/x"
    assert model_name(folder, {"name": 3}, {}) == "org/model"
    assert model_name(folder, None, {}) == "org/model"


def test_compare_domains_finds_the_scores_in_or_beside_the_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _results(tmp_path / "results")
    assert main(["compare-domains", str(root), "-b", "PipChem", "--json"]) == 1
    err = capsys.readouterr().err
    assert "--mteb-scores: not given" in err and MTEB_SCORES_FILE in err
    (root / MTEB_SCORES_FILE).write_text(MTEB_CSV)
    assert main(["compare-domains", str(root), "-b", "PipChem", "--json"]) == 0
    assert isinstance(json.loads(capsys.readouterr().out), list)


def test_each_evidence_file_is_read_once_per_board(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import collections

    import chemteb_eval.results.evidence as evidence
    from chemteb_eval.results.leaderboard import build_leaderboard
    from chemteb_eval.results.scan import scan_results

    from .test_adversarial_round2 import PIPCHEM, _write_model

    root = tmp_path / "results"
    for name, level, seed in (("org__best", 0.9, 1), ("org__mid", 0.6, 2), ("org__last", 0.2, 3)):
        _write_model(root, name, level, seed)
    reads: collections.Counter[str] = collections.Counter()
    read = evidence.read_items

    def counting(path: Path, **kwargs: int | None) -> object:
        reads[str(path)] += 1
        return read(path, **kwargs)

    monkeypatch.setattr(evidence, "read_items", counting)
    board = build_leaderboard(scan_results([root]), PIPCHEM)
    assert board.overall[0]["Rank 95%"]  # the intervals were drawn, from the items
    assert len(reads) == 3 and set(reads.values()) == {1}


# -- what the outside attack on issue 28 found, fixed ----------------------------------------


def test_a_named_model_table_that_is_not_a_file_is_one_error_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _results(tmp_path / "results")
    assert main(["rank", str(root), "--model-table", str(tmp_path / "absent.csv")]) == 2
    captured = capsys.readouterr()
    assert "model_table: " in captured.err and "is not a file" in captured.err
    assert captured.out == ""  # no ranking printed before the error


def test_error_lines_show_no_control_characters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rank", str(tmp_path / "\x1b[31mred")]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "?[31mred" in err


def test_hostile_item_arrays_are_value_errors_never_another_exception() -> None:
    from chemteb_eval.scoring.uncertainty import check_items

    pair = {"labels": np.array([0, 1, 1]), "cosine": np.array([True, False, True])}
    for name in ("euclidean", "manhattan", "dot"):
        pair[name] = np.array([3, 1, 2], dtype=np.uint8)
    record = check_items("PairClassification", pair, "max_ap")
    assert np.isfinite(record.statistic("max_ap")(np.arange(3)))  # bool/uint read as numbers
    sts = {"gold": np.array([True, False, True]), "similarity": np.array([0.1, 0.2, 0.3])}
    assert np.isfinite(
        check_items("STS", sts, "cosine_spearman").statistic("x_spearman")(np.arange(3))
    )
    bad: list[tuple[str, object, object]] = [
        ("Clustering", {"labels": np.array([b"a", b"b"]), "clusters": np.array([0, 1])}, "v"),
        ("BitextMining", {"y_true": np.array([None, 1], dtype=object), "y_pred": [0, 1]}, "f1"),
        ("PairClassification", pair, None),
        ("STS", None, "cosine_spearman"),
    ]
    for task_type, items, key in bad:
        with pytest.raises(ValueError):
            check_items(task_type, items, key)  # type: ignore[arg-type]


def test_rank_corpus_refuses_bad_arguments_and_non_finite_rows_in_any_chunk() -> None:
    from chemteb_eval.scoring.retrieval import rank_corpus

    q = np.ones((2, 3), dtype=np.float32)
    c = np.eye(3, dtype=np.float32)
    ids = ["a", "b", "c"]
    for kwargs in ({"chunk_size": -1}, {"corpus_chunk_size": 0}, {"corpus_chunk_size": 1.5}):
        with pytest.raises(ValueError, match="must be a positive integer"):
            rank_corpus(q, c, ids, 2, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="top_k"):
        rank_corpus(q, c, ids, 0)
    nan = c.copy()
    nan[1] = np.nan
    for chunk in (1, 2, 3):
        with pytest.raises(ValueError, match="not a finite number"):
            rank_corpus(q, nan, ids, 2, corpus_chunk_size=chunk)


def test_device_batch_size_and_spec_spacing_are_checked_up_front() -> None:
    from chemteb_eval.models.base import check_batch_size, check_device
    from chemteb_eval.models.spec import parse_model_spec

    assert check_device(None) is None and check_device("cpu") == "cpu"
    with pytest.raises(ValueError, match="device: 'quantum:7'"):
        check_device("quantum:7")
    import torch

    if torch.cuda.device_count() < 4:
        with pytest.raises(ValueError, match="device: cuda:3: this machine has"):
            check_device("cuda:3")
    with pytest.raises(ValueError, match=r"batch_size: .* at most 1,048,576"):
        check_batch_size(10**20)
    spec = parse_model_spec(" transformers: org/model ")
    assert (spec.backend, spec.name) == ("transformers", "org/model")


def test_an_mteb_scores_name_that_is_not_a_file_is_said(tmp_path: Path) -> None:
    root = tmp_path / "results"
    root.mkdir()
    (tmp_path / MTEB_SCORES_FILE).mkdir()
    found = resolve_mteb_scores([root])
    assert found.scores is None and "not a regular file" in found.problem
    (tmp_path / MTEB_SCORES_FILE).rmdir()
    (tmp_path / MTEB_SCORES_FILE).write_text("model_id,task,task_type,split,main_score\n")
    assert "holds no scores" in resolve_mteb_scores([root]).problem
    with pytest.raises(ValueError, match="holds no scores"):
        resolve_mteb_scores([root], tmp_path / MTEB_SCORES_FILE)


def test_an_items_path_that_is_no_file_is_a_notice_and_coverage_names_its_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from chemteb_eval.results.ranking import task_interval

    from .test_adversarial_round2 import PIPCHEM, RETRIEVAL, _items_path, _write_model

    root = tmp_path / "results"
    _write_model(root, "org__best", 0.9, 1)
    items = _items_path(root, "org__best")
    items.unlink()
    items.mkdir()  # a folder where the items file goes
    (model,) = read_results([root], PIPCHEM)
    task_interval(model, PIPCHEM, RETRIEVAL)
    assert any("evidence left out" in s and "not a regular file" in s for s in model.skipped)
    assert main(["compare-domains", str(root), "--min-mteb-coverage", "1.5"]) == 2
    assert "--min-mteb-coverage: must be in (0, 1]" in capsys.readouterr().err
