"""Vision questions (MaCBench-style): placeholders with image entries become OpenAI-style
content parts, sent to a loopback chat server and scored like any answer (issue 18). The test
makes its own PNG; there is no MaCBench copy here. ~0.5 s."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar

import pytest

from chemteb_eval.chembench.generate import load_generator
from chemteb_eval.chembench.prompts import build_messages
from chemteb_eval.chembench.questions import Question
from chemteb_eval.cli import main

from .helpers.loopback import chat_reply, read_json, serving


def _png(width: int = 4, height: int = 3) -> bytes:
    """A real (tiny, red) PNG: signature, IHDR, one IDAT, IEND."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


DATA_URL = "data:image/png;base64," + base64.b64encode(_png()).decode()


def _question(**changes: Any) -> dict[str, Any]:
    example = {
        "input": "{type1} {entry1} shows a coloured square. What colour is it?",
        "qentries_modality": {
            "image": {
                "type1": {"type": "text", "value": "The image"},
                "entry1": {"type": "image", "value": DATA_URL},
            }
        },
        "target_scores": {"red": 1, "green": 0, "blue": 0},
    }
    example.update(changes)
    return {
        "name": "colour_1",
        "uuid": "u-colour-1",
        "keywords": ["requires-perception"],
        "metrics": ["multiple_choice_grade"],
        "examples": [example],
    }


def test_a_vision_question_becomes_content_parts() -> None:
    question = Question.from_dict(_question())
    assert question.is_multimodal
    assert question.parts() == [
        {"type": "text", "value": "The image"},
        {"type": "image", "value": DATA_URL},
        {"type": "text", "value": "shows a coloured square. What colour is it?"},
    ]
    parts, options = build_messages(question)
    assert isinstance(parts, list) and options == ["red", "green", "blue"]
    assert [p["type"] for p in parts] == ["text", "image_url", "text"]
    assert parts[0]["text"].endswith("Question: The image")
    assert parts[1]["image_url"]["url"] == DATA_URL
    assert "A. red" in parts[2]["text"] and "[ANSWER]" in parts[2]["text"]
    # the file schema round-trips
    assert Question.from_dict(question.to_dict()) == question
    with pytest.raises(ValueError, match="shows an image; use instruction prompts"):
        build_messages(question, mode="completion")


def test_text_placeholders_become_plain_text() -> None:
    data = _question(
        qentries_modality={
            "text": {
                "type1": {"type": "text", "value": "A square"},
                "entry1": {"type": "text", "value": "(red)"},
            }
        }
    )
    question = Question.from_dict(data)
    prompt, _ = build_messages(question)
    assert isinstance(prompt, str) and "Question: A square (red) shows a coloured" in prompt


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ({"type1": {"type": "text", "value": "x"}}, r"lacks \['entry1'\]"),
        (
            {
                "type1": {"type": "text", "value": "x"},
                "entry1": {"type": "image", "value": "a.png"},
            },
            "an image must be a data URL",
        ),
        ({"type1": {"type": "video", "value": "x"}, "entry1": {}}, "needs type 'text' or 'image'"),
    ],
)
def test_malformed_vision_questions_are_named(entries: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message) as err:
        Question.from_dict(_question(qentries_modality={"image": entries}))
    assert "colour_1" in str(err.value)


class _VisionLLM(BaseHTTPRequestHandler):
    seen: ClassVar[list[Any]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = read_json(self)
        content = body["messages"][0]["content"]
        type(self).seen.append(content)
        images = (
            [p for p in content if p.get("type") == "image_url"]
            if isinstance(content, list)
            else []
        )
        ok = bool(images) and images[0]["image_url"]["url"].startswith("data:image/png;base64,")
        answer = "[ANSWER]A[/ANSWER]" if ok else "I see no image."
        chat_reply(self, answer)


@pytest.fixture
def vision_server() -> Iterator[str]:
    _VisionLLM.seen = []
    with serving(_VisionLLM) as base:
        yield base


def test_generate_sends_the_image_and_scores_the_answer(tmp_path: Path, vision_server: str) -> None:
    questions = tmp_path / "q"
    questions.mkdir()
    (questions / "colour_1.json").write_text(json.dumps(_question()))
    out = tmp_path / "gen.jsonl"
    common = ["--questions", str(questions)]
    args = ["chembench", "generate", *common, "-m", "openai:tiny-vision", "--api-base"]
    assert main([*args, vision_server, "--out", str(out), "--quiet"]) == 0
    (content,) = _VisionLLM.seen
    assert [p["type"] for p in content] == ["text", "image_url", "text"]
    assert main(["chembench", "score", *common, "--completions", str(out)]) == 0
    report = json.loads((tmp_path / "gen.report.json").read_text())
    assert report["fraction_correct"] == 1.0
    # the prompts file holds the content parts for any server
    prompts = tmp_path / "prompts.jsonl"
    assert main(["chembench", "prompts", *common, "--out", str(prompts)]) == 0
    row = json.loads(prompts.read_text())
    assert row["prompt"][1] == {"type": "image_url", "image_url": {"url": DATA_URL}}


def test_a_text_only_endpoint_refuses_an_image_with_one_line(vision_server: str) -> None:
    parts, _ = build_messages(Question.from_dict(_question()))
    generate = load_generator("openai:tiny", mode="completion", api_base=vision_server)
    with pytest.raises(ValueError, match="use a chat model with vision"):
        generate([parts])


def test_litellm_reaches_the_same_server_with_the_image(
    tmp_path: Path, vision_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """LiteLLM's OpenAI provider, pointed at the loopback server with --api-base."""
    # (importorskip imports LiteLLM: without this it would first try to download its cost map)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    pytest.importorskip("litellm", reason="needs the chembench extra")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    questions = tmp_path / "q"
    questions.mkdir()
    (questions / "colour_1.json").write_text(json.dumps(_question()))
    out = tmp_path / "gen.jsonl"
    args = ["chembench", "generate", "--questions", str(questions), "-m", "litellm:openai/tiny"]
    assert main([*args, "--api-base", vision_server, "--out", str(out), "--quiet"]) == 0
    (content,) = _VisionLLM.seen
    assert [p["type"] for p in content] == ["text", "image_url", "text"]
    assert json.loads(out.read_text())["completion"] == "[ANSWER]A[/ANSWER]"
    with pytest.raises(ValueError, match="name the provider too"):
        load_generator("litellm:tiny")
    with pytest.raises(ValueError, match="use instruction prompts"):
        load_generator("litellm:openai/tiny", mode="completion")
