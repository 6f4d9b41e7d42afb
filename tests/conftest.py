from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

# evaluate and huggingface_hub must never reach for the network in the tests.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

REPO_ROOT = Path(__file__).resolve().parents[1]
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
