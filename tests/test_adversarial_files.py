"""The adversarial suite, file side: damaged embedding caches, malformed result folders, model
cards and completions files, each generated here, and the numbered items of issue 12 that live
outside the math (1, 3, 4, 5, 6, 7). Every entry point must answer with a result, a notice, or
one line that names the file (and line) and the next step: never a traceback, a hang, or a
silently wrong number.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from chemteb_eval.chembench.run import read_completions
from chemteb_eval.chembench.score import score_chembench
from chemteb_eval.cli import main as chemteb_main
from chemteb_eval.engine import EmbeddingCache, EmbeddingEngine
from chemteb_eval.engine.cache import model_fingerprint
from chemteb_eval.errors import ChemtebError
from chemteb_eval.hub.model_card import CardMergeError, card_with_results
from chemteb_eval.models.base import ModelMeta
from chemteb_eval.runner import run
from chemteb_eval.tasks import benchmark_tasks, get_benchmark

from .conftest import REPO_ROOT
from .helpers.cache_files import to_old_layout
from .helpers.chembench_cases import MCQ, QUESTION
from .helpers.hashing_encoder import HashingEncoder

sys.path.insert(0, str(REPO_ROOT / "space"))
import app  # the Space

PIPCHEM = get_benchmark("PipChem")
TEXTS = [f"text number {i} about benzene" for i in range(40)]


# -- item 1: stale embeddings for a changed local model ---------------------------------------


class FolderEncoder:
    """A "model" whose weights are a file in a folder: its vectors change when the file does,
    like a local model trained further and saved to the same place."""

    def __init__(self, folder: Path) -> None:
        self.weights = np.frombuffer((folder / "weights.bin").read_bytes(), dtype=np.float32)
        self.meta = ModelMeta(
            name=folder.name,
            revision=None,
            n_parameters=int(self.weights.size),
            embedding_dim=8,
            max_tokens=None,
            framework="test",
            source=str(folder),
        )

    def prompt(self, task_type: str, role: str | None) -> str:
        return ""

    def encode(self, texts: list[str], *, prompt: str, batch_size: int) -> np.ndarray:
        rows = [np.frombuffer(t.encode()[:8].ljust(8), dtype=np.uint8) for t in texts]
        base = np.stack(rows).astype(np.float32)
        return base * self.weights[:8] + self.weights[8:16]


def _save_weights(folder: Path, seed: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    weights = np.random.default_rng(seed).normal(size=16).astype(np.float32)
    (folder / "weights.bin").write_bytes(weights.tobytes())
    (folder / "config.json").write_text('{"dim": 8}')


def _embed(encoder: Any, cache: EmbeddingCache | None) -> np.ndarray:
    engine = EmbeddingEngine(encoder, cache, batch_size=8, progress=False)
    engine.prefetch(("", t) for t in TEXTS)
    out = engine.embed(TEXTS, "")
    if cache is not None:
        cache.close()
    return out


def test_item1_a_retrained_local_model_never_reuses_old_vectors(tmp_path: Path) -> None:
    model, root = tmp_path / "my-model", tmp_path / "cache"
    _save_weights(model, seed=1)
    first = FolderEncoder(model)
    old = _embed(first, EmbeddingCache(root, first.meta.name, None, first.meta.source))
    _save_weights(model, seed=2)  # trained more, saved to the same folder
    second = FolderEncoder(model)
    new = _embed(second, EmbeddingCache(root, second.meta.name, None, second.meta.source))
    no_cache = _embed(second, None)
    assert np.array_equal(new, no_cache) and not np.allclose(new, old)
    # the same weights again (a copy elsewhere, or saved back) reuse their vectors
    _save_weights(model, seed=1)
    cache = EmbeddingCache(root, first.meta.name, None, first.meta.source)
    assert cache.missing([k for k in cache.keys()]) == [] and len(cache) == len(TEXTS)
    cache.close()


def test_item1_fingerprints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = tmp_path / "m"
    _save_weights(model, seed=3)
    before = model_fingerprint(str(model))
    assert before is not None and before.startswith("files:")
    assert model_fingerprint(str(model)) == before  # stable
    (model / "config.json").write_text('{"dim": 9}')  # a config change alone counts too
    assert model_fingerprint(str(model)) != before
    # A Hub id without a revision: the commit its local Hub cache holds.
    hub_cache = tmp_path / "hub"
    snapshot = hub_cache / "models--org--model" / "snapshots" / ("ab" * 20)
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    (hub_cache / "models--org--model" / "refs").mkdir()
    (hub_cache / "models--org--model" / "refs" / "main").write_text("ab" * 20)
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(hub_cache))
    assert model_fingerprint("org/model") == "commit:" + "ab" * 20
    assert model_fingerprint("openai:text-embedding-3-small") is None


# -- item 7: the embedding cache under damage -------------------------------------------------


def _filled_cache(root: Path) -> tuple[HashingEncoder, Path]:
    encoder = HashingEncoder(dim=16)
    cache = EmbeddingCache(root, encoder.meta.name, encoder.meta.revision, encoder.meta.source)
    _embed(encoder, cache)
    return encoder, cache.path


def test_item7_a_file_that_is_not_a_database_is_one_line(tmp_path: Path) -> None:
    encoder, path = _filled_cache(tmp_path / "c")
    path = to_old_layout(path)  # a cache of the layout before, to convert
    path.write_bytes(b"this is not SQLite" * 100)
    with pytest.raises(ChemtebError, match=r"is damaged or not a cache .*delete it .*--no-cache"):
        EmbeddingCache(path.parent, encoder.meta.name, encoder.meta.revision, "tests")
    with pytest.raises(ChemtebError, match="--no-cache"):
        run(
            encoder,
            tasks=benchmark_tasks(PIPCHEM)[:1],
            output_dir=tmp_path / "out",
            cache_dir=path.parent,
            progress=False,
            log=lambda m: None,
        )


def test_item7_a_truncated_database_is_one_line(tmp_path: Path) -> None:
    encoder, path = _filled_cache(tmp_path / "c")
    path = to_old_layout(path)  # a cache of the layout before, to convert
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ChemtebError, match="damaged"):
        cache = EmbeddingCache(path.parent, encoder.meta.name, encoder.meta.revision, "tests")
        _embed(encoder, cache)


@pytest.mark.parametrize("damage", ["short", "nan", "inf", "wrong_dim", "not_bytes"])
def test_item7_a_damaged_row_is_encoded_again_with_a_warning(tmp_path: Path, damage: str) -> None:
    encoder, path = _filled_cache(tmp_path / "c")
    expected = _embed(encoder, None)
    key = next(iter(EmbeddingCache(path.parent, encoder.meta.name, "1" * 40, "tests").keys()))
    good = np.full(16, 0.5, dtype=np.float32)
    blob: Any = {
        "short": good.tobytes()[:30],
        "nan": np.where(np.arange(16) == 3, np.nan, good).astype(np.float32).tobytes(),
        "inf": np.where(np.arange(16) == 3, np.inf, good).astype(np.float32).tobytes(),
        "wrong_dim": good[:15].tobytes(),
        "not_bytes": "text",
    }[damage]
    dim = 15 if damage == "wrong_dim" else 16
    # the rows of caches written before issue 39 (see test_cache_layout), converted at open
    with sqlite3.connect(to_old_layout(path)) as db:
        db.execute("UPDATE emb SET vec = ?, dim = ? WHERE key = ?", (blob, dim, key))
    cache = EmbeddingCache(path.parent, encoder.meta.name, encoder.meta.revision, "tests")
    with pytest.warns(UserWarning, match="1 stored vector"):
        got = _embed(encoder, cache)
    assert np.array_equal(got, expected)
    # repaired on disk: the next run reads it without a warning
    cache = EmbeddingCache(path.parent, encoder.meta.name, encoder.meta.revision, "tests")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.array_equal(_embed(encoder, cache), expected)


def test_item7_cache_and_output_folders_that_cannot_be_used(tmp_path: Path) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    encoder = HashingEncoder()
    with pytest.raises(ChemtebError, match=r"cache folder .* cannot be written.*CHEMTEB_CACHE"):
        EmbeddingCache(a_file / "below", encoder.meta.name, "1" * 40, "tests")
    with pytest.raises(
        ChemtebError, match=r"--output-dir: .* cannot be written \(.*\); pass a folder"
    ):
        run(encoder, tasks=benchmark_tasks(PIPCHEM)[:1], output_dir=a_file, progress=False)


@pytest.mark.slow
def test_item7_cli_prints_one_line(tmp_path: Path) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    env = {**os.environ, "CHEMTEB_CACHE": str(a_file / "below")}
    done = subprocess.run(
        [sys.executable, "-m", "chemteb_eval.cli", "run", "-t", "PipChemSMILESNameBM"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    # one line, before the model is even loaded (no progress bar of its weights)
    assert done.stderr.strip().splitlines() == [
        f"chemteb: embedding cache folder {a_file / 'below' / 'embeddings'} cannot be written "
        "(Not a directory); "
        "run with --no-cache, or set CHEMTEB_CACHE to a folder you can write to."
    ]


_READ_ONLY_CHILD = textwrap.dedent(
    """
    import sys, warnings
    sys.path.insert(0, {repo!r})
    import numpy as np
    from pathlib import Path
    from chemteb_eval.engine import EmbeddingCache, EmbeddingEngine
    from tests.helpers.hashing_encoder import HashingEncoder
    encoder = HashingEncoder(dim=16)
    texts = {texts!r}
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        cache = EmbeddingCache(Path({root!r}), encoder.meta.name, encoder.meta.revision, "tests")
        engine = EmbeddingEngine(encoder, cache, batch_size=8, progress=False)
        engine.prefetch(("", t) for t in texts + ["a text not in the cache"])
        out = engine.embed(texts, "")
        extra = engine.embed(["a text not in the cache"], "")
    print(engine.stats.cache_hits, engine.stats.encoded, cache.read_only, out.shape, extra.shape)
    print(any("read-only" in str(w.message) for w in seen))
    """
)


def test_item7_a_read_only_cache_is_still_used(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    _filled_cache(root)
    code = _READ_ONLY_CHILD.format(repo=str(REPO_ROOT), texts=TEXTS, root=str(root))
    if os.geteuid() == 0:
        # root writes through any permission bits: mount the folder read-only in a private
        # mount namespace instead (what a read-only volume or a shared cache looks like).
        if shutil.which("unshare") is None:
            pytest.skip("running as root without unshare: cannot make a folder read-only")
        script = 'mount --bind -o ro "$1" "$1" && exec "$2" -c "$3"'
        command = ["unshare", "-m", "sh", "-c", script, "sh", str(root), sys.executable, code]
    else:
        for path in [*root.iterdir(), root]:
            path.chmod(0o555 if path.is_dir() else 0o444)
        command = [sys.executable, "-c", code]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    finally:
        for path in [root, *root.iterdir()]:
            path.chmod(0o755 if path.is_dir() else 0o644)
    if "mount" in done.stderr and "permission denied" in done.stderr.lower():
        pytest.skip(f"cannot mount read-only here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    counts, warned = done.stdout.strip().splitlines()
    # every stored vector read, the one new text encoded and kept in memory
    assert counts == f"{len(TEXTS)} 1 True (40, 16) (1, 16)"
    assert warned == "True"


# -- items 3 and 6: result folders that lie, overflow, loop or hang ---------------------------


def _write_model(root: Path, folder: str, name: str, skill: float, **overrides: Any) -> Path:
    model = root / folder / ("0" * 40)
    model.mkdir(parents=True)
    (model / "model_meta.json").write_text(json.dumps({"name": name, "revision": "0" * 40}))
    for i, task in enumerate(benchmark_tasks(PIPCHEM)):
        score = overrides.get(task.name, skill - i * 0.01)
        payload = {
            "task_name": task.name,
            "dataset_revision": None,
            "evaluation_time": 1.5,
            "scores": {
                "test": [{"main_score": score, task.main_score: score, "hf_subset": "default"}]
            },
        }
        (model / f"{task.name}.json").write_text(json.dumps(payload))
    return model


@pytest.fixture
def results(tmp_path: Path) -> Path:
    root = tmp_path / "results"
    _write_model(root, "good__a", "good/a", 0.8)
    _write_model(root, "good__b", "good/b", 0.7)
    return root


def _rank(root: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    code = chemteb_main(["rank", str(root), "-b", "PipChem", *extra])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_item3_rank_counts_only_real_finite_scores(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = [t.name for t in benchmark_tasks(PIPCHEM)]
    bad_values = {"true": True, "list": [0.9, 0.95], "huge": 1e300, "string": "0.9", "null": None}
    for label, value in bad_values.items():
        _write_model(results, f"bad__{label}", f"bad/{label}", 0.99, **{tasks[0]: value})
    numeric_name = results / "good__b" / ("0" * 40) / f"{tasks[1]}.json"
    payload = json.loads(numeric_name.read_text())
    payload["task_name"] = 12345
    numeric_name.write_text(json.dumps(payload))
    code, out, err = _rank(results, capsys, "--json")
    assert code == 0 and "Traceback" not in err
    rows = {r["model"]: r for r in json.loads(out)}
    for label in bad_values:  # the bad score is skipped: never counted, never ranked first
        assert rows[f"bad/{label}"]["complete"] is False and rows[f"bad/{label}"]["rank"] is None
        assert f"bad__{label}" in err
    assert rows["good/a"]["rank"] == 1
    assert rows["good/b"]["complete"] is False and "task_name is 12345, not a string" in err
    assert "accuracy is True, not a finite number" in err  # the task's main score key
    assert "outside [-1, 1]" in err


def test_item3_two_folders_with_one_name_are_told_apart(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write_model(results, "copy__of_a", "good/a", 0.5)
    code, out, err = _rank(results, capsys, "--json")
    names = [r["model"] for r in json.loads(out)]
    assert code == 0 and len(names) == 3
    assert sorted(n for n in names if n.startswith("good/a")) == [
        f"good/a [{results / 'copy__of_a'}]",
        f"good/a [{results / 'good__a'}]",
    ]
    assert "names the same model (good/a)" in err


def _hostile_files(root: Path) -> None:
    folder = _write_model(root, "hostile__m", "hostile/m", 0.6)
    tasks = [t.name for t in benchmark_tasks(PIPCHEM)]
    big = "1" + "0" * 400
    entry = f'{{"main_score": {big}, "accuracy": {big}}}'
    (folder / f"{tasks[0]}.json").write_text(
        f'{{"task_name": "{tasks[0]}", "evaluation_time": {big}, "scores": {{"test": [{entry}]}}}}'
    )
    (folder / f"{tasks[1]}.json").write_text("[" * 100_000 + "]" * 100_000)
    (folder / f"{tasks[2]}.json").unlink()
    (folder / f"{tasks[2]}.json").symlink_to(folder / "nowhere.json")  # dangling
    (folder / f"{tasks[3]}.json").unlink()
    (folder / f"{tasks[3]}.json").symlink_to(folder / f"{tasks[3]}.json")  # a loop
    (folder / f"{tasks[4]}.json").unlink()
    os.mkfifo(folder / f"{tasks[4]}.json")  # reading it would block forever
    (folder / f"{tasks[5]}.json").write_bytes(b"\xff\xfe\x00binary\x00")
    (folder / "model_meta.json").write_text(
        json.dumps({"name": "hostile/m", "n_parameters": int(big), "embedding_dim": int(big)})
    )


@pytest.mark.slow
def test_item6_rank_survives_hostile_files(results: Path) -> None:
    _hostile_files(results)
    started = time.perf_counter()
    done = subprocess.run(  # a subprocess: a FIFO that hangs must fail the test, not freeze it
        [sys.executable, "-m", "chemteb_eval.cli", "rank", str(results), "-b", "PipChem"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and time.perf_counter() - started < 60
    for reason in (
        "not a finite number",
        "nested too deeply",
        "No such file",
        "not a regular file",
    ):
        assert reason in done.stderr, reason
    assert "not UTF-8" in done.stderr and "Too many levels of symbolic links" in done.stderr
    assert "good/a" in done.stdout


def test_item6_the_space_survives_hostile_files(results: Path) -> None:
    _hostile_files(results)
    state = app.build_state([results], default_benchmark="PipChem")
    board = state.boards["PipChem"]
    assert any("nested too deeply" in n for n in board.notices)
    facts = board.facts["hostile/m"]
    assert facts.n_parameters is None and facts.embedding_dim is None
    assert [r["Model"] for r in board.overall][:1] or board.overall


# -- item 4: model cards ----------------------------------------------------------------------


def _results_for_card() -> list[Any]:
    from huggingface_hub import EvalResult

    return [
        EvalResult(
            task_type="text-retrieval",
            task_name="Retrieval",
            dataset_type="BASF-AI/ChemNQRetrieval",
            dataset_name="ChemNQRetrieval (default)",
            dataset_config="default",
            dataset_split="test",
            dataset_revision="abc",
            metric_type="ndcg_at_10",
            metric_name="ndcg_at_10",
            metric_value=0.61,
        )
    ]


TWO_ENTRIES = """---
license: apache-2.0  # keep this comment
mode: 0755
enabled: no
model-index:
- name: other/model
  results:
  - task: {type: text-classification}
    dataset: {type: mteb/banking77, name: B, config: default, split: test}
    metrics:
    - {type: accuracy, value: 0.9, verified: false}
- name: me/model
  results:
  - task:
      type: text-retrieval
    dataset:
      type: BASF-AI/ChemNQRetrieval
      name: ChemNQRetrieval (default)
      config: default
      split: test
    metrics:
    - type: ndcg_at_10
      value: 0.3000
      verifyToken: keep-me
    - type: someone_elses_metric
      value: 7
---

# me/model
"""


def test_item4_the_card_merge_keeps_every_entry_and_what_is_not_ours() -> None:
    card = card_with_results(TWO_ENTRIES, "me/model", _results_for_card())
    assert card is not None
    before, after = TWO_ENTRIES.split("- name: me/model")[0], card.split("- name: me/model")[0]
    assert after == before  # every byte before our entry: comments, 0755, no, the other entry
    front = yaml.safe_load(card.split("---")[1])
    entries = front["model-index"]
    assert [e["name"] for e in entries] == ["other/model", "me/model"]
    metrics = entries[1]["results"][0]["metrics"]
    assert metrics[0] == {"type": "ndcg_at_10", "value": 0.61, "verifyToken": "keep-me"}
    assert metrics[1] == {"type": "someone_elses_metric", "value": 7}
    assert entries[1]["results"][0]["dataset"]["revision"] == "abc"
    assert card.endswith("\n# me/model\n")
    assert card_with_results(card, "me/model", _results_for_card()) is None  # idempotent
    # another model's card entry is never merged with ours: a new entry is added
    other = card_with_results(TWO_ENTRIES, "third/model", _results_for_card())
    assert other is not None and TWO_ENTRIES.split("---\n\n")[0] in other
    assert [e["name"] for e in yaml.safe_load(other.split("---")[1])["model-index"]] == [
        "other/model",
        "me/model",
        "third/model",
    ]


def test_item4_a_bom_card_keeps_its_front_matter() -> None:
    card = card_with_results("\ufeff" + TWO_ENTRIES, "me/model", _results_for_card())
    assert card is not None and card.startswith("\ufeff---\n")
    assert yaml.safe_load(card.lstrip("\ufeff").split("---")[1])["license"] == "apache-2.0"


@pytest.mark.parametrize(
    ("card", "message"),
    [
        ("---\nlicense: [apache\n---\n", "not valid YAML"),
        ("---\n- a list\n---\n", "not a YAML mapping"),
        ("---\nmodel-index: 5\n---\n", "model-index is not a list"),
        (TWO_ENTRIES.replace("other/model", "me/model"), "2 model-index entries named me/model"),
        (TWO_ENTRIES.replace("value: 0.3000", "value: 0755"), "'0755'"),
        (TWO_ENTRIES.replace("keep-me", "keep-me  # a note"), "comments"),
        (TWO_ENTRIES.replace("value: 7", "value: no"), "'no'"),
        ("---\nmodel-index: [{name: me/model, results: []}]\n---\n", "flow style"),
    ],
)
def test_item4_cards_we_cannot_merge_safely_are_refused(card: str, message: str) -> None:
    with pytest.raises(CardMergeError, match=message):
        card_with_results(card, "me/model", _results_for_card())


# -- item 5: ChemBench completions and answers ------------------------------------------------


def test_item5_huge_numeric_answers_are_scored_not_crashed() -> None:
    for answer in ("[ANSWER]1e200[/ANSWER]", "[ANSWER]1.7e308[/ANSWER]", "[ANSWER]-1e308[/ANSWER]"):
        out = score_chembench([answer, answer], [QUESTION, MCQ], return_details=True)
        assert out["n_correct"] == 0 and out["n_parse_failures"] == 1  # the MCQ reads nothing
        json.dumps(out, allow_nan=False)  # the report stays valid JSON
        assert out["numeric_mae"] is not None and np.isfinite(out["numeric_mae"])


@pytest.mark.parametrize("filler", ["\n", " \n", "\r\n", "\n\t", "- \n", "A.\n"])
def test_item5_parsing_is_linear_in_the_completion_length(filler: str) -> None:
    def seconds(n: int) -> float:
        text = "Answer:" + filler * n + "5"
        started = time.perf_counter()
        score_chembench([text, text], [QUESTION, MCQ], mode="completion")
        score_chembench([text, text], [QUESTION, MCQ])
        return time.perf_counter() - started

    seconds(1000)  # warm up
    small, large = seconds(5_000), seconds(40_000)
    # quadratic would be 64x (40,000 blank lines took 84 s); linear is 8x, noise allowed
    assert large < 1.0 or large < 20 * small, (small, large)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b'{"key": ["a"], "completion": "x"}', "line 2 of .* needs 'key'"),
        (b'{"key": {"a": 1}, "completion": "x"}', "line 2 of .* needs 'key'"),
        (b'{"key": "k", "completion": ["x"]}', "line 2 of .* needs 'key'"),
        (b"[" * 100_000, "line 2 of .* nested too deeply"),
        (b"\xff\xfe\x00\x01binary", "line 2 of .* not UTF-8"),
        (b'{"key": "q1", "completion": "again"}', "line 2 of .* repeats key 'q1'"),
        (b"not json", "line 2 of .* not JSON"),
    ],
)
def test_item5_every_malformed_completions_line_is_named(
    tmp_path: Path, line: bytes, message: str
) -> None:
    path = tmp_path / "answers.jsonl"
    path.write_bytes(b'{"key": "q1", "completion": "[ANSWER]A[/ANSWER]"}\n' + line + b"\n")
    with pytest.raises(ValueError, match=f"completions: {message}"):
        read_completions(path)


def test_item5_cli_names_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    questions = tmp_path / "questions.jsonl"
    questions.write_text(json.dumps(QUESTION) + "\n")
    answers = tmp_path / "answers.jsonl"
    answers.write_bytes(b'{"key": "u-num", "completion": "5"}\n{"key": [1], "completion": "x"}\n')
    code = chemteb_main(
        ["chembench", "score", "--questions", str(questions), "--completions", str(answers)]
    )
    err = capsys.readouterr().err
    assert code == 2 and "line 2 of" in err and "Traceback" not in err


@pytest.fixture(autouse=True)
def _no_stray_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("CHEMTEB_CACHE", str(tmp_path / "chemteb-cache"))
    yield
