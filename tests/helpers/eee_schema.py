"""Every Eval Ever's ``eval.schema.json`` 0.2.2, as the ``every-eval-ever`` 0.2.3rc1 wheel on
PyPI ships it (the package needs Python 3.12, so the wheel is downloaded, not installed; the
schema is read from it, never copied into this repository). Its md5 is the one of the schema
at the repo's tag v0.2.2 (evaleval/every_eval_ever 411f60b3)."""

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

WHEEL = "every-eval-ever==0.2.3rc1"
SCHEMA = "every_eval_ever/schemas/eval.schema.json"
SCHEMA_MD5 = "7cce4cbd9bf5c3747b951b608a0b7684"
FOLDER = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "chemteb-tests" / "eee"


def eee_schema() -> dict[str, Any]:
    """The schema (downloaded once into ``~/.cache/chemteb-tests/eee``). Without PyPI: a skip
    with the reason on a user's machine, a failure in CI (which installs from PyPI)."""
    wheels = sorted(FOLDER.glob("every_eval_ever-0.2.3rc1-*.whl"))
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
        wheels = sorted(FOLDER.glob("every_eval_ever-0.2.3rc1-*.whl"))
        if done.returncode or not wheels:
            why = f"the EEE schema could not be downloaded from PyPI: {done.stderr.strip()[-300:]}"
            if os.environ.get("CI"):
                pytest.fail(why)
            pytest.skip(why)
    body = zipfile.ZipFile(wheels[0]).read(SCHEMA)
    assert hashlib.md5(body).hexdigest() == SCHEMA_MD5, "not the 0.2.2 schema"
    schema: dict[str, Any] = json.loads(body)
    assert schema["version"] == "0.2.2"
    return schema
