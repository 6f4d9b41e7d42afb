"""Every Eval Ever's schemas 0.3.0, as the ``every-eval-ever`` 0.3.0 wheel on PyPI ships them
(the package needs Python 3.12, so the wheel is downloaded, not installed; the schemas are read
from it, never copied into this repository): ``eval.schema.json`` (the aggregate record) and
``instance_level_eval.schema.json`` (each line of a record's per-item sidecar). Each is pinned
by its md5 in that wheel (published 2026-09-27)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

VERSION = "0.3.0"
WHEEL = f"every-eval-ever=={VERSION}"
SCHEMAS = {
    "eval": ("every_eval_ever/schemas/eval.schema.json", "da5f062b5d784f7cae93d15c9b9f95b6"),
    "instance": (
        "every_eval_ever/schemas/instance_level_eval.schema.json",
        "7b895132cf6a10640265e0eadf224775",
    ),
}
FOLDER = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "chemteb-tests" / "eee"


def _wheel() -> Path:
    """The 0.3.0 wheel (downloaded once into ``~/.cache/chemteb-tests/eee``). Without PyPI: a
    skip with the reason on a user's machine, a failure in CI (which installs from PyPI)."""
    pattern = f"every_eval_ever-{VERSION}-*.whl"
    wheels = sorted(FOLDER.glob(pattern))
    if not wheels:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                WHEEL,
                "--no-deps",
                "--only-binary=:all:",
                "--python-version",
                "3.12",
                "-d",
                str(FOLDER),
                "-q",
            ],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        wheels = sorted(FOLDER.glob(pattern))
        if done.returncode or not wheels:
            why = f"the EEE schema could not be downloaded from PyPI: {done.stderr.strip()[-300:]}"
            if os.environ.get("CI"):
                pytest.fail(why)
            pytest.skip(why)
    return wheels[0]


def eee_schema(kind: str = "eval") -> dict[str, Any]:
    """The 0.3.0 schema of ``kind``: ``eval`` (an aggregate record) or ``instance`` (a line of
    its per-item sidecar)."""
    member, md5 = SCHEMAS[kind]
    body = zipfile.ZipFile(_wheel()).read(member)
    assert hashlib.md5(body).hexdigest() == md5, f"not the {VERSION} {kind} schema"
    schema: dict[str, Any] = json.loads(body)
    assert schema["version"] == VERSION
    return schema


def eee_package(module: str) -> Any:
    """A module of the 0.3.0 wheel (its pure helpers import on Python 3.11), unpacked once
    beside the wheel and imported from there, never copied into this repository."""
    import importlib

    wheel = _wheel()
    root = FOLDER / wheel.stem
    if not (root / "every_eval_ever").is_dir():
        zipfile.ZipFile(wheel).extractall(root)
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    return importlib.import_module(module)
