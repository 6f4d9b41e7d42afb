"""The scientific-embedding study (issue 17): SemEval STS per year (per-subset Pearson and the
pair-weighted year figure), Reuters-12 document classification with F-beta, the restricted sets
behind --data-path, and the SciEmbed benchmark. Crafted copies keep the runner tests small; the
real sets are checked when ../shared is there. ~6 s."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import pearsonr

from chemteb_eval.cli import main
from chemteb_eval.data import load_task
from chemteb_eval.data.shared_sets import read_reuters12, read_semeval_sts
from chemteb_eval.data.types import ClassificationData, NerData, StsData
from chemteb_eval.errors import MissingDataError
from chemteb_eval.results.board import read_results
from chemteb_eval.results.schema import ResultFile
from chemteb_eval.runner import RunReport, run
from chemteb_eval.tasks import benchmark_tasks, get_benchmark, get_task
from chemteb_eval.tasks.scitext import SEMEVAL_PAIRS
from tests.helpers.hashing_encoder import HashingEncoder

RESTRICTED = ("ClinicalSTS2018", "ClinicalSTS2019", "CoNLL2003NER", "CHEMDNERNER")


def _quiet_run(**kwargs: Any) -> RunReport:
    return run(HashingEncoder(), use_cache=False, progress=False, log=lambda _: None, **kwargs)


# -- the year's figure ------------------------------------------------------------------------


def _entry(subset: str, pearson: float, n: object) -> dict[str, object]:
    return {"hf_subset": subset, "cosine_pearson": pearson, "main_score": pearson, "n_pairs": n}


def test_the_year_figure_is_the_pair_weighted_mean() -> None:
    # by hand: (0.5 * 100 + 0.8 * 300) / 400 = 0.725; MTEB's plain mean would be 0.65
    file = ResultFile("SemEvalSTS2099", {"test": [_entry("a", 0.5, 100), _entry("b", 0.8, 300)]})
    assert file.score("cosine_pearson", ["test"], "n_pairs") == pytest.approx(0.725)
    assert file.score("cosine_pearson", ["test"]) == pytest.approx(0.65)


@pytest.mark.parametrize("weight", [None, True, 0, -3, 2.5, "100", float("inf"), 10**400])
def test_a_weight_that_is_not_a_size_gives_no_figure(weight: object) -> None:
    entries = [_entry("a", 0.5, 100), _entry("b", 0.8, 300)]
    if weight is None:
        del entries[1]["n_pairs"]
    else:
        entries[1]["n_pairs"] = weight
    assert ResultFile("T", {"test": entries}).score("cosine_pearson", ["test"], "n_pairs") is None


def test_semeval_records_match_the_readme() -> None:
    for year, pairs in SEMEVAL_PAIRS.items():
        task = get_task(f"SemEvalSTS{year}")
        assert task.subsets == tuple(pairs) and task.subset_weight_key == "n_pairs"
        assert task.main_score == "cosine_pearson" and task.n_samples == sum(pairs.values())
    assert sum(sum(p.values()) for p in SEMEVAL_PAIRS.values()) == 11794  # docs/scitext.md's total


def _semeval_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, year: int) -> Path:
    folder = tmp_path / "semeval_sts"
    folder.mkdir(exist_ok=True)
    rng = np.random.default_rng(year)
    words = "acid base salt metal water gas ion bond ring chain atom cell".split()
    for subset in SEMEVAL_PAIRS[year]:
        n = int(rng.integers(8, 20))
        lines = ["sentence1\tsentence2\tscore"]
        for _ in range(n):
            a = " ".join(rng.choice(words, 4))
            b = " ".join(rng.choice(words, 4))
            lines.append(f"{a}\t{b}\t{rng.uniform(0, 5):.2f}")
        (folder / f"sts{year}.{subset}.test.tsv").write_text("\n".join(lines) + "\n")
    monkeypatch.setenv("CHEMTEB_SHARED_DATA", str(tmp_path))
    return folder


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("a cat\t\t3.0", "line 3 has an empty sentence"),
        ("a cat\ta dog\t5.5", "line 3: score 5.5 is outside the 0-5 scale"),
        ("a cat\ta dog\tnan", "line 3: score nan is outside"),
        ("a cat\ta dog\thigh", "line 3: score 'high' is not a number"),
        ("a cat\ta dog", "line 3 has 2 columns"),
    ],
)
def test_bad_sts_rows_name_file_and_line(
    line: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _semeval_copy(tmp_path, monkeypatch, 2013)
    path = folder / "sts2013.OnWN.test.tsv"
    path.write_text(f"sentence1\tsentence2\tscore\nx y\tx z\t1\n{line}\n")
    with pytest.raises(ValueError, match=message) as err:
        read_semeval_sts(2013)
    assert str(path) in str(err.value)


def test_a_missing_subset_file_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _semeval_copy(tmp_path, monkeypatch, 2013)
    (folder / "sts2013.FNWN.test.tsv").unlink()
    with pytest.raises(ValueError, match=r"sts2013\.FNWN\.test\.tsv is missing"):
        load_task(get_task("SemEvalSTS2013"))


def test_a_year_runs_per_subset_and_reports_the_weighted_figure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _semeval_copy(tmp_path, monkeypatch, 2016)
    report = _quiet_run(tasks=[get_task("SemEvalSTS2016")], output_dir=tmp_path / "out")
    assert report.statuses == {"SemEvalSTS2016": "done"}, report.errors
    result = json.loads((report.results_dir / "SemEvalSTS2016.json").read_text())
    entries = result["scores"]["test"]
    assert [e["hf_subset"] for e in entries] == list(SEMEVAL_PAIRS[2016])
    # each subset's Pearson is its own pairs' (recomputed from the encoder here)
    data = load_task(get_task("SemEvalSTS2016"))
    encoder = HashingEncoder()
    for entry in entries:
        split = data[entry["hf_subset"]]["test"]
        assert isinstance(split, StsData) and entry["n_pairs"] == len(split.scores)
        e1 = encoder.encode(split.sentences1, prompt="", batch_size=32)
        e2 = encoder.encode(split.sentences2, prompt="", batch_size=32)
        cos = (e1 * e2).sum(1) / np.linalg.norm(e1, axis=1) / np.linalg.norm(e2, axis=1)
        assert entry["cosine_pearson"] == pytest.approx(pearsonr(split.scores, cos)[0], abs=1e-6)
        assert entry["oov_policy"] == "zero"
    weights = np.array([e["n_pairs"] for e in entries])
    expected = float(np.average([e["cosine_pearson"] for e in entries], weights=weights))
    assert report.main_scores["SemEvalSTS2016"] == pytest.approx(expected, abs=1e-12)
    # chemteb rank shows the same figure
    (model,) = read_results([tmp_path / "out"], get_benchmark("SciEmbed"))
    assert model.scores["SemEvalSTS2016"] == pytest.approx(expected, abs=1e-12)


def test_the_real_semeval_sets(shared_dir: Path) -> None:
    for year, pairs in SEMEVAL_PAIRS.items():
        data = read_semeval_sts(year)
        assert {s: len(d.scores) for s, d in data.items()} == pairs
        assert all(0 <= min(d.scores) and max(d.scores) <= 5 for d in data.values())


# -- Reuters-12 -------------------------------------------------------------------------------

TOPICS = ("earn", "acq", "crude")


def _reuters_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "reuters12"
    folder.mkdir(exist_ok=True)
    words = {"earn": "profit dividend quarter", "acq": "merger stake buy", "crude": "oil barrel"}
    for split, n in (("train", 12), ("test", 6)):
        with (folder / f"{split}.jsonl").open("w") as handle:
            for i in range(n):
                topic = TOPICS[i % 3]
                doc = {
                    "id": f"r-{split}-{i}",
                    "text": f"{words[topic]} {split} {i}",
                    "label": topic,
                }
                handle.write(json.dumps(doc) + "\n")
    monkeypatch.setenv("CHEMTEB_SHARED_DATA", str(tmp_path))
    return folder


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "line 2 is not JSON"),
        ("[1, 2]", "line 2 is \\[1, 2\\], not a JSON object"),
        ('{"text": "  ", "label": "earn"}', "line 2: the document has no text"),
        ('{"label": "earn"}', "line 2: the document has no text"),
        ('{"text": "oil", "label": 3}', "line 2: label is 3, not a topic name"),
    ],
)
def test_bad_documents_name_file_and_line(
    line: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _reuters_copy(tmp_path, monkeypatch)
    path = folder / "test.jsonl"
    path.write_text('{"text": "oil barrel", "label": "crude"}\n' + line + "\n")
    with pytest.raises(ValueError, match=message) as err:
        read_reuters12("test")
    assert str(path) in str(err.value)


def test_a_test_topic_unseen_in_training_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _reuters_copy(tmp_path, monkeypatch)
    (folder / "test.jsonl").write_text('{"text": "gold bars", "label": "gold"}\n')
    with pytest.raises(ValueError, match=r"topics \['gold'\] never occur in train.jsonl"):
        read_reuters12("test")


def test_reuters_probe_trains_on_every_document_with_f_beta(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _reuters_copy(tmp_path, monkeypatch)
    task = get_task("Reuters12Classification")
    data = load_task(task)["default"]["test"]
    assert isinstance(data, ClassificationData) and dict(data.probe) == {"full_train": True}
    encoder = HashingEncoder()
    report = run(
        encoder,
        tasks=[task],
        output_dir=tmp_path / "out",
        use_cache=False,
        progress=False,
        beta=2.0,
        log=lambda _: None,
    )
    assert report.statuses == {"Reuters12Classification": "done"}, report.errors
    scores = json.loads((report.results_dir / "Reuters12Classification.json").read_text())
    entry = scores["scores"]["test"][0]
    # one probe on all 12 training documents (not 10 undersampled experiments)
    assert len(entry["scores_per_experiment"]) == 1
    assert entry["main_score"] == entry["f1"] and entry["beta"] == 2.0
    assert {"fbeta", "fbeta_micro", "fbeta_weighted", "accuracy"} <= set(entry)
    # every training document was embedded (12 train + 6 test texts, all distinct)
    assert report.encoding["unique"] == 18


def test_the_real_reuters12(shared_dir: Path) -> None:
    data = read_reuters12("test")
    assert (len(data.train_texts), len(data.test_texts)) == (5882, 2289)
    assert len(set(data.train_labels)) == 12
    assert data.test_labels.count("earn") == 1083  # ../shared/data/reuters12/README.md's table


# -- restricted sets --------------------------------------------------------------------------


def test_restricted_sets_are_registered_with_where_to_get_them() -> None:
    for name in RESTRICTED:
        task = get_task(name)
        assert task.builder == "local" and "Expected:" in task.obtain
        assert name not in get_benchmark("SciEmbed").tasks


def test_without_a_copy_one_line_says_where_and_what(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in RESTRICTED:
        with pytest.raises(MissingDataError, match=f"pass --data-path {name}=DIR"):
            load_task(get_task(name))
        code = main(["run", "-t", name, "--output-dir", str(tmp_path), "--quiet"])
        err = capsys.readouterr().err
        assert code == 1 and "Traceback" not in err and len(err.strip().splitlines()) == 1
        assert "Obtain:" in err and "Expected:" in err
    # checked before any model loads: no model folder was written
    assert not any(tmp_path.iterdir())


def _conll(tmp_path: Path, train: str, test: str) -> Path:
    folder = tmp_path / "conll"
    folder.mkdir(exist_ok=True)
    (folder / "train.tsv").write_text(train)
    (folder / "test.tsv").write_text(test)
    return folder


TRAIN = "EU\tB-ORG\nrejects\tO\nGerman\tB-MISC\ncall\tO\n\nPeter\tB-PER\nBlackburn\tI-PER\n\n"
TRAIN += "BRUSSELS\tB-LOC\n1996-08-22\tO\n\n"
TEST = "Japan\tB-LOC\nbeat\tO\nSyria\tB-LOC\n\nNadim\tB-PER\nLadki\tI-PER\n\n"


def test_conll_runs_on_a_users_copy(tmp_path: Path) -> None:
    folder = _conll(tmp_path, TRAIN, TEST)
    data = load_task(get_task("CoNLL2003NER"), data_path=folder)["default"]["test"]
    assert isinstance(data, NerData) and len(data.train_tokens) == 3
    report = _quiet_run(
        tasks=[get_task("CoNLL2003NER")],
        output_dir=tmp_path / "out",
        data_paths={"CoNLL2003NER": folder},
    )
    assert report.statuses == {"CoNLL2003NER": "done"}, report.errors
    entry = json.loads((report.results_dir / "CoNLL2003NER.json").read_text())["scores"]["test"]
    assert 0 <= entry[0]["overall_f1"] <= 1 and entry[0]["beta"] == 1.0


@pytest.mark.parametrize(
    ("test", "message"),
    [
        ("Japan\tI-LOC\n", "line 1: I-LOC does not continue a LOC entity"),
        ("Japan\tB-COUNTRY\n", "line 1: unknown tag 'B-COUNTRY'"),
        ("Japan B-LOC\n", "line 1 is not 'token<TAB>tag'"),
    ],
)
def test_a_broken_users_copy_names_file_and_line(test: str, message: str, tmp_path: Path) -> None:
    folder = _conll(tmp_path, TRAIN, test)
    with pytest.raises(ValueError, match=message) as err:
        load_task(get_task("CoNLL2003NER"), data_path=folder)
    assert str(folder / "test.tsv") in str(err.value)


def test_clinical_sts_from_a_users_copy_and_the_cli_forms(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "clinical"
    folder.mkdir()
    rows = ["sentence1\tsentence2\tscore"]
    rows += [f"patient took drug {i}\tpatient was given drug {i % 3}\t{i % 6}" for i in range(12)]
    (folder / "test.tsv").write_text("\n".join(rows) + "\n")
    data = load_task(get_task("ClinicalSTS2019"), data_path=folder)["default"]["test"]
    assert isinstance(data, StsData) and len(data.scores) == 12
    # a bare DIR belongs to the run's one restricted task; a stray or doubled path is named
    assert main(["run", "-t", "ClinicalSTS2019", "--data-path", "a", "--data-path", "b"]) == 2
    assert "ClinicalSTS2019 is given twice" in capsys.readouterr().err
    assert main(["run", "-t", "SciERCNER", "--data-path", f"ClinicalSTS2019={folder}"]) == 2
    assert "not a restricted task of this run" in capsys.readouterr().err
    with pytest.raises(MissingDataError, match=r"test\.tsv is missing"):
        load_task(get_task("ClinicalSTS2018"), data_path=tmp_path)


# -- the benchmark ----------------------------------------------------------------------------


def test_sciembed_follows_the_studys_design() -> None:
    bench = get_benchmark("SciEmbed")
    scores = {
        t.name: (t.type, bench.main_scores.get(t.name, t.main_score))
        for t in benchmark_tasks(bench)
    }
    for name, (kind, key) in scores.items():
        expected = {
            "STS": "cosine_pearson",
            "WordSimilarity": "cosine_pearson",
            "NER": "overall_f1",
            "Classification": "f1",
        }[kind]
        assert key == expected, name
    assert {kind for kind, _ in scores.values()} == {
        "STS",
        "WordSimilarity",
        "NER",
        "Classification",
    }
    assert all(get_task(name).builder == "shared" for name in scores)  # runs offline


# -- the NER probe's feature building, vectorised ---------------------------------------------


def _pool_loop(hidden: np.ndarray, word_ids: list[int | None], n: int, pooling: str) -> np.ndarray:
    """The sub-token loop the vectorised pooling replaced, kept as its reference."""
    vectors = np.zeros((n, hidden.shape[-1]), dtype=np.float32)
    counts = np.zeros(n)
    for position, word in enumerate(word_ids):
        if word is None or (pooling == "first" and counts[word]):
            continue
        vectors[word] += hidden[position]
        counts[word] += 1
    vectors /= np.maximum(counts, 1)[:, None]
    return vectors


@pytest.mark.parametrize("seed", range(25))
@pytest.mark.parametrize("pooling", ["first", "mean"])
def test_vectorised_word_pooling_equals_the_loop(seed: int, pooling: str) -> None:
    from chemteb_eval.models.word_embeddings import _pool_words

    rng = np.random.default_rng(seed)
    n_words = int(rng.integers(1, 12))
    pieces = rng.integers(1, 4, n_words)  # sub-tokens per word
    ids: list[int | None] = [None]  # [CLS]
    ids += [w for w in range(n_words) for _ in range(pieces[w])]
    ids = [*ids[: int(rng.integers(2, len(ids) + 1))], None]  # truncation, then [SEP]
    ids += [None] * int(rng.integers(0, 4))  # padding
    hidden = rng.normal(size=(len(ids), 7)).astype(np.float32) * 10.0 ** rng.integers(-3, 4)
    got = _pool_words(hidden, ids, n_words, pooling)  # type: ignore[arg-type]
    assert got.dtype == np.float32
    assert np.array_equal(got, _pool_loop(hidden, ids, n_words, pooling))


# -- converting CoNLL-2003's own files ---------------------------------------------------------

CONLL_RAW = """-DOCSTART- -X- -X- O

EU NNP I-NP I-ORG
rejects VBZ I-VP O
German JJ I-NP I-MISC
call NN I-NP O

Peter NNP I-NP I-PER
Blackburn NNP I-NP I-PER
Smith NNP I-NP B-PER

-DOCSTART- -X- -X- O

BRUSSELS NNP I-NP I-LOC
"""


def test_conll2003_files_convert_to_iob2_and_load(tmp_path: Path) -> None:
    from chemteb_eval.data.convert import iob1_to_iob2
    from chemteb_eval.data.convert import main as convert

    # by hand: IOB1 starts an entity with I- unless it follows one of its type
    assert iob1_to_iob2(["I-PER", "I-PER", "B-PER", "O", "I-LOC", "I-ORG"]) == [
        "B-PER",
        "I-PER",
        "B-PER",
        "O",
        "B-LOC",
        "B-ORG",
    ]
    raw = tmp_path / "eng.train"
    raw.write_text(CONLL_RAW)
    folder = tmp_path / "conll"
    assert convert(["conll2003", str(raw), str(folder / "train.tsv")]) == 0
    assert convert(["conll2003", str(raw), str(folder / "test.tsv")]) == 0
    data = load_task(get_task("CoNLL2003NER"), data_path=folder)["default"]["test"]
    assert isinstance(data, NerData) and len(data.test_tokens) == 3
    assert data.test_tags[1] == ["B-PER", "I-PER", "B-PER"]
    raw.write_text("EU NNP I-NP X-ORG\n")
    assert convert(["conll2003", str(raw), str(folder / "bad.tsv")]) == 1
    assert convert(["conll2003"]) == 2


def test_rank_and_the_space_show_sciembed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("gradio", reason="the Space needs the space extra")
    _semeval_copy(tmp_path, monkeypatch, 2016)
    _reuters_copy(tmp_path, monkeypatch)
    tasks = [get_task("SemEvalSTS2016"), get_task("Reuters12Classification")]
    report = _quiet_run(benchmark="SciEmbed", tasks=tasks, output_dir=tmp_path / "out")
    assert set(report.statuses.values()) == {"done"}, report.errors
    assert main(["rank", str(tmp_path / "out"), "-b", "SciEmbed"]) == 0
    shown = capsys.readouterr().out
    assert "test/hashing-trigrams" in shown
    # issue 46: a type's mean needs all its tasks; SemEval 2016 is one of SciEmbed's STS tasks,
    # so rank shows 1/N in the type's cell (the mean over it alone was shown before), and the
    # year's figure is in the task's own view below
    figure = f"{report.main_scores['SemEvalSTS2016']:.4f}"
    assert " 1/" in shown and figure[1:] not in shown

    import sys

    from tests.conftest import REPO_ROOT

    sys.path.insert(0, str(REPO_ROOT / "space"))
    import app

    state = app.build_state([tmp_path / "out"])
    assert "SciEmbed" in state.boards and "PipChem" not in state.boards
    out = app.view_tables(state, "SciEmbed", "all", [], [], "")
    assert "test/hashing-trigrams" in Path(out[3]).read_text()
    _, info, _, csv_path = app.view_task(state, "SciEmbed", "all", [], [], "", "SemEvalSTS2016")
    assert "cosine_pearson" in info and "hashing-trigrams" in Path(csv_path).read_text()
    assert figure[:5] in Path(csv_path).read_text()  # the year's figure


# -- coverage: what a word model could not embed is counted, never dropped ---------------------


class _Blind(HashingEncoder):
    """No vector (a NaN row) for any text containing one of ``unknown``, as a word model."""

    def __init__(self, *unknown: str) -> None:
        super().__init__()
        self.unknown = unknown

    def encode(self, texts: list[str], *, prompt: str, batch_size: int) -> np.ndarray:
        out = np.asarray(super().encode(texts, prompt=prompt, batch_size=batch_size))
        out[[any(u in t for u in self.unknown) for t in texts]] = np.nan
        return out


def test_documents_without_a_vector_are_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _reuters_copy(tmp_path, monkeypatch)
    report = run(
        _Blind("oil"),
        tasks=[get_task("Reuters12Classification")],
        output_dir=tmp_path / "out",
        use_cache=False,
        progress=False,
        log=lambda _: None,
    )
    assert report.statuses == {"Reuters12Classification": "done"}, report.errors
    path = report.results_dir / "Reuters12Classification.json"
    entry = json.loads(path.read_text())["scores"]["test"][0]
    # 4 of 12 training and 2 of 6 test documents are "crude" (oil barrel ...)
    assert entry["n_missing"] == 6 and entry["coverage"] == pytest.approx(1 - 6 / 18)


def test_words_without_a_vector_are_counted(tmp_path: Path) -> None:
    folder = _conll(tmp_path, TRAIN, TEST)
    report = run(
        _Blind("Japan", "Syria"),
        tasks=[get_task("CoNLL2003NER")],
        output_dir=tmp_path / "out",
        data_paths={"CoNLL2003NER": folder},
        use_cache=False,
        progress=False,
        log=lambda _: None,
    )
    assert report.statuses == {"CoNLL2003NER": "done"}, report.errors
    entry = json.loads((report.results_dir / "CoNLL2003NER.json").read_text())["scores"]["test"]
    # 8 training and 5 test words; Japan and Syria have no vector
    assert entry[0]["n_missing"] == 2 and entry[0]["coverage"] == pytest.approx(11 / 13)


def test_a_word_model_run_records_coverage_even_when_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("gensim", reason="word vectors need the static extra")
    from gensim.models import KeyedVectors

    from chemteb_eval.models.static import WordVectorEncoder

    _reuters_copy(tmp_path, monkeypatch)
    words = "profit dividend quarter merger stake buy oil barrel train test".split()
    vectors = KeyedVectors(vector_size=8)
    vectors.add_vectors(words, np.random.default_rng(0).normal(size=(len(words), 8)))
    report = run(
        WordVectorEncoder(vectors, name="tiny-w2v", source="test"),
        tasks=[get_task("Reuters12Classification")],
        output_dir=tmp_path / "out",
        use_cache=False,
        progress=False,
        log=lambda _: None,
    )
    assert report.statuses == {"Reuters12Classification": "done"}, report.errors
    path = report.results_dir / "Reuters12Classification.json"
    entry = json.loads(path.read_text())["scores"]["test"][0]
    assert entry["n_missing"] == 0 and entry["coverage"] == 1.0
