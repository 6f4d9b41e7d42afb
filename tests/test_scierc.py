"""SciERC NER (issue 17, first part): the reader's IOB2 checks on crafted files (no ../shared
needed), the released splits when ../shared is there, and a probe run on a tiny copy. ~2 s."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from chemteb_eval.data import load_task
from chemteb_eval.data.shared_sets import read_scierc
from chemteb_eval.runner import run
from chemteb_eval.tasks import get_task
from tests.helpers.hashing_encoder import HashingEncoder

GOOD = "Recognition\tB-Task\nof\tI-Task\nnouns\tI-Task\nby\tO\nCRF\tB-Method\n\n"
GOOD += "We\tO\nuse\tO\nBLEU\tB-Metric\non\tO\nWMT\tB-Material\ndata\tI-Material\n\n"


def _copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, train: str, test: str) -> Path:
    folder = tmp_path / "scierc"
    folder.mkdir(exist_ok=True)
    (folder / "train.tsv").write_text(train, encoding="utf-8")
    (folder / "test.tsv").write_text(test, encoding="utf-8")
    monkeypatch.setenv("CHEMTEB_SHARED_DATA", str(tmp_path))
    return folder


@pytest.mark.parametrize(
    ("test", "message"),
    [
        ("a\tB-Task\nb\tI-Method\n", r"line 2: I-Method does not continue a Method entity"),
        ("a\tO\nb\tI-Task\n", r"line 2: I-Task does not continue"),
        ("a\tB-Task\n\nb\tI-Task\n", r"line 3: I-Task does not continue"),  # across sentences
        ("a\tB-Chemical\n", r"line 1: unknown tag 'B-Chemical'"),
        ("a\tX-Task\n", r"line 1: unknown tag 'X-Task'"),
        ("a\tB-Task\textra\n", r"line 1 is not 'token<TAB>tag'"),
    ],
)
def test_broken_files_name_file_and_line(
    test: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _copy(tmp_path, monkeypatch, GOOD, test)
    with pytest.raises(ValueError, match=message) as err:
        read_scierc("test")
    assert str(folder / "test.tsv") in str(err.value)
    with pytest.raises(ValueError, match="no SciERC split 'dev'"):
        read_scierc("dev")


def test_a_probe_run_reports_per_type_f1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _copy(tmp_path, monkeypatch, GOOD * 3, GOOD)
    report = run(
        HashingEncoder(),
        tasks=[get_task("SciERCNER")],
        output_dir=tmp_path / "out",
        use_cache=False,
        progress=False,
        log=lambda _: None,
    )
    assert report.statuses == {"SciERCNER": "done"}, report.errors
    scores = json.loads((report.results_dir / "SciERCNER.json").read_text())["scores"]["test"][0]
    assert scores["main_score"] == scores["overall_f1"]
    assert {"Task", "Method", "Metric", "Material"} <= set(scores)  # per type, as score_ner gives
    assert 0 <= scores["Task"]["f1"] <= 1


def test_the_released_splits(shared_dir: Path) -> None:
    data = load_task(get_task("SciERCNER"))["default"]["test"]
    assert (len(data.train_tokens), len(data.test_tokens)) == (1861, 551)
    entities = Counter(tag[2:] for sentence in data.test_tags for tag in sentence if tag[0] == "B")
    assert entities == {  # ../shared/data/scierc/README.md's per-type test counts
        "Task": 262,
        "Method": 426,
        "Metric": 71,
        "Material": 155,
        "OtherScientificTerm": 512,
        "Generic": 239,
    }
