"""A loopback stand-in for the Hugging Face Hub, for the real ``huggingface_hub`` client.

Point ``HF_ENDPOINT`` at ``FakeHub.url`` and ``snapshot_download``/``hf_hub_download`` read repos
the test put in it. Only what the project's code paths call is served: repo info at a revision,
the recursive tree listing, and file resolution (HEAD and GET). Repos are in memory; every
``add_commit`` makes a new commit (a 40-hex sha) and moves ``main``.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlparse

__all__ = ["FakeHub"]


@dataclass
class _Repo:
    commits: dict[str, dict[str, bytes]] = field(default_factory=dict)  # sha -> files
    refs: dict[str, str] = field(default_factory=dict)  # branch -> sha

    def resolve(self, revision: str) -> str | None:
        if revision in self.commits:
            return revision
        return self.refs.get(revision)


class FakeHub:
    """A threaded HTTP server on 127.0.0.1 answering like the Hub for the calls above."""

    def __init__(self) -> None:
        self.repos: dict[tuple[str, str], _Repo] = {}
        self.requests: list[str] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                hub._serve(self, body=True)

            def do_HEAD(self) -> None:
                hub._serve(self, body=False)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def add_commit(
        self, repo_id: str, files: dict[str, bytes], *, repo_type: str = "dataset"
    ) -> str:
        """Commit ``files`` (the whole tree) to ``repo_id``; return the new commit sha."""
        repo = self.repos.setdefault((repo_type, repo_id), _Repo())
        sha = hashlib.sha1(
            repr((repo_id, len(repo.commits), sorted(files.items()))).encode()
        ).hexdigest()
        repo.commits[sha] = dict(files)
        repo.refs["main"] = sha
        return sha

    # -- request handling --------------------------------------------------------------------

    def _send(
        self,
        handler: BaseHTTPRequestHandler,
        status: int,
        payload: bytes,
        headers: dict[str, str],
        body: bool,
    ) -> None:
        handler.send_response(status)
        for key, value in headers.items():
            handler.send_header(key, value)
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        if body:
            handler.wfile.write(payload)

    def _json(
        self, handler: BaseHTTPRequestHandler, payload: Any, body: bool, status: int = 200
    ) -> None:
        self._send(
            handler,
            status,
            json.dumps(payload).encode(),
            {"Content-Type": "application/json"},
            body,
        )

    def _missing(
        self, handler: BaseHTTPRequestHandler, body: bool, code: str, message: str
    ) -> None:
        headers = {
            "Content-Type": "application/json",
            "X-Error-Code": code,
            "X-Error-Message": message,
        }
        self._send(handler, 404, json.dumps({"error": message}).encode(), headers, body)

    def _serve(self, handler: BaseHTTPRequestHandler, *, body: bool) -> None:
        path = unquote(urlparse(handler.path).path)
        self.requests.append(f"{handler.command} {path}")
        parts = path.strip("/").split("/")
        if parts[0] == "api" and len(parts) >= 6 and parts[1] in {"datasets", "models", "spaces"}:
            repo_type = parts[1][:-1]
            repo_id = "/".join(parts[2:4])
            repo = self.repos.get((repo_type, repo_id))
            if repo is None:
                return self._missing(
                    handler, body, "RepoNotFound", f"Repository {repo_id} not found"
                )
            sha = repo.resolve(parts[5])
            if sha is None:
                return self._missing(
                    handler, body, "RevisionNotFound", f"Revision {parts[5]} not found"
                )
            files = repo.commits[sha]
            if parts[4] == "revision":
                return self._json(
                    handler,
                    {
                        "id": repo_id,
                        "sha": sha,
                        "private": False,
                        "siblings": [{"rfilename": name} for name in sorted(files)],
                    },
                    body,
                )
            if parts[4] == "tree":
                return self._json(
                    handler,
                    [
                        {
                            "type": "file",
                            "path": name,
                            "size": len(data),
                            "oid": hashlib.sha1(data).hexdigest(),
                        }
                        for name, data in sorted(files.items())
                    ],
                    body,
                )
        # File resolution: /datasets/{org}/{name}/resolve/{rev}/{path} (models: no prefix).
        offset = 1 if parts[0] in {"datasets", "spaces"} else 0
        if len(parts) >= offset + 5 and parts[offset + 2] == "resolve":
            repo_type = parts[0][:-1] if offset else "model"
            repo_id = "/".join(parts[offset : offset + 2])
            repo = self.repos.get((repo_type, repo_id))
            sha = repo.resolve(parts[offset + 3]) if repo else None
            name = "/".join(parts[offset + 4 :])
            if repo is None or sha is None or name not in repo.commits[sha]:
                return self._missing(handler, body, "EntryNotFound", f"{name} not found")
            data = repo.commits[sha][name]
            headers = {
                "X-Repo-Commit": sha,
                "ETag": f'"{hashlib.sha1(data).hexdigest()}"',
                "Content-Type": "application/octet-stream",
            }
            return self._send(handler, 200, data, headers, body)
        return self._missing(handler, body, "NotFound", f"no route for {path}")
