"""The cards' "Values from the Paper" tables agree with the paper's raw result files in ../shared."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from .conftest import REPO_ROOT

RESULT_DIRS = {
    "all-MiniLM-L6-v2": "all-MiniLM-L6-v2",
    "BAAI/bge-base-en-v1.5": "BAAI__bge-base-en-v1.5",
    "nomic-embed-text-v1.5": "nomic-ai__nomic-embed-text-v1.5",
    "text-embedding-3-large": "text-embedding-3-large",
    "SciBERT": "allenai__scibert_scivocab_uncased",
}


@pytest.mark.parametrize(
    "name", ["classification", "clustering", "pair_classification", "bitext_mining", "retrieval"]
)
def test_card_values_match_paper_results(name: str, shared_dir: Path) -> None:
    card = (REPO_ROOT / "metrics" / name / "README.md").read_text()
    header = re.search(r"\| model \| `(\w+)` on (\w+) \|", card)
    assert header, f"metrics/{name}/README.md has no paper-values table"
    metric, task = header.groups()
    rows = re.findall(r"^\| ([^|]+?) \| ([0-9.]+) \|$", card, flags=re.MULTILINE)
    assert len(rows) == len(RESULT_DIRS)
    for model, value in rows:
        (path,) = (shared_dir / "reference" / "paper_results" / RESULT_DIRS[model]).glob(
            f"*/{task}.json"
        )
        scores = json.loads(path.read_text())["scores"]["test"][0]
        assert float(value) == pytest.approx(scores[metric], abs=5e-5), (model, task)
