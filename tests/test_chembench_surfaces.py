"""ChemBench's surfaces: question loading (folder, JSONL, the Hub through the loopback Hub), the
evaluate module, `chemteb chembench prompts|generate|score`, and generation backends."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from chemteb_eval.chembench.load import load_questions
from chemteb_eval.chembench.run import read_completions, score_completions
from chemteb_eval.chembench.score import Question, option_order, score_chembench
from chemteb_eval.cli import main
from chemteb_eval.data.hub_layout import write_hub_dataset

from .conftest import REPO_ROOT
from .helpers.fake_hub import FakeHub

MCQ: dict[str, Any] = {
    "name": "mcq_1",
    "uuid": "u-mcq-1",
    "description": "x",
    "keywords": ["requires-knowledge", "difficulty-basic"],
    "metrics": ["multiple_choice_grade"],
    "examples": [
        {"input": "Which is a noble gas?", "target_scores": {"argon": 1, "oxygen": 0, "iron": 0}}
    ],
}
NUM: dict[str, Any] = {
    "name": "num_1",
    "uuid": "u-num-1",
    "description": "y",
    "keywords": ["requires-calculation", "difficultly-basic"],
    "metrics": ["exact_str_match", "mae", "mse"],
    "examples": [{"input": "How many protons does carbon have?", "target": "6"}],
}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "questions"
    (root / "inorganic" / "sub").mkdir(parents=True)
    (root / "physical").mkdir()
    (root / "inorganic" / "sub" / "mcq_1.json").write_text(json.dumps(MCQ))
    (root / "physical" / "num_1.json").write_text(json.dumps(NUM))
    (root / "physical" / "broken.json").write_text("{ nope")
    (root / "physical" / "two_examples.json").write_text(
        json.dumps(dict(NUM, name="two", examples=NUM["examples"] * 2))
    )
    return root


def test_folder_loading_topics_and_problems(folder: Path) -> None:
    loaded = load_questions(folder)
    assert sorted(q.name for q in loaded.questions) == ["mcq_1", "num_1"]
    assert {q.name: q.topic for q in loaded.questions} == {
        "mcq_1": "inorganic",
        "num_1": "physical",
    }
    reasons = dict(loaded.skipped)
    assert "not readable JSON" in reasons[str(Path("physical/broken.json"))]
    assert "exactly one example" in reasons[str(Path("physical/two_examples.json"))]
    assert any(
        name == "num_1" and "misspelt difficulty" in p for name, p in loaded.keyword_problems
    )
    with pytest.raises(ValueError, match="neither a folder nor a file"):
        load_questions(folder / "absent")
    with pytest.raises(ValueError, match="revision: reading jablonkagroup/ChemBench needs"):
        load_questions("hub:jablonkagroup/ChemBench")


def test_jsonl_loading(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(MCQ) + "\n\n" + "not json\n" + json.dumps(NUM) + "\n")
    loaded = load_questions(path)
    assert len(loaded.questions) == 2 and loaded.skipped[0][0] == "q.jsonl:3"


@pytest.mark.slow
def test_hub_questions_through_the_loopback_hub(tmp_path: Path) -> None:
    """The Hub's schema (target_scores as JSON strings, one config per topic), read with
    load_dataset through HF_ENDPOINT."""
    row_mcq = dict(
        MCQ,
        examples=[
            {
                "input": MCQ["examples"][0]["input"],
                "target": None,
                "target_scores": json.dumps(MCQ["examples"][0]["target_scores"]),
            }
        ],
        relative_tolerance=None,
    )
    row_num = dict(
        NUM,
        examples=[{"input": NUM["examples"][0]["input"], "target": "6", "target_scores": None}],
        relative_tolerance=0.05,
    )
    columns = lambda rows: {k: [r[k] for r in rows] for k in rows[0]}  # noqa: E731
    repo = write_hub_dataset(
        tmp_path / "repo",
        {
            "inorganic_chemistry": {"train": columns([row_mcq])},
            "physical_chemistry": {"train": columns([row_num])},
        },
        pretty_name="ChemBench (test copy)",
        license="mit",
        card="Two questions in the Hub's schema.",
    )
    hub = FakeHub()
    try:
        sha = hub.add_commit(
            "jablonkagroup/ChemBench",
            {str(p.relative_to(repo)): p.read_bytes() for p in repo.rglob("*") if p.is_file()},
        )
        code = (
            "import json, sys; from chemteb_eval.chembench.load import load_questions; "
            "s = load_questions('hub:jablonkagroup/ChemBench', revision=sys.argv[1]); "
            "print(json.dumps([q.to_dict() for q in s.questions]))"
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
        env.update(HF_ENDPOINT=hub.url, HF_HOME=str(tmp_path / "hf"), HF_HUB_DISABLE_XET="1")
        done = subprocess.run(
            [sys.executable, "-c", code, sha], capture_output=True, text=True, env=env, timeout=300
        )
    finally:
        hub.close()
    assert done.returncode == 0, done.stderr
    got = {
        q["name"]: Question.from_dict(q) for q in json.loads(done.stdout.strip().splitlines()[-1])
    }
    assert got["mcq_1"].topic == "inorganic_chemistry" and got["mcq_1"].is_mcq
    assert dict(got["mcq_1"].target_scores or {}) == {"argon": 1.0, "oxygen": 0.0, "iron": 0.0}
    assert got["num_1"].target == 6.0 and got["num_1"].relative_tolerance == 0.05


def test_evaluate_module_equals_the_function() -> None:
    evaluate = pytest.importorskip("evaluate")
    module = evaluate.load(str(REPO_ROOT / "metrics" / "chembench"))
    completions = ["[ANSWER]A[/ANSWER]", "six"]
    want = score_chembench(completions, [MCQ, NUM])
    assert module.compute(predictions=completions, references=[MCQ, NUM]) == want
    assert (
        module.compute(predictions=completions, references=[json.dumps(MCQ), json.dumps(NUM)])
        == want
    )
    module.add_batch(predictions=completions[:1], references=[MCQ])
    module.add(prediction=completions[1], reference=NUM)
    assert module.compute() == want
    completion_mode = module.compute(
        predictions=[" A\n", " 6"], references=[MCQ, NUM], prompt_mode="completion"
    )
    assert completion_mode["fraction_correct"] == 1.0
    for f in ("chembench.py", "README.md", "app.py", "requirements.txt"):
        assert (REPO_ROOT / "metrics" / "chembench" / f).is_file()


def test_cli_prompts_then_score(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompts = tmp_path / "prompts.jsonl"
    assert (
        main(
            [
                "chembench",
                "prompts",
                "--questions",
                str(folder),
                "--out",
                str(prompts),
                "--shuffle-seed",
                "3",
            ]
        )
        == 0
    )
    rows = [json.loads(line) for line in prompts.read_text().splitlines()]
    assert {r["key"] for r in rows} == {"u-mcq-1", "u-num-1"}
    mcq_row = next(r for r in rows if r["type"] == "mcq")
    letter = chr(65 + mcq_row["options"].index("argon"))
    completions = tmp_path / "answers.jsonl"
    completions.write_text(
        json.dumps({"key": "u-mcq-1", "completion": f"[ANSWER]{letter}[/ANSWER]"})
        + "\n"
        + json.dumps({"uuid": "u-num-1", "completion": "I'm sorry, I can't help with that."})
        + "\n"
    )
    capsys.readouterr()
    code = main(
        [
            "chembench",
            "score",
            "--questions",
            str(folder),
            "--completions",
            str(completions),
            "--shuffle-seed",
            "3",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "fraction correct 0.5000 (1/2)" in printed and "refusals 1" in printed
    report = json.loads((tmp_path / "answers.report.json").read_text())
    assert report["by_topic"]["inorganic"]["fraction_correct"] == 1.0
    assert report["details"][1]["refused"] is True
    assert any(k["problem"].startswith("'difficultly-basic'") for k in report["keyword_problems"])
    assert len(report["skipped_questions"]) == 2


def test_cli_score_errors(folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    partial = tmp_path / "partial.jsonl"
    partial.write_text(json.dumps({"key": "u-mcq-1", "completion": "[ANSWER]A[/ANSWER]"}) + "\n")
    assert (
        main(["chembench", "score", "--questions", str(folder), "--completions", str(partial)]) == 2
    )
    assert "1 of 2 questions have no completion" in capsys.readouterr().err
    assert (
        main(
            [
                "chembench",
                "score",
                "--questions",
                str(folder),
                "--completions",
                str(partial),
                "--only-answered",
            ]
        )
        == 0
    )
    stranger = tmp_path / "stranger.jsonl"
    stranger.write_text(json.dumps({"key": "zzz", "completion": "A"}) + "\n")
    assert (
        main(["chembench", "score", "--questions", str(folder), "--completions", str(stranger)])
        == 2
    )
    assert "match no question" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"key": "u-mcq-1"}\n')
    with pytest.raises(ValueError, match=r"line 1 .* needs 'key'"):
        read_completions(bad)


class _FakeLLM(BaseHTTPRequestHandler):
    calls: ClassVar[list[dict[str, Any]]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).calls.append({"path": self.path, **body})
        prompt = body["messages"][0]["content"] if "messages" in body else body["prompt"]
        answer = "[ANSWER]A[/ANSWER]" if "Options:" in prompt else "The answer is six."
        payload: dict[str, Any]
        if self.path.endswith("/chat/completions"):
            payload = {"choices": [{"message": {"role": "assistant", "content": answer}}]}
        else:
            payload = {"choices": [{"text": " A" if "Options:" in prompt else " 6"}]}
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def llm() -> Iterator[str]:
    _FakeLLM.calls = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeLLM)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def test_generate_with_an_openai_compatible_server_resumes(
    folder: Path, tmp_path: Path, llm: str
) -> None:
    out = tmp_path / "gen.jsonl"
    args = [
        "chembench",
        "generate",
        "--questions",
        str(folder),
        "-m",
        "openai:tiny",
        "--api-base",
        llm,
        "--out",
        str(out),
        "--quiet",
    ]
    assert main(args) == 0
    assert len(_FakeLLM.calls) == 2 and all(c["temperature"] == 0.0 for c in _FakeLLM.calls)
    assert main(args) == 0 and len(_FakeLLM.calls) == 2  # nothing left to ask
    assert main(["chembench", "score", "--questions", str(folder), "--completions", str(out)]) == 0
    report = json.loads((tmp_path / "gen.report.json").read_text())
    assert report["fraction_correct"] == 1.0  # "A" is argon; "six" reads as 6
    completion = tmp_path / "completion.jsonl"
    assert main([*args[:-3], "--out", str(completion), "--mode", "completion", "--quiet"]) == 0
    assert _FakeLLM.calls[-1]["path"].endswith("/completions") and "prompt" in _FakeLLM.calls[-1]
    answers = read_completions(completion)
    loaded = load_questions(folder)
    scored = score_completions(loaded, answers, mode="completion")
    assert scored["fraction_correct"] == 1.0


def test_generate_with_a_transformers_pipeline(tmp_path: Path) -> None:
    """A tiny randomly initialised GPT-2 with an in-memory tokenizer: the pipeline path runs."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    from chemteb_eval.chembench.generate import load_generator

    words = ["[UNK]", "[EOS]", "The", "answer", "is", "[ANSWER]", "A", "[/ANSWER]", "Question:"]
    tok = Tokenizer(models.WordLevel(vocab={w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", eos_token="[EOS]", pad_token="[EOS]"
    )
    config = GPT2Config(
        vocab_size=len(words),
        n_positions=64,
        n_embd=16,
        n_layer=1,
        n_head=2,
        bos_token_id=1,
        eos_token_id=1,
    )
    GPT2LMHeadModel(config).save_pretrained(tmp_path / "tiny")
    fast.save_pretrained(tmp_path / "tiny")
    generate = load_generator(f"transformers:{tmp_path / 'tiny'}", max_tokens=4)
    out = generate(["Question: The answer is", "The answer"])
    assert len(out) == 2 and all(isinstance(o, str) for o in out)
    with pytest.raises(ValueError, match="model: 'gpt'"):
        load_generator("gpt")


def test_shuffle_seed_must_match(folder: Path) -> None:
    loaded = load_questions(folder)
    q = next(q for q in loaded.questions if q.is_mcq)
    letter = chr(65 + option_order(q, 11).index("argon"))
    right = score_chembench([f"[ANSWER]{letter}[/ANSWER]"], [q], shuffle_seed=11)
    assert right["fraction_correct"] == 1.0


def test_the_metric_space_app_scores() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "chembench_app", REPO_ROOT / "metrics" / "chembench" / "app.py"
    )
    assert spec is not None and spec.loader is not None
    app = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(app)  # builds the Interface; launching is guarded by __main__
    good = app.score(json.dumps(MCQ), "[ANSWER]A[/ANSWER]", "instruction")
    assert good["fraction_correct"] == 1.0 and good["details"][0]["answer"] == ["A"]
    assert "error" in app.score("{not json", "A", "instruction")


def test_refusal_classifier_from_a_local_model(tmp_path: Path) -> None:
    """A tiny text-classification model with NORMAL/REJECTION labels, biased to say REJECTION:
    the classifier path flags a refusal that keyword detection misses."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import BertConfig, BertForSequenceClassification, PreTrainedTokenizerFast

    from chemteb_eval.chembench.refusal import load_refusal_classifier
    from chemteb_eval.errors import ChemtebError

    words = ["[UNK]", "[PAD]", "[CLS]", "[SEP]", "no", "way", "the", "answer"]
    tok = Tokenizer(models.WordLevel(vocab={w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        model_max_length=16,
    )
    config = BertConfig(
        vocab_size=len(words),
        hidden_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=8,
        max_position_embeddings=32,
        id2label={0: "NORMAL", 1: "REJECTION"},
        label2id={"NORMAL": 0, "REJECTION": 1},
    )
    model = BertForSequenceClassification(config)
    with torch.no_grad():  # always REJECTION: the classifier's bias decides
        model.classifier.weight.zero_()
        model.classifier.bias.copy_(torch.tensor([-5.0, 5.0]))
    model.save_pretrained(tmp_path / "clf")
    fast.save_pretrained(tmp_path / "clf")
    classify = load_refusal_classifier(str(tmp_path / "clf"))
    assert classify("no way") and classify(" ".join(["the answer"] * 40))  # long text: windows
    q = Question.from_dict(NUM)
    out = score_chembench(["no way"], [q], refusal_classifier=classify)
    assert out["n_refusals"] == 1
    with pytest.raises(ChemtebError, match="could not be loaded"):
        load_refusal_classifier(str(tmp_path / "absent-model"))


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("tolerance", [0.1]),
        ("tolerance", "ten percent"),
        ("relative_tolerance", True),
        ("relative_tolerance", {"value": 0.1}),
        ("relative_tolerance", float("nan")),
        ("tolerance", float("inf")),
        ("tolerance", -0.1),
        ("relative_tolerance", 10**400),
    ],
)
def test_item20_bad_tolerance_is_a_named_value_error(
    field: str, value: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = dict(NUM, **{field: value})
    with pytest.raises(ValueError, match=rf"^{field}: question num_1 \(uuid u-num-1\) has "):
        Question.from_dict(bad)
    with pytest.raises(ValueError, match=rf"{field}: question num_1"):
        score_chembench(["6"], [bad])
    # the loader skips it, naming the file; the CLI goes on with the rest
    root = tmp_path / "q"
    root.mkdir()
    (root / "mcq_1.json").write_text(json.dumps(MCQ))
    # json.dumps writes NaN/Infinity (json.loads reads them back) and a 400-digit integer
    (root / "num_1.json").write_text(json.dumps(bad))
    prompts = ["chembench", "prompts", "--questions", str(root), "--out", str(tmp_path / "p")]
    assert main(prompts) == 0
    err = capsys.readouterr().err
    assert f"  num_1.json: {field}: question num_1 (uuid u-num-1) has " in err
    assert "Traceback" not in err
    # only the bad one: one line, exit 2
    (root / "mcq_1.json").unlink()
    assert main(prompts) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("chemteb: error: questions: no question loaded") and "\n" not in err
    assert f"the first, num_1.json: {field}: question num_1" in err
    # valid forms still load: a number, a numeric string, null (the default)
    for good, want in ((0.05, 0.05), ("0.05", 0.05), (None, None), (0, 0.0)):
        assert Question.from_dict(dict(NUM, **{field: good})).relative_tolerance == want


def test_item20_list_fields_are_named_too() -> None:
    """keywords / metrics that are not lists: a number was a TypeError, a string was read letter
    by letter (metrics "mae" became m, a, e)."""
    for field, value in (("keywords", 5), ("metrics", "mae"), ("keywords", {"a": 1})):
        with pytest.raises(ValueError, match=rf"^{field}: question num_1 has .* a list of strings"):
            Question.from_dict(dict(NUM, **{field: value}))
    assert Question.from_dict(dict(NUM, keywords=None)).keywords == ()


class _FlakyLLM(BaseHTTPRequestHandler):
    """Fails the first requests with 500 then 503 (a provider's transient errors), then
    answers."""

    failures: ClassVar[list[int]] = []
    calls: ClassVar[int] = 0

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        type(self).calls += 1
        if type(self).calls <= len(type(self).failures):
            data = b'{"error": {"message": "overloaded", "type": "server_error"}}'
            self.send_response(type(self).failures[type(self).calls - 1])
        else:
            data = json.dumps(
                {"choices": [{"message": {"content": "[ANSWER]A[/ANSWER]"}}]}
            ).encode()
            self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def test_item16_litellm_generation_survives_transient_errors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """LiteLLM hands max_retries (as num_retries) to the OpenAI SDK, 1 retry here, and once
    those are spent retries in its own loop, which imports tenacity: two failures need both.
    Without tenacity the second failure ended the generation ("tenacity import failed"; a
    provider not on the OpenAI SDK, the first). ~1 s (the SDK's backoff)."""
    from chemteb_eval.chembench.generate import load_generator

    # (importorskip imports LiteLLM: without this it would first try to download its cost map)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    pytest.importorskip("litellm", reason="needs the chembench extra")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    _FlakyLLM.failures, _FlakyLLM.calls = [500, 503], 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FlakyLLM)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        generate = load_generator("litellm:openai/tiny", api_base=base, max_retries=1)
        assert generate(["Which is a noble gas?"]) == ["[ANSWER]A[/ANSWER]"]
    finally:
        server.shutdown()
    assert _FlakyLLM.calls == 3
