"""The evaluate modules load offline with evaluate.load and return what the functions return."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from chemteb_eval import scoring

from .conftest import REPO_ROOT

evaluate = pytest.importorskip("evaluate")

MODULES = ["classification", "clustering", "pair_classification", "bitext_mining", "retrieval"]


@pytest.fixture(scope="module")
def modules() -> dict[str, Any]:
    return {name: evaluate.load(str(REPO_ROOT / "metrics" / name)) for name in MODULES}


def _data(seed: int = 0) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    return {
        "x": rng.standard_normal((60, 8)).astype(np.float32),
        "y": rng.standard_normal((60, 8)).astype(np.float32),
        "labels": rng.integers(0, 2, 60),
        "names": np.array(["acid", "base", "salt"])[rng.integers(0, 3, 60)],
    }


def test_each_folder_has_the_module_files() -> None:
    for name in MODULES:
        folder = REPO_ROOT / "metrics" / name
        for f in (f"{name}.py", "README.md", "app.py", "requirements.txt"):
            assert (folder / f).is_file(), f"metrics/{name}/{f} is missing"


def test_classification_module(modules: dict[str, Any]) -> None:
    d = _data()
    got = modules["classification"].compute(
        references=d["names"][40:],
        test_embeddings=d["x"][40:],
        train_embeddings=d["x"][:40],
        train_labels=d["names"][:40],
        n_experiments=3,
    )
    want = scoring.score_classification(
        d["x"][:40], d["names"][:40], d["x"][40:], d["names"][40:], n_experiments=3
    )
    assert got == want
    int_labels = modules["classification"].compute(
        references=d["labels"][40:].tolist(),
        test_embeddings=d["x"][40:],
        train_embeddings=d["x"][:40],
        train_labels=d["labels"][:40],
    )
    assert "ap" in int_labels


def test_clustering_module(modules: dict[str, Any]) -> None:
    d = _data()
    got = modules["clustering"].compute(references=d["names"], embeddings=d["x"], batch_size=16)
    assert got == scoring.score_clustering(d["x"], d["names"], batch_size=16)


def test_pair_classification_module(modules: dict[str, Any]) -> None:
    torch = pytest.importorskip("torch")
    d = _data()
    got = modules["pair_classification"].compute(
        references=d["labels"],
        embeddings1=torch.from_numpy(d["x"]),
        embeddings2=d["y"].tolist(),
        skip_tied_thresholds=True,
    )
    want = scoring.score_pair_classification(d["x"], d["y"], d["labels"], skip_tied_thresholds=True)
    assert got == pytest.approx(want)


def test_bitext_mining_module_with_and_without_gold(modules: dict[str, Any]) -> None:
    d = _data()
    aligned = modules["bitext_mining"].compute(
        source_embeddings=d["x"], target_embeddings=d["x"] + 0.1 * d["y"]
    )
    assert aligned["accuracy"] == 1.0
    gold = np.arange(60)[::-1]
    got = modules["bitext_mining"].compute(
        source_embeddings=d["x"], target_embeddings=d["y"], references=gold.tolist()
    )
    assert got == scoring.score_bitext_mining(d["x"], d["y"], gold)
    with pytest.raises(ValueError, match="references: without gold indices"):
        modules["bitext_mining"].compute(source_embeddings=d["x"], target_embeddings=d["y"][:10])


def test_retrieval_module_with_int_and_string_ids(modules: dict[str, Any]) -> None:
    d = _data()
    qrels = {i: {f"d{(7 * i) % 60}": 1} for i in range(10)}
    kwargs = {
        "query_embeddings": d["x"][:10],
        "corpus_embeddings": d["y"],
        "corpus_ids": [f"d{i}" for i in range(60)],
    }
    got_int = modules["retrieval"].compute(query_ids=list(range(10)), qrels=qrels, **kwargs)
    got_str = modules["retrieval"].compute(
        query_ids=[str(i) for i in range(10)], qrels={str(k): v for k, v in qrels.items()}, **kwargs
    )
    want = scoring.score_retrieval(
        d["x"][:10], d["y"], list(range(10)), kwargs["corpus_ids"], qrels
    )
    assert got_int == got_str == want


def test_module_errors_name_the_argument(modules: dict[str, Any]) -> None:
    d = _data()
    x = d["x"].copy()
    x[4, 2] = np.nan
    with pytest.raises(
        ValueError, match=r"embeddings1: 1 row\(s\) contain NaN or inf, first at row 4"
    ):
        modules["pair_classification"].compute(
            references=d["labels"], embeddings1=x, embeddings2=d["y"]
        )
    with pytest.raises(ValueError, match=r"length mismatch"):
        modules["clustering"].compute(references=d["labels"][:10], embeddings=d["x"])


def test_cards_have_space_front_matter() -> None:
    for name in MODULES:
        text = (REPO_ROOT / "metrics" / name / "README.md").read_text()
        front = text.split("---")[1]
        for key in (
            "title:",
            "emoji:",
            "sdk: gradio",
            "app_file: app.py",
            "- evaluate",
            "- metric",
            "description:",
        ):
            assert key in front, f"metrics/{name}/README.md front matter lacks {key!r}"
        for section in (
            "## Metric Description",
            "## How to Use",
            "## Inputs",
            "## Output Values",
            "## Protocol",
            "## Values from the Paper",
            "## Limitations",
            "## Citation",
        ):
            assert section in text, f"metrics/{name}/README.md lacks {section!r}"


def test_import_scanner_hints_the_right_package() -> None:
    # evaluate reads imports with a regex; a missing chemteb_eval must hint `pip install chemteb-eval`.
    from evaluate.loading import get_imports

    for name in MODULES:
        imports = get_imports(str(REPO_ROOT / "metrics" / name / f"{name}.py"))
        libs = {(lib, hint) for kind, lib, hint, _ in imports if kind == "library"}
        assert ("chemteb_eval", "chemteb-eval") in libs, name
        assert all(hint in (lib, "chemteb-eval") for lib, hint in libs), libs


def test_evaluate_batch_path_equals_direct_path(modules: dict[str, Any]) -> None:
    # add_batch + compute goes through evaluate's own Arrow path; a plain compute skips it.
    d = _data(1)
    module = modules["pair_classification"]
    direct = module.compute(references=d["labels"], embeddings1=d["x"], embeddings2=d["y"])
    for start in range(0, 60, 25):
        module.add_batch(references=d["labels"][start : start + 25].tolist())
    batched = module.compute(embeddings1=d["x"], embeddings2=d["y"])
    assert batched == direct
    clustering = modules["clustering"]
    clustering.add_batch(references=d["names"].tolist())
    assert clustering.compute(embeddings=d["x"]) == clustering.compute(
        references=d["names"], embeddings=d["x"]
    )


def test_missing_or_misplaced_inputs(modules: dict[str, Any]) -> None:
    d = _data()
    with pytest.raises(ValueError, match=r"references: missing"):
        modules["clustering"].compute(embeddings=d["x"])
    with pytest.raises(ValueError, match=r"predictions: this metric scores embeddings"):
        modules["clustering"].compute(predictions=[1, 2], references=[1, 2], embeddings=d["x"][:2])
    with pytest.raises(ValueError, match=r"references: not an input of this metric"):
        modules["retrieval"].compute(references=[1], query_ids=["q"])
