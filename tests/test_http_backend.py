"""The OpenAI-compatible HTTP backend against a loopback server: batching, order, retries, errors."""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from chemteb_eval.errors import ChemtebError
from chemteb_eval.models.http import HTTPEmbeddingEncoder


def _vector(text: str) -> list[float]:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")
    return np.random.default_rng(seed).standard_normal(8).round(6).tolist()


class _Server(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.failures: list[int] = []  # status codes to answer before succeeding
        self.batches: list[int] = []
        self.auth: list[str | None] = []


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.auth.append(self.headers.get("Authorization"))
        if self.path != "/v1/embeddings" or body.get("model") == "missing":
            self._send(404, {"error": "model not found"})
            return
        if body.get("model") == "locked":
            self._send(401, {"error": "invalid api key"})
            return
        if self.server.failures:
            self._send(self.server.failures.pop(0), {"error": "busy"}, {"Retry-After": "0"})
            return
        texts = body["input"]
        self.server.batches.append(len(texts))
        data = [{"index": i, "embedding": _vector(t)} for i, t in enumerate(texts)]
        self._send(200, {"data": data[::-1]})  # out of order on purpose: index decides

    def _send(self, code: int, payload: object, headers: dict[str, str] | None = None) -> None:
        raw = json.dumps(payload).encode()
        self.send_response(code)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


@pytest.fixture
def server() -> Iterator[_Server]:
    srv = _Server()
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def _url(srv: _Server) -> str:
    return f"http://127.0.0.1:{srv.server_address[1]}/v1"


def test_batches_order_prompts_and_key(server: _Server) -> None:
    enc = HTTPEmbeddingEncoder(
        "test-embed", api_base=_url(server), api_key="sk-test", max_batch=3, backoff=0
    )
    assert enc.meta.embedding_dim == 8
    texts = [f"compound {i}" for i in range(7)]
    out = enc.encode(texts, prompt="query: ", batch_size=100)
    assert out.shape == (7, 8) and out.dtype == np.float32
    np.testing.assert_allclose(out, np.asarray([_vector("query: " + t) for t in texts], np.float32))
    assert server.batches == [1, 3, 3, 1]  # the probe, then batches of at most 3
    assert set(server.auth) == {"Bearer sk-test"}


def test_retries_rate_limits_and_server_errors(server: _Server) -> None:
    enc = HTTPEmbeddingEncoder("test-embed", api_base=_url(server), backoff=0, max_retries=3)
    server.failures = [429, 503, 500]
    before = enc.requests
    out = enc.encode(["a", "b"], prompt="", batch_size=8)
    assert out.shape == (2, 8) and enc.requests - before == 4
    server.failures = [429] * 10
    with pytest.raises(ChemtebError, match=r"failed 4 times \(HTTP 429\).*rate-limiting"):
        enc.encode(["c"], prompt="", batch_size=8)


def test_client_errors_and_unreachable_servers_are_clear(server: _Server) -> None:
    with pytest.raises(ChemtebError, match=r"answered 404 for model missing.*Check the model name"):
        HTTPEmbeddingEncoder("missing", api_base=_url(server), backoff=0)
    port = server.server_address[1]
    server.shutdown()
    server.server_close()
    with pytest.raises(ChemtebError, match=r"failed 2 times \(ConnectError"):
        HTTPEmbeddingEncoder("x", api_base=f"http://127.0.0.1:{port}/v1", backoff=0, max_retries=1)


def test_openai_without_a_key_is_said_before_any_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ChemtebError) as info:
        HTTPEmbeddingEncoder("text-embedding-3-small")
    assert str(info.value) == (
        "model openai:text-embedding-3-small: no API key for https://api.openai.com/v1: set "
        "OPENAI_API_KEY (export OPENAI_API_KEY=sk-...), or point --api-base (api_base, "
        "$OPENAI_BASE_URL) at a server that needs none."
    )
    monkeypatch.setenv("OPENAI_API_KEY", "  ")  # blank is no key
    monkeypatch.setenv("OPENAI_BASE_URL", "https://API.openai.com/v1/")
    with pytest.raises(
        ChemtebError, match=r"no API key for https://API\.openai\.com/v1: set OPENAI"
    ):
        HTTPEmbeddingEncoder("m")


def test_a_refused_key_or_none_sent_is_named(
    server: _Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(
        ChemtebError, match=r"answered 401 .* \(no key was sent: set OPENAI_API_KEY\)"
    ):
        HTTPEmbeddingEncoder("locked", api_base=_url(server), backoff=0)
    with pytest.raises(
        ChemtebError, match=r"answered 401 .* key sent, from OPENAI_API_KEY .* refused"
    ):
        HTTPEmbeddingEncoder("locked", api_base=_url(server), api_key="sk-bad", backoff=0)


def test_an_unreachable_host_is_not_a_rate_limit() -> None:
    # a name that does not resolve (no network; .invalid never resolves): at once, not retried
    started = time.perf_counter()
    with pytest.raises(ChemtebError) as info:
        HTTPEmbeddingEncoder("m", api_base="http://api.example.invalid/v1")  # default retries
    assert time.perf_counter() - started < 5
    message = str(info.value)
    assert message.startswith(
        "http://api.example.invalid/v1/embeddings cannot be reached: its host name does not "
        "resolve (ConnectError: "
    )
    assert "rate" not in message and "smaller batches" not in message
    # a port where nothing listens: retried twice (a server restarting), not six times
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ChemtebError) as info:
        HTTPEmbeddingEncoder("m", api_base=f"http://127.0.0.1:{port}/v1", backoff=0)
    message = str(info.value)
    assert "failed 3 times (ConnectError" in message and "the host cannot be reached" in message
    assert "rate" not in message and "smaller batches" not in message


def test_a_failing_server_is_not_called_rate_limiting_for_sure(server: _Server) -> None:
    enc = HTTPEmbeddingEncoder("test-embed", api_base=_url(server), backoff=0, max_retries=2)
    server.failures = [503] * 3
    with pytest.raises(
        ChemtebError, match=r"failed 3 times \(HTTP 503\); the server is down, overloaded"
    ):
        enc.encode(["c"], prompt="", batch_size=8)


@pytest.mark.slow
def test_runs_through_the_runner(
    server: _Server, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chemteb_eval.runner import run
    from chemteb_eval.tasks import get_task

    monkeypatch.setenv("CHEMTEB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CHEMTEB_PIPCHEM_SCALE", "small")
    enc = HTTPEmbeddingEncoder("test-embed", api_base=_url(server), backoff=0)
    report = run(
        enc,
        tasks=[get_task("PipChemSMILESNameBM")],
        output_dir=tmp_path / "out",
        progress=False,
        log=lambda m: None,
    )
    assert report.statuses == {"PipChemSMILESNameBM": "done"}
    assert (
        tmp_path / "out" / "test-embed" / "no_revision_available" / "PipChemSMILESNameBM.json"
    ).is_file()
