"""Word-pair similarity (issue 17, first part): the WordSimilarity task kind and the four UMNSRS
sets read from ../shared/data/umnsrs — the reader's checks on crafted files (no ../shared needed),
the real sets when ../shared is there, and a run through the runner. ~1 s."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chemteb_eval.data import load_task
from chemteb_eval.data.shared_sets import read_umnsrs, repeated_pairs
from chemteb_eval.data.types import WordPairData
from chemteb_eval.runner import run
from chemteb_eval.tasks import KINDS, get_task
from tests.helpers.hashing_encoder import HashingEncoder

UMNSRS = ("UMNSRSSimilarity", "UMNSRSRelatedness", "UMNSRSSimilarityMod", "UMNSRSRelatednessMod")


def _copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> Path:
    folder = tmp_path / "umnsrs"
    folder.mkdir(exist_ok=True)
    path = folder / "similarity.tsv"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setenv("CHEMTEB_SHARED_DATA", str(tmp_path))
    return path


def test_the_kind_and_the_tasks() -> None:
    kind = KINDS["WordSimilarity"]
    assert kind.data_class == "WordPairData" and not kind.chemteb
    for name in UMNSRS:
        task = get_task(name)
        assert task.type == "WordSimilarity" and task.main_score == "cosine_pearson"
        assert task.builder == "shared" and task.revision is None  # nothing invented


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("a\tb\tscore\n", r"line 1 is \['a', 'b', 'score'\]"),
        ("word1\tword2\tscore\nheart\t900\n", "line 2 has 2 columns"),
        ("word1\tword2\tscore\nheart\tlung\t800\n \tlung\t800\n", "line 3 has an empty term"),
        ("word1\tword2\tscore\nheart\tlung\tmuch\n", "line 2: score 'much' is not a number"),
        ("word1\tword2\tscore\nheart\tlung\t1600.5\n", "line 2: score 1600.5 is outside"),
        ("word1\tword2\tscore\nheart\tlung\tnan\n", "line 2: score nan is outside"),
        ("word1\tword2\tscore\n", "no term pairs"),
        ("", r"line 1 is None"),
    ],
)
def test_bad_files_name_file_and_line(
    body: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _copy(tmp_path, monkeypatch, body)
    with pytest.raises(ValueError, match=message) as err:
        read_umnsrs("similarity")
    assert str(path) in str(err.value)


def test_repeated_pairs_are_kept_and_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _copy(
        tmp_path,
        monkeypatch,
        "word1\tword2\tscore\nGlaucoma\tFibrillation\t279\nheart\tlung\t800\n"
        "fibrillation\tglaucoma\t276\n",
    )
    data = read_umnsrs("similarity")
    assert data.scores == [279.0, 800.0, 276.0] and repeated_pairs(data) == 1
    with pytest.raises(ValueError, match="test split only"):
        load_task(get_task("UMNSRSSimilarity"), splits=["train"])


def test_a_run_scores_pearson_with_coverage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [("heart", "cardiac", 1400), ("heart", "lung", 900), ("aspirin", "glaucoma", 200)]
    rows += [("renal failure", "kidney failure", 1500), ("cough", "sneeze", 700)]
    _copy(
        tmp_path,
        monkeypatch,
        "word1\tword2\tscore\n" + "".join(f"{a}\t{b}\t{s}\n" for a, b, s in rows),
    )
    report = run(
        HashingEncoder(),
        tasks=[get_task("UMNSRSSimilarity")],
        output_dir=tmp_path / "out",
        use_cache=False,
        progress=False,
        log=lambda _: None,
    )
    assert report.statuses == {"UMNSRSSimilarity": "done"}, report.errors
    result = json.loads((report.results_dir / "UMNSRSSimilarity.json").read_text())
    scores = result["scores"]["test"][0]
    assert scores["main_score"] == scores["cosine_pearson"]
    assert scores["coverage"] == 1.0 and -1 <= scores["cosine_spearman"] <= 1
    assert scores["repeated_pairs"] == 0 and scores["oov_policy"] == "zero"


def test_the_real_sets(shared_dir: Path) -> None:
    expected = {  # pairs and repeated pairs, as the release has them (../shared/data/umnsrs)
        "UMNSRSSimilarity": (566, 14),
        "UMNSRSRelatedness": (587, 12),
        "UMNSRSSimilarityMod": (449, 5),
        "UMNSRSRelatednessMod": (458, 3),
    }
    for name, (pairs, repeats) in expected.items():
        data = load_task(get_task(name))["default"]["test"]
        assert isinstance(data, WordPairData)
        assert len(data.scores) == pairs == get_task(name).n_samples
        assert repeated_pairs(data) == repeats
        assert 0 < min(data.scores) and max(data.scores) <= 1600
