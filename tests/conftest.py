from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

# evaluate and huggingface_hub must never reach for the network in the tests.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

REPO_ROOT = Path(__file__).resolve().parents[1]
# ONNX exports go to one folder per test session (each model exported once per session, never
# into the user's cache), whatever CHEMTEB_CACHE a test sets.
if "CHEMTEB_ONNX_DIR" not in os.environ:
    import atexit
    import shutil
    import tempfile

    os.environ["CHEMTEB_ONNX_DIR"] = tempfile.mkdtemp(prefix="chemteb-onnx-tests-")
    atexit.register(shutil.rmtree, os.environ["CHEMTEB_ONNX_DIR"], ignore_errors=True)
SHARED = REPO_ROOT.parent / "shared"


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


@pytest.fixture
def shared_dir() -> Path:
    if not (SHARED / "reference").is_dir():
        pytest.skip(
            f"../shared is absent ({SHARED}); this test reads its reference results or data "
            "(paper results, ChemBench questions, STS benchmark, ChEBI-20)"
        )
    return SHARED


@pytest.fixture(scope="module")
def small_suite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A private chemteb cache with the small PipChem build, for the module's tests."""
    root = tmp_path_factory.mktemp("cache")
    saved = {k: os.environ.get(k) for k in ("CHEMTEB_CACHE", "CHEMTEB_PIPCHEM_SCALE")}
    os.environ["CHEMTEB_CACHE"] = str(root)
    os.environ["CHEMTEB_PIPCHEM_SCALE"] = "small"
    yield root
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
