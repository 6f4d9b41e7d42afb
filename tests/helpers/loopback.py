"""A loopback HTTP server for tests that stand in for a model API: start one, answer JSON."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def read_json(handler: BaseHTTPRequestHandler) -> Any:
    """The request's JSON body."""
    return json.loads(handler.rfile.read(int(handler.headers["Content-Length"])))


def reply_json(handler: BaseHTTPRequestHandler, payload: Any) -> None:
    """Answer 200 with ``payload`` as JSON."""
    data = json.dumps(payload).encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def chat_reply(handler: BaseHTTPRequestHandler, content: str) -> None:
    """Answer as an OpenAI-compatible chat endpoint does."""
    reply_json(handler, {"choices": [{"message": {"role": "assistant", "content": content}}]})


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve ``handler`` on a free loopback port; yields the API root (``http://.../v1``)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
