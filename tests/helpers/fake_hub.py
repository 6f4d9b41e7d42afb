"""A loopback stand-in for the Hugging Face Hub, for the real ``huggingface_hub`` and ``evaluate``
clients.

Point ``HF_ENDPOINT`` at ``FakeHub.url`` (before those libraries are imported: both read it at
import) and they talk to this server. Served: repo info at a revision, tree listings, file
resolution (HEAD/GET, also as evaluate fetches Space files), whoami, repo creation, preupload
and commit (regular uploads; ``create_pr`` makes ``refs/pr/N``), Job creation and the Jobs
hardware list (``hardware``). Writes need a
``Bearer`` token the test registered; a token may write only to its user's and orgs' repos.
A private repo (``private`` at creation) is a 404 to anyone else, as on the Hub.
Repos are in memory; each commit is a full snapshot with a 40-hex sha.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

__all__ = ["FakeHub"]


def git_blob_sha(data: bytes) -> str:
    """The git object id of a file: what the Hub reports as a regular file's ``oid``."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class _Commit:
    sha: str
    files: dict[str, bytes]
    message: str
    description: str = ""


@dataclass
class _Repo:
    owner: str
    sdk: str | None = None
    private: bool = False  # then only its owner's (user's or org members') tokens see it
    commits: dict[str, _Commit] = field(default_factory=dict)
    refs: dict[str, str] = field(default_factory=dict)  # branch or refs/pr/N -> sha

    def resolve(self, revision: str) -> str | None:
        if revision in self.commits:
            return revision
        return self.refs.get(revision)


class FakeHub:
    """A threaded HTTP server on 127.0.0.1 answering like the Hub for the calls above."""

    def __init__(self) -> None:
        self.repos: dict[tuple[str, str], _Repo] = {}
        self.tokens: dict[str, tuple[str, list[str], bool]] = {}  # token -> user, orgs, write
        self.requests: list[str] = []
        self.jobs: list[dict[str, Any]] = []
        # what GET /api/jobs/hardware answers (huggingface_hub's list_jobs_hardware); None: 404
        self.hardware: list[dict[str, Any]] | None = None
        self._lock = threading.Lock()
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                hub._dispatch(self, "GET")

            def do_HEAD(self) -> None:
                hub._dispatch(self, "HEAD")

            def do_POST(self) -> None:
                hub._dispatch(self, "POST")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    # -- test-side helpers ---------------------------------------------------------------------

    def add_token(
        self, token: str, user: str, orgs: tuple[str, ...] = (), write: bool = True
    ) -> None:
        self.tokens[token] = (user, list(orgs), write)

    def add_commit(
        self,
        repo_id: str,
        files: dict[str, bytes],
        *,
        repo_type: str = "dataset",
        message: str = "test commit",
        branch: str = "main",
    ) -> str:
        """Commit ``files`` (the whole tree) to ``repo_id``; return the new commit sha."""
        with self._lock:
            repo = self.repos.setdefault((repo_type, repo_id), _Repo(owner=repo_id.split("/")[0]))
            sha = hashlib.sha1(
                repr((repo_id, len(repo.commits), sorted(files.items()), message)).encode()
            ).hexdigest()
            repo.commits[sha] = _Commit(sha, dict(files), message)
            repo.refs[branch] = sha
            return sha

    def files(
        self, repo_id: str, *, repo_type: str = "model", revision: str = "main"
    ) -> dict[str, bytes]:
        repo = self.repos[(repo_type, repo_id)]
        sha = repo.resolve(revision)
        assert sha is not None, f"{repo_id} has no revision {revision}"
        return dict(repo.commits[sha].files)

    def commit(self, repo_id: str, *, repo_type: str = "model", revision: str = "main") -> _Commit:
        repo = self.repos[(repo_type, repo_id)]
        sha = repo.resolve(revision)
        assert sha is not None
        return repo.commits[sha]

    # -- HTTP plumbing -------------------------------------------------------------------------

    def _send(
        self,
        h: BaseHTTPRequestHandler,
        status: int,
        payload: bytes,
        headers: dict[str, str],
        body: bool,
    ) -> None:
        h.send_response(status)
        for key, value in headers.items():
            h.send_header(key, value)
        h.send_header("Content-Length", str(len(payload)))
        h.end_headers()
        if body:
            h.wfile.write(payload)

    def _json(
        self, h: BaseHTTPRequestHandler, payload: Any, body: bool = True, status: int = 200
    ) -> None:
        self._send(
            h, status, json.dumps(payload).encode(), {"Content-Type": "application/json"}, body
        )

    def _error(
        self, h: BaseHTTPRequestHandler, status: int, code: str, message: str, body: bool = True
    ) -> None:
        headers = {
            "Content-Type": "application/json",
            "X-Error-Code": code,
            "X-Error-Message": message,
        }
        self._send(h, status, json.dumps({"error": message}).encode(), headers, body)

    def _user(self, h: BaseHTTPRequestHandler) -> tuple[str, list[str], bool] | None:
        auth = h.headers.get("Authorization", "")
        return self.tokens.get(auth[7:]) if auth.startswith("Bearer ") else None

    def _may_write(self, h: BaseHTTPRequestHandler, namespace: str) -> bool:
        """Answer 401/403 and return False unless the token may write under ``namespace``."""
        user = self._user(h)
        if user is None:
            self._error(h, 401, "Unauthorized", "Invalid credentials in Authorization header")
            return False
        name, orgs, write = user
        if not write or (namespace != name and namespace not in orgs):
            self._error(h, 403, "Forbidden", f"You don't have the rights to write to {namespace}")
            return False
        return True

    def _dispatch(self, h: BaseHTTPRequestHandler, method: str) -> None:
        parsed = urlparse(h.path)
        path = unquote(parsed.path)
        query = {k: v[-1] for k, v in parse_qs(parsed.query).items()}
        length = int(h.headers.get("Content-Length") or 0)
        data = h.rfile.read(length) if length else b""
        self.requests.append(f"{method} {path}")
        body = method != "HEAD"
        parts = path.strip("/").split("/")
        try:
            if path == "/api/whoami-v2":
                return self._whoami(h)
            if path == "/api/validate-yaml" and method == "POST":
                return self._validate_yaml(h, json.loads(data))
            if path == "/api/repos/create" and method == "POST":
                return self._create_repo(h, json.loads(data))
            if path == "/api/jobs/hardware" and method == "GET":
                if self.hardware is None:
                    return self._error(h, 404, "NotFound", "no hardware list")
                return self._json(h, self.hardware)
            if parts[:2] == ["api", "jobs"] and method == "POST" and len(parts) == 3:
                return self._create_job(h, parts[2], json.loads(data))
            if (
                parts[0] == "api"
                and len(parts) >= 6
                and parts[1] in {"datasets", "models", "spaces"}
            ):
                return self._api(h, method, parts, query, data)
            return self._resolve(h, parts, body)
        except (ValueError, KeyError) as exc:
            return self._error(h, 400, "BadRequest", f"bad request: {exc}")

    # -- endpoints -----------------------------------------------------------------------------

    def _whoami(self, h: BaseHTTPRequestHandler) -> None:
        user = self._user(h)
        if user is None:
            return self._error(
                h, 401, "Unauthorized", "Invalid credentials in Authorization header"
            )
        name, orgs, write = user
        self._json(
            h,
            {
                "type": "user",
                "id": hashlib.sha1(name.encode()).hexdigest()[:24],
                "name": name,
                "orgs": [{"name": org, "type": "org"} for org in orgs],
                "auth": {"accessToken": {"role": "write" if write else "read"}},
            },
        )

    def _validate_yaml(self, h: BaseHTTPRequestHandler, payload: dict[str, Any]) -> None:
        import yaml

        content = str(payload.get("content", ""))
        if content.startswith("---"):
            try:
                yaml.safe_load(content.split("---")[1])
            except yaml.YAMLError as exc:
                return self._json(h, {"errors": [{"message": str(exc)}]}, status=400)
        return self._json(h, {"warnings": [], "errors": []})

    def _create_repo(self, h: BaseHTTPRequestHandler, payload: dict[str, Any]) -> None:
        user = self._user(h)
        namespace = payload.get("organization") or (user[0] if user else "")
        if not self._may_write(h, namespace):
            return None
        repo_type = payload.get("type") or "model"
        repo_id = f"{namespace}/{payload['name']}"
        prefix = "" if repo_type == "model" else f"{repo_type}s/"
        with self._lock:
            if (repo_type, repo_id) in self.repos:  # the Hub names the existing repo's url
                message = "You already created this repo"
                headers = {"Content-Type": "application/json", "X-Error-Message": message}
                body = json.dumps({"error": message, "url": f"{self.url}/{prefix}{repo_id}"})
                return self._send(h, 409, body.encode(), headers, True)
            repo = _Repo(
                owner=namespace,
                sdk=payload.get("sdk"),
                # huggingface_hub 1.x sends visibility; older clients a private flag
                private=payload.get("visibility") == "private" or bool(payload.get("private")),
            )
            sha = hashlib.sha1(f"init {repo_type} {repo_id}".encode()).hexdigest()
            readme = b"" if repo_type != "space" else f"---\nsdk: {repo.sdk}\n---\n".encode()
            repo.commits[sha] = _Commit(
                sha,
                {
                    ".gitattributes": b"*.parquet filter=lfs\n",
                    **({"README.md": readme} if readme else {}),
                },
                "initial commit",
            )
            repo.refs["main"] = sha
            self.repos[(repo_type, repo_id)] = repo
        return self._json(h, {"url": f"{self.url}/{prefix}{repo_id}", "name": repo_id})

    def _create_job(self, h: BaseHTTPRequestHandler, namespace: str, spec: dict[str, Any]) -> None:
        if not self._may_write(h, namespace):
            return None
        job_id = hashlib.sha1(f"{namespace}{len(self.jobs)}".encode()).hexdigest()[:24]
        record = {
            "id": job_id,
            "createdAt": "2026-11-30T00:00:00.000Z",
            "dockerImage": spec.get("dockerImage"),
            "spaceId": spec.get("spaceId"),
            "owner": {"id": "0" * 24, "name": namespace, "type": "user"},
            "command": spec.get("command"),
            "arguments": spec.get("arguments"),
            "environment": spec.get("environment"),
            "secrets": sorted(spec.get("secrets") or {}),  # the Hub never echoes secret values
            "flavor": spec.get("flavor"),
            "labels": spec.get("labels"),
            "status": {"stage": "RUNNING", "message": None},
        }
        self.jobs.append({"spec": spec, "record": record})
        return self._json(h, record)

    def _repo_for(
        self, h: BaseHTTPRequestHandler, repo_type: str, repo_id: str, body: bool = True
    ) -> _Repo | None:
        repo = self.repos.get((repo_type, repo_id))
        if repo is not None and repo.private:
            user = self._user(h)
            if user is None or repo.owner not in (user[0], *user[1]):
                repo = None  # the Hub answers 404 for a private repo you cannot see
        if repo is None:
            self._error(h, 404, "RepoNotFound", f"Repository {repo_id} not found", body)
        return repo

    def _api(
        self,
        h: BaseHTTPRequestHandler,
        method: str,
        parts: list[str],
        query: dict[str, str],
        data: bytes,
    ) -> None:
        repo_type = parts[1][:-1]
        repo_id = "/".join(parts[2:4])
        action = parts[4]
        revision = parts[5]
        if action in {"preupload", "commit"} and method == "POST":
            if not self._may_write(h, repo_id.split("/")[0]):
                return None
        repo = self._repo_for(h, repo_type, repo_id, method != "HEAD")
        if repo is None:
            return None
        sha = repo.resolve(revision)
        if sha is None and action != "commit":
            return self._error(h, 404, "RevisionNotFound", f"Revision {revision} not found")
        if action == "revision":
            files = repo.commits[sha].files if sha else {}
            return self._json(
                h,
                {
                    "id": repo_id,
                    "sha": sha,
                    "private": repo.private,
                    "sdk": repo.sdk,
                    "siblings": [{"rfilename": name} for name in sorted(files)],
                },
            )
        if action == "tree":
            files = repo.commits[sha].files if sha else {}
            prefix = "/".join(parts[6:])
            listed = [
                {"type": "file", "path": name, "size": len(blob), "oid": git_blob_sha(blob)}
                for name, blob in sorted(files.items())
                if not prefix or name.startswith(prefix.rstrip("/") + "/")
            ]
            if prefix and not listed:
                return self._error(h, 404, "EntryNotFound", f"{prefix} not found")
            return self._json(h, listed)
        if action == "preupload":
            files = repo.commits[sha].files if sha else {}
            payload = json.loads(data)
            return self._json(
                h,
                {
                    "files": [
                        {
                            "path": f["path"],
                            "uploadMode": "regular",
                            "shouldIgnore": False,
                            "oid": git_blob_sha(files[f["path"]]) if f["path"] in files else None,
                        }
                        for f in payload["files"]
                    ]
                },
            )
        if action == "commit":
            return self._commit(h, repo, repo_type, repo_id, revision, query, data)
        return self._error(h, 404, "NotFound", f"no route for {action}")

    def _commit(
        self,
        h: BaseHTTPRequestHandler,
        repo: _Repo,
        repo_type: str,
        repo_id: str,
        revision: str,
        query: dict[str, str],
        data: bytes,
    ) -> None:
        lines = [json.loads(line) for line in data.splitlines() if line.strip()]
        header = next(item["value"] for item in lines if item["key"] == "header")
        with self._lock:
            base = repo.resolve(revision)
            if base is None:
                return self._error(h, 404, "RevisionNotFound", f"Revision {revision} not found")
            files = dict(repo.commits[base].files)
            for item in lines:
                value = item["value"]
                if item["key"] == "file":
                    files[value["path"]] = base64.b64decode(value["content"])
                elif item["key"] in {"deletedFile", "deletedFolder"}:
                    for name in [
                        n
                        for n in files
                        if n == value["path"] or n.startswith(value["path"].rstrip("/") + "/")
                    ]:
                        del files[name]
                elif item["key"] == "lfsFile":
                    return self._error(
                        h, 400, "BadRequest", "this fake Hub takes regular uploads only"
                    )
            sha = hashlib.sha1(
                repr((repo_id, base, sorted(files.items()), header["summary"])).encode()
            ).hexdigest()
            repo.commits[sha] = _Commit(
                sha, files, header["summary"], header.get("description", "")
            )
            prefix = "" if repo_type == "model" else f"{repo_type}s/"
            pr_url = None
            if query.get("create_pr") == "1":
                number = 1 + sum(1 for ref in repo.refs if ref.startswith("refs/pr/"))
                repo.refs[f"refs/pr/{number}"] = sha
                pr_url = f"{self.url}/{prefix}{repo_id}/discussions/{number}"
            else:
                repo.refs[revision if revision in repo.refs else "main"] = sha
        return self._json(
            h,
            {
                "success": True,
                "commitOid": sha,
                "commitUrl": f"{self.url}/{prefix}{repo_id}/commit/{sha}",
                "pullRequestUrl": pr_url,
            },
        )

    def _resolve(self, h: BaseHTTPRequestHandler, parts: list[str], body: bool) -> None:
        # /datasets|spaces/{org}/{name}/resolve/{rev}/{path}; models have no prefix.
        offset = 1 if parts[0] in {"datasets", "spaces"} else 0
        if len(parts) < offset + 5 or parts[offset + 2] != "resolve":
            return self._error(h, 404, "NotFound", f"no route for /{'/'.join(parts)}", body)
        repo_type = parts[0][:-1] if offset else "model"
        repo_id = "/".join(parts[offset : offset + 2])
        repo = self._repo_for(h, repo_type, repo_id, body)
        if repo is None:
            return None
        revision = parts[offset + 3]
        rest = parts[offset + 4 :]
        if revision == "refs" and len(rest) >= 2:  # refs/pr/N is one revision
            revision, rest = "/".join([revision, *rest[:2]]), rest[2:]
        sha = repo.resolve(revision)
        if sha is None:
            return self._error(h, 404, "RevisionNotFound", f"Revision {revision} not found", body)
        name = "/".join(rest)
        files = repo.commits[sha].files
        if name not in files:
            return self._error(h, 404, "EntryNotFound", f"{name} not found", body)
        blob = files[name]
        headers = {
            "X-Repo-Commit": sha,
            "ETag": f'"{git_blob_sha(blob)}"',
            "Content-Type": "application/octet-stream",
        }
        return self._send(h, 200, blob, headers, body)
