"""A task's data quality (issue 48, ``data.quality``): counts against a brute force written
here, retrieval's duplicate documents and the judgements on them, RDKit's molecules written
two ways. About 2 s."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chemteb_eval.data import chemistry, quality
from chemteb_eval.data.quality import data_quality, split_quality
from chemteb_eval.data.types import ClassificationData, PairClassificationData, RetrievalData

_rows = st.lists(st.tuples(st.sampled_from("abcde"), st.sampled_from([0, 1, None])), max_size=30)


@given(_rows)
def test_split_counts_equal_a_brute_force(rows: list[tuple[str, Any]]) -> None:
    duplicates = sum(1 for i, (t, _) in enumerate(rows) if any(t == u for u, _ in rows[:i]))
    conflicting = sum(
        1 for t in {t for t, _ in rows} if len({y for u, y in rows if u == t and y is not None}) > 1
    )
    assert split_quality(rows) == {
        "rows": len(rows),
        "duplicate_texts": duplicates,
        "conflicting_labels": conflicting,
    }


def test_a_classification_task_by_hand() -> None:
    data = ClassificationData(
        train_texts=["a", "b", "a", "c"],
        train_labels=[0, 1, 1, 0],
        test_texts=["c", "d", "d"],
        test_labels=[0, 1, 1],
    )
    found = data_quality({"default": {"test": data}})
    assert found["splits"]["train"] == {"rows": 4, "duplicate_texts": 1, "conflicting_labels": 1}
    assert found["splits"]["test"] == {"rows": 3, "duplicate_texts": 1, "conflicting_labels": 0}
    assert found["overlap"] == {"train&test": 1}  # "c"


def test_pairs_are_rows_of_both_sides() -> None:
    data = PairClassificationData(["a", "a", "b"], ["x", "x", "a"], [1, 0, 1])
    found = data_quality({"default": {"test": data}})
    assert found["splits"]["test"] == {"rows": 3, "duplicate_texts": 1, "conflicting_labels": 1}


def test_retrieval_duplicates_and_judgements_on_them() -> None:
    data = RetrievalData(
        ["d1", "d2", "d3", "d4"],
        ["benzene", "water", "benzene", "ethanol"],
        ["q1", "q2", "q3"],
        ["what is benzene", "what is water", "what is benzene"],
        {"q1": {"d1": 1, "d3": 1}, "q2": {"d2": 1}, "q3": {"d4": 1}},
    )
    found = data_quality({"default": {"test": data}})
    docs, queries = found["splits"]["test documents"], found["splits"]["test queries"]
    assert docs["duplicate_texts"] == 1 and docs["judgements_on_duplicates"] == 2
    assert queries["duplicate_texts"] == 1


def test_one_molecule_written_two_ways() -> None:
    pytest.importorskip("rdkit")
    data = PairClassificationData(
        ["CCO", "OCC", "c1ccccc1"], ["C1=CC=CC=C1", "CCO", "CC"], [1, 1, 0]
    )
    assert data_quality({"default": {"test": data}})["same_molecule"] == 2  # ethanol, benzene


def test_without_rdkit_same_molecule_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(quality, "rdkit_available", lambda: False)
    data = PairClassificationData(["CCO"], ["OCC"], [1])
    assert data_quality({"default": {"test": data}})["same_molecule"] == quality.UNAVAILABLE


def test_chemteb_inspect_json_round_trips(
    small_suite: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from chemteb_eval.cli import main

    assert main(["inspect", "PipChemWikiTopicClassification", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["task"] == "PipChemWikiTopicClassification"
    assert set(found["data_quality"]["splits"]) == {"train", "test"}
    assert found["data_quality"]["overlap"]["train&test"] >= 0
    assert main(["inspect"]) == 2 and "name one task" in capsys.readouterr().err


def test_token_figures_equal_the_tokenizer_called_directly(small_suite: Any) -> None:
    pytest.importorskip("sentence_transformers")
    import numpy as np
    from transformers import AutoTokenizer

    from chemteb_eval.data import load_task
    from chemteb_eval.data.chemistry import classify
    from chemteb_eval.models import DEFAULT_MODEL, load_encoder
    from chemteb_eval.runner.inspect import distinct_texts, tokenization
    from chemteb_eval.tasks import get_task

    encoder = load_encoder(DEFAULT_MODEL, device="cpu", log=lambda _: None)
    texts = distinct_texts(load_task(get_task("PipChemSMILESNameBM")))
    found = tokenization(encoder, texts)
    assert isinstance(found, dict)
    tokenizer = AutoTokenizer.from_pretrained(encoder.meta.source)
    smiles = [t for t in texts if classify(t) == "smiles"]
    lengths = [len(tokenizer.encode(t, add_special_tokens=False)) for t in smiles]
    unk = sum(
        i == tokenizer.unk_token_id
        for t in smiles
        for i in tokenizer.encode(t, add_special_tokens=False)
    )
    assert found["smiles"]["strings"] == len(smiles) > 0
    assert found["smiles"]["mean_tokens"] == pytest.approx(np.mean(lengths))
    assert found["smiles"]["p95_tokens"] == pytest.approx(np.percentile(lengths, 95))
    assert found["smiles"]["unk_share"] == pytest.approx(unk / sum(lengths))
    limit = encoder.meta.max_tokens
    assert limit is not None
    cut = sum(n + 2 > limit for n in lengths) / len(lengths)  # [CLS] and [SEP]
    assert found["smiles"]["cut_share"] == pytest.approx(cut)


def test_whole_lengths_equal_the_tokenizers_own_count_fast_and_slow(small_suite: Any) -> None:
    """The truncation count's lengths (``whole_lengths``: the Rust tokenizer asked directly)
    equal the wrapper's ``tokenizer(texts)`` on every text of a task and on edge cases, with a
    prompt, after the encoder's own calls set truncation; and a slow tokenizer's path too."""
    pytest.importorskip("sentence_transformers")
    from transformers import AutoTokenizer

    from chemteb_eval.data import load_task
    from chemteb_eval.models import DEFAULT_MODEL, load_encoder
    from chemteb_eval.models._tokens import whole_lengths
    from chemteb_eval.runner.inspect import distinct_texts
    from chemteb_eval.tasks import get_task

    encoder: Any = load_encoder(DEFAULT_MODEL, device="cpu", log=lambda _: None)
    texts = distinct_texts(load_task(get_task("PipChemWikiRetrieval")))[:300]
    texts += ["", " ", "[CLS] [SEP]", "x\x00y", "é" * 3, "🧪 CC(=O)O", "word " * 700]
    encoder.encode(texts[:4], prompt="", batch_size=2)  # leaves its truncation set
    fast = AutoTokenizer.from_pretrained(encoder.meta.source)
    slow = AutoTokenizer.from_pretrained(encoder.meta.source, use_fast=False)
    for prompt in ("", "query: "):
        whole = [prompt + t for t in texts]
        expected = [len(x) for x in fast(whole, truncation=False, verbose=False)["input_ids"]]
        assert encoder.untruncated_lengths(texts, prompt=prompt) == expected
        assert whole_lengths(slow, whole) == expected
        assert max(expected) > 512  # the long text is counted whole


def test_attack50_lengths_and_whole_lengths_from_two_threads_never_mix(
    small_suite: Any,
) -> None:
    """``whole_lengths`` switches the shared Rust tokenizer's truncation off; ``token_lengths``
    had the wrapper set it and tokenise without the lock, so from two threads the engine was
    told 802 tokens for a 256-token model and the truncation count 256 for 802 (an outside
    attack). Both now take the tokenizer's lock."""
    import threading
    import time

    pytest.importorskip("sentence_transformers")
    from chemteb_eval.models import DEFAULT_MODEL, load_encoder

    encoder: Any = load_encoder(DEFAULT_MODEL, device="cpu", log=lambda _: None)
    texts = ["word " * 800] * 4
    limit = encoder.meta.max_tokens
    whole = encoder.untruncated_lengths(texts, prompt="")
    assert limit is not None and min(whole) > limit
    wrong: list[str] = []
    stop = time.monotonic() + 3

    def lengths() -> None:
        while time.monotonic() < stop:
            if max(encoder.token_lengths(texts, prompt="")) > limit:
                wrong.append("token_lengths above the limit")

    def counts() -> None:
        while time.monotonic() < stop:
            if encoder.untruncated_lengths(texts, prompt="") != whole:
                wrong.append("untruncated_lengths cut")

    threads = [threading.Thread(target=lengths), threading.Thread(target=counts)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not wrong, wrong[:3]


def test_model2vec_figures_come_from_its_own_tokenizer(tmp_path: Any) -> None:
    """model2vec's tokens are its tokenizer's, not a transformer's; the unknown ids (which
    model2vec drops before averaging) counted against ``tokenizers`` called directly."""
    pytest.importorskip("model2vec")
    import numpy as np
    from model2vec import StaticModel
    from tokenizers import Tokenizer, models, pre_tokenizers

    from chemteb_eval.data.chemistry import classify
    from chemteb_eval.models import load_encoder
    from chemteb_eval.runner.inspect import tokenization

    vocab = {"[UNK]": 0, "benzene": 1, "water": 2, "CCO": 3, "is": 4}
    words = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    words.pre_tokenizer = pre_tokenizers.Whitespace()
    StaticModel(np.eye(5, dtype=np.float32), words).save_pretrained(str(tmp_path / "m"))
    encoder = load_encoder(f"model2vec:{tmp_path / 'm'}")
    texts = ["CCO", "c1ccccc1", "benzene is c1ccccc1 water", "water is wet", "H2O"]
    found = tokenization(encoder, texts)
    assert isinstance(found, dict)
    direct = Tokenizer.from_file(str(tmp_path / "m" / "tokenizer.json"))
    for kind in ("smiles", "text"):
        members = [t for t in texts if classify(t) == kind]
        ids = [direct.encode(t, add_special_tokens=False).ids for t in members]
        total = sum(map(len, ids))
        assert found[kind]["strings"] == len(members) > 0
        assert found[kind]["mean_tokens"] == pytest.approx(total / len(members))
        assert found[kind]["unk_share"] == pytest.approx(sum(x.count(0) for x in ids) / total)
    assert found["smiles"]["unk_share"] == pytest.approx(0.5)  # c1ccccc1 unknown, CCO known


def test_each_result_file_records_its_chemistry_block(small_suite: Any, tmp_path: Any) -> None:
    import json

    from chemteb_eval.runner import run
    from chemteb_eval.tasks import get_task

    from .helpers.hashing_encoder import HashingEncoder

    class Tokenizing(HashingEncoder):
        """A model whose tokenizer cuts a text into characters; 'X' is its unknown token."""

        def token_ids(self, texts: list[str]) -> tuple[list[list[int]], int | None, int]:
            return [[0 if c == "X" else ord(c) for c in t] for t in texts], 0, 2

    task = [get_task("PipChemSMILESNameBM")]
    quiet: dict[str, Any] = {"progress": False, "log": lambda _: None}
    plain = run(HashingEncoder(), tasks=task, output_dir=tmp_path / "a", **quiet)
    stored = json.loads((plain.results_dir / "PipChemSMILESNameBM.json").read_text())
    assert stored["chemistry"] == "unknown"  # a tokenizer not ours to call
    own = run(Tokenizing(name="test/chars"), tasks=task, output_dir=tmp_path / "b", **quiet)
    stored = json.loads((own.results_dir / "PipChemSMILESNameBM.json").read_text())
    smiles = stored["chemistry"]["smiles"]
    assert smiles["strings"] > 0 and smiles["mean_tokens"] > 5  # characters of a SMILES


def test_a_task_files_faults_are_one_warning_line() -> None:
    from chemteb_eval.runner.inspect import quality_warning

    clean = ClassificationData(["a", "b"], [0, 1], ["c", "d"], [0, 1])
    assert quality_warning("T", {"default": {"test": clean}}) is None
    faulty = ClassificationData(["a", "b", "a"], [0, 1, 1], ["a", "d"], [0, 1])
    line = quality_warning("T", {"default": {"test": faulty}})
    assert line is not None and len(line.splitlines()) == 1
    assert "1 text(s) in both train and test" in line and "two labels in train" in line


def test_rank_diagnostics_pools_each_models_chemistry_block(
    small_suite: Any, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    import json
    import sys

    from chemteb_eval.cli import main
    from chemteb_eval.runner import run
    from chemteb_eval.tasks import get_task
    from tests.conftest import REPO_ROOT

    from .helpers.hashing_encoder import HashingEncoder

    class Tokenizing(HashingEncoder):
        def token_ids(self, texts: list[str]) -> tuple[list[list[int]], int | None, int]:
            return [[0 if c == "X" else ord(c) for c in t] for t in texts], 0, 2

    tasks = [get_task("PipChemSMILESNameBM"), get_task("PipChemNameSMILESPC")]
    quiet: dict[str, Any] = {"progress": False, "log": lambda _: None}
    out = tmp_path / "results"
    chars = run(Tokenizing(name="test/chars"), tasks=tasks, output_dir=out, **quiet)
    run(HashingEncoder(), tasks=tasks, output_dir=out, **quiet)
    # a third model complete on PipChem: the Space plots its mean against its tokens
    whole = run(Tokenizing(name="test/whole"), benchmark="PipChem", output_dir=out, **quiet)
    # by hand: the SMILES of both files pooled, weighted by their strings
    blocks = [
        json.loads((chars.results_dir / f"{t.name}.json").read_text())["chemistry"]["smiles"]
        for t in tasks
    ]
    strings = sum(b["strings"] for b in blocks)
    tokens = sum(b["strings"] * b["mean_tokens"] for b in blocks) / strings
    # a hostile block in another file is left out, never computed with
    hostile = out / "test__x" / "r"
    hostile.mkdir(parents=True)
    damaged = json.loads((chars.results_dir / "PipChemSMILESNameBM.json").read_text())
    damaged["chemistry"] = {"smiles": {"strings": float("nan"), "mean_tokens": "many"}}
    (hostile / "PipChemSMILESNameBM.json").write_text(json.dumps(damaged))
    assert main(["rank", str(out), "--diagnostics", "--json"]) == 0
    rows = {r["model"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["test/chars"]["smiles"]["strings"] == strings
    assert rows["test/chars"]["smiles"]["tokens"] == pytest.approx(tokens)
    assert rows["test/hashing-trigrams"]["chemistry"] == "unknown"
    assert main(["rank", str(out), "--diagnostics"]) == 0
    assert "tok/SMILES" in capsys.readouterr().out
    # the Space's Tokenization tab shows the CLI's figures, cell for cell
    sys.path.insert(0, str(REPO_ROOT / "space"))
    import app
    import tabs
    from views import plot_text

    state = app.build_state([out])
    plot, table, _ = tabs.handler(tabs.tokenization.TAB)(state, "PipChem", "all", [], [], "")
    value = table["value"]  # what the page displays: the cells' display values
    shown = {
        r[0]: dict(zip(value["headers"], d, strict=True))
        for r, d in zip(value["data"], value["metadata"]["display_value"], strict=True)
    }
    cells = next(v for k, v in shown.items() if "test/chars" in k)
    assert cells["Tokens/SMILES"] == f"{tokens:,.1f}"
    assert cells["Unknown (SMILES)"] == f"{rows['test/chars']['smiles']['unk_share']:.1%}"
    assert cells["Tokenizer"] == "its own"
    hashing = next(v for k, v in shown.items() if "hashing" in k)
    assert hashing["Tokenizer"] == "not ours to call (an API)"
    # the plot: only the complete model (a mean), at its own tokens per SMILES
    assert [plot_text(t) for t in plot.data[0].text] == ["test/whole"]
    assert plot.data[0].x == (rows["test/whole"]["smiles"]["tokens"],)
    assert plot.data[0].y == (rows["test/whole"]["mean"],) and whole.statuses


def test_a_word_model_shows_its_oov_share_in_the_cli_and_the_space(
    small_suite: Any, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """A word model's unknown column is its words' out-of-vocabulary share, counted by hand
    here, in ``rank --diagnostics`` and in the Space's Tokenization tab."""
    pytest.importorskip("gensim", reason="word vectors need the static extra")
    import json
    import re
    import sys

    import numpy as np
    from gensim.models import KeyedVectors

    from chemteb_eval.cli import main
    from chemteb_eval.data import load_task
    from chemteb_eval.data.chemistry import classify
    from chemteb_eval.models.static import WordVectorEncoder
    from chemteb_eval.runner import run
    from chemteb_eval.runner.inspect import distinct_texts
    from chemteb_eval.tasks import get_task
    from tests.conftest import REPO_ROOT

    task = get_task("PipChemSMILESNameBM")
    texts = distinct_texts(load_task(task))
    smiles = [t for t in texts if classify(t) == "smiles"]
    word = re.compile(r"\w+(?:[-']\w+)*")
    # every word is known but the SMILES' words after their first (each text keeps a vector:
    # a text without one fails bitext mining, by design)
    dropped = {w for t in smiles for w in word.findall(t)[1:]}
    dropped -= {word.findall(t)[0] for t in texts if word.findall(t)}
    known = sorted({w for t in texts for w in word.findall(t)} - dropped)
    vectors = KeyedVectors(vector_size=4)
    vectors.add_vectors(known, np.random.default_rng(0).normal(size=(len(known), 4)))
    found = [w for t in smiles for w in word.findall(t)]
    share = sum(w not in known and w.lower() not in known for w in found) / len(found)
    assert 0 < share < 1
    out = tmp_path / "results"
    words = WordVectorEncoder(vectors, name="tiny-w2v", source="test")
    run(words, tasks=[task], output_dir=out, progress=False, log=lambda _: None)
    assert main(["rank", str(out), "--diagnostics", "--json", "-b", "PipChem"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["smiles"]["oov_share"] == pytest.approx(share)
    text_share = row["text"]["oov_share"]
    assert 0 <= text_share <= 1
    assert main(["rank", str(out), "--diagnostics", "-b", "PipChem"]) == 0
    shown = capsys.readouterr().out
    # the SMILES' OOV share and the texts' (attack 48 #10: the CLI showed "-" for the texts)
    assert f"{share:.1%} OOV" in shown and f"{text_share:.1%} OOV" in shown
    # inspect -m gives a word model's OOV share too, as the run records it (not "unknown")
    from chemteb_eval.runner.inspect import inspect_task

    inspected = inspect_task(task, encoder=words)["tokenization"]
    assert inspected["smiles"]["oov_share"] == pytest.approx(share)

    sys.path.insert(0, str(REPO_ROOT / "space"))
    import app
    import tabs

    state = app.build_state([out])
    plot, table, _ = tabs.handler(tabs.tokenization.TAB)(state, "PipChem", "all", [], [], "")
    value = table["value"]
    cells = dict(zip(value["headers"], value["metadata"]["display_value"][0], strict=True))
    assert cells["Unknown (SMILES)"] == f"{share:.1%}"
    assert cells["Tokenizer"] == "words: unknown = out of vocabulary"
    assert cells["Tokens/SMILES"] == "—"  # a word model records no tokens per SMILES
    assert cells["Unknown (text)"] == f"{text_share:.1%}"  # as the CLI prints it
    assert plot.layout.title.text.startswith("No complete model")


# Outside attack on issue 48: each finding, fixed


def test_attack48_a_train_split_beside_two_scored_splits_counts_once() -> None:
    train = (["a", "b", "c", "d"], [0, 1, 0, 1])
    dev = ClassificationData(*train, ["e", "f"], [0, 1])
    test = ClassificationData(*train, ["g", "h"], [0, 1])
    found = data_quality({"default": {"dev": dev, "test": test}})
    assert found["splits"]["train"] == {"rows": 4, "duplicate_texts": 0, "conflicting_labels": 0}
    # two subsets keep their own train splits, never one merged
    found = data_quality({"en": {"test": dev}, "de": {"test": test}})
    assert found["splits"]["en/train"]["rows"] == found["splits"]["de/train"]["rows"] == 4
    assert found["overlap"]["en/train&de/train"] == 4 and "en/train&de/train" not in found["leaks"]


def test_attack48_a_corpus_two_retrieval_splits_share_is_no_warning() -> None:
    from chemteb_eval.runner.inspect import quality_warning

    def split(queries: list[str]) -> RetrievalData:
        ids = [f"q{i}" for i in range(len(queries))]
        return RetrievalData(
            ["d1", "d2", "d3"], ["benzene", "water", "ethanol"], ids, queries, {"q0": {"d1": 1}}
        )

    clean = {"default": {"dev": split(["a?", "b?"]), "test": split(["c?", "d?"])}}
    found = data_quality(clean)
    assert found["overlap"]["dev documents&test documents"] == 3  # reported, by design
    assert all(n == 0 for n in found["leaks"].values())
    assert quality_warning("T", clean) is None
    leaking = {"default": {"dev": split(["a?", "b?"]), "test": split(["a?", "d?"])}}
    line = quality_warning("T", leaking)
    assert line is not None and "1 text(s) in both dev queries and test queries" in line


def test_attack48_without_rdkit_the_smiles_figures_say_unavailable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from chemteb_eval.data import chemistry
    from chemteb_eval.results.diagnostics import NO_RDKIT, _pooled, board_row
    from chemteb_eval.runner.inspect import tokenization

    from .helpers.hashing_encoder import HashingEncoder

    class Tokenizing(HashingEncoder):
        def token_ids(self, texts: list[str]) -> tuple[list[list[int]], int | None, int]:
            return [[ord(c) for c in t] for t in texts], None, 0

    monkeypatch.setattr(chemistry, "_chem", lambda: None)
    chemistry.word_entity.cache_clear()
    try:
        found = tokenization(Tokenizing(), ["CCO", "hello world", "H2O"])
    finally:
        chemistry.word_entity.cache_clear()
    assert isinstance(found, dict)
    assert found["smiles"] == quality.UNAVAILABLE  # never a count of 0
    assert found["text"]["entities_in_text"] == {"smiles": quality.UNAVAILABLE}  # no words
    assert found["unavailable"]["strings"] == 1 and found["formula"]["strings"] == 1
    pooled = _pooled([found], "smiles")
    assert pooled["said"] == NO_RDKIT  # where the run ran, said where the figures are read
    row = board_row(
        {"model": "m", "mean": None, "smiles": pooled, "text": _pooled([found], "text")}
    )
    assert row["SMILES"] is None and row["Tokenizer"].endswith(f"SMILES {NO_RDKIT}")


def test_attack48_model2vec_counts_are_never_clipped_at_its_max_length(tmp_path: Any) -> None:
    pytest.importorskip("model2vec")
    import numpy as np
    from model2vec import StaticModel
    from tokenizers import Tokenizer, models, pre_tokenizers

    from chemteb_eval.models import load_encoder
    from chemteb_eval.runner.inspect import tokenization

    words = Tokenizer(models.WordLevel({"[UNK]": 0, "benzene": 1}, unk_token="[UNK]"))
    words.pre_tokenizer = pre_tokenizers.Whitespace()
    StaticModel(np.eye(2, dtype=np.float32), words).save_pretrained(str(tmp_path / "m"))
    encoder = load_encoder(f"model2vec:{tmp_path / 'm'}")
    assert encoder.meta.max_tokens == 512
    texts = ["benzene water", "water benzene x", "benzene " * 2000, "water " * 2001]
    encoder.encode(texts, prompt="", batch_size=4)  # model2vec turns its truncation on here
    found = tokenization(encoder, texts)
    assert isinstance(found, dict)
    assert found["text"]["mean_tokens"] == pytest.approx((2 + 3 + 2000 + 2001) / 4)
    assert found["text"]["cut_share"] == 0.5


def test_attack48_the_runs_warning_does_no_rdkit_work_and_inspect_canonicalises_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("rdkit")
    from chemteb_eval.runner.inspect import quality_warning

    data = {"default": {"test": PairClassificationData(["CCO", "c1ccccc1"], ["OCC", "CC"], [1, 0])}}
    calls: list[str] = []
    real = vars(quality)["canonical_smiles"]  # the name data_quality calls

    def counted(text: str) -> str | None:
        calls.append(text)
        return real(text)  # type: ignore[no-any-return]

    monkeypatch.setattr(quality, "canonical_smiles", counted)
    assert quality_warning("T", data) is None and calls == []
    assert data_quality(data)["same_molecule"] == 1
    assert sorted(calls) == sorted(["CCO", "OCC", "c1ccccc1", "CC"])  # each text once


def test_attack48_a_text_holding_the_old_pair_separator_is_its_own() -> None:
    from chemteb_eval.runner.inspect import distinct_texts

    pairs = PairClassificationData(["a\u241fb", "a"], ["c", "b\u241fc"], [1, 0])
    found = data_quality({"default": {"test": pairs}})
    assert found["splits"]["test"] == {"rows": 2, "duplicate_texts": 0, "conflicting_labels": 0}
    one = ClassificationData(["CCO\u241fOCC", "x"], [0, 1], ["y", "z"], [0, 1])
    assert distinct_texts({"default": {"test": one}}) == ["CCO\u241fOCC", "x", "y", "z"]
    if chemistry.rdkit_available():
        assert data_quality({"default": {"test": one}})["same_molecule"] == 0


def test_attack48_a_task_several_benchmarks_declare_is_inspected_with_b(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from chemteb_eval.cli import main

    assert main(["inspect", "SDSGlovesClassification"]) == 2
    err = capsys.readouterr().err
    assert "name one with -b" in err and "ChemTEB" in err and "collection=" not in err
    # with -b the task is found; offline its data cannot be had: one line saying so
    assert main(["inspect", "SDSGlovesClassification", "-b", "ChemTEB"]) == 1
    assert "BASF-AI/SDSGlovesClassification" in capsys.readouterr().err


def test_attack48_a_damaged_unknown_share_leaves_its_file_out() -> None:
    from chemteb_eval.results.diagnostics import _pooled

    sound = {"smiles": {"strings": 100, "mean_tokens": 10, "unk_share": 0.5}}
    for bad in (float("nan"), -1, 2.0, "0.1", None):
        damaged = {"smiles": {"strings": 100, "mean_tokens": 10, "unk_share": bad}}
        pooled = _pooled([sound, damaged], "smiles")
        assert (pooled["strings"], pooled["unk_share"]) == (100, 0.5), bad


def test_attack48_ctrl_c_in_inspect_says_nothing_was_written(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import chemteb_eval.runner.inspect as inspect
    from chemteb_eval.cli import main

    def interrupted(*_: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(inspect, "inspect_task", interrupted)
    assert main(["inspect", "PipChemWikiRetrieval"]) == 130
    err = capsys.readouterr().err
    assert "writes nothing" in err and "resumes" not in err


def test_attack48_a_csv_field_over_the_limit_names_its_own_line(tmp_path: Any) -> None:
    from chemteb_eval.data.custom import CustomDataError, _csv_rows

    path = tmp_path / "train.csv"
    path.write_text("text,label\r\nwater,a\r\nbenzene,b\r\n" + "C" * 200_000 + ",a\r\n")
    with pytest.raises(CustomDataError, match=r"train\.csv:4: not a CSV row"):
        list(_csv_rows(path))


# The second outside attack on issue 48


def test_attack48b_a_figure_no_float_holds_or_a_count_not_whole_is_left_out() -> None:
    from chemteb_eval.results.diagnostics import _pooled

    sound = {"smiles": {"strings": 100, "mean_tokens": 10, "unk_share": 0.5}}
    for strings in (10**400, 2.5, -3, True):
        damaged = {"smiles": {"strings": strings, "mean_tokens": 10, "unk_share": 0.0}}
        pooled = _pooled([sound, damaged], "smiles")
        assert (pooled["strings"], pooled["unk_share"]) == (100, 0.5), strings
    huge = {"smiles": {"strings": 5, "mean_tokens": 10**400, "unk_share": 0.0}}
    assert _pooled([sound, huge], "smiles")["tokens"] == 10


def test_attack48b_only_the_runs_own_words_are_shown_in_place_of_figures(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from chemteb_eval.results.diagnostics import NO_RDKIT, _pooled

    hostile = {"smiles": "\x1b[31mRED\x1b]0;TITLE\x07 <a href=x>link</a>"}
    assert "said" not in _pooled([hostile], "smiles")  # damage, never shown
    assert _pooled([{"smiles": quality.UNAVAILABLE}], "smiles")["said"] == NO_RDKIT


def test_attack48b_a_lone_surrogate_in_a_task_file_is_refused_at_its_line(tmp_path: Any) -> None:
    from chemteb_eval.data.custom import CustomDataError, _jsonl_rows

    path = tmp_path / "train.jsonl"
    path.write_text('{"text": "CCO", "label": "a"}\n{"text": "C\\ud800", "label": "a"}\n')
    with pytest.raises(CustomDataError, match=r"train\.jsonl:2: a \\u escape names half"):
        list(_jsonl_rows(path))
    path.write_text('{"text": "caf\\u00e9 \\ud83d\\ude00", "label": "a"}\n')  # a whole pair
    assert [row["text"] for _, row in _jsonl_rows(path)] == ["café \U0001f600"]


def test_attack48b_b_names_the_benchmarks_that_declare_the_task(
    capsys: pytest.CaptureFixture[str], tmp_path: Any
) -> None:
    from chemteb_eval.cli import main

    assert main(["inspect", "-b", "PipChem", "ChemNQRetrieval"]) == 2
    err = capsys.readouterr().err
    assert "not a task of PipChem" in err and "pass -b 'ChemTEB'" in err and "no -b" not in err
    (tmp_path / "t.yaml").write_text("name: T\n")
    assert main(["inspect", "-b", "ChemTEB", "--task-file", str(tmp_path / "t.yaml")]) == 2
    assert "drop -b" in capsys.readouterr().err
