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


# -- compute's arguments: explicit, with the functions' defaults -------------------------------

#: A module argument named other than the function's keyword.
RENAMED = {"chembench": {"prompt_mode": "mode"}}


@pytest.fixture(scope="module")
def all_modules() -> dict[str, Any]:
    from chemteb_eval.metric_docs import METRIC_NAMES

    return {name: evaluate.load(str(REPO_ROOT / "metrics" / name)) for name in METRIC_NAMES}


def test_compute_takes_every_keyword_of_the_function_with_its_default(
    all_modules: dict[str, Any],
) -> None:
    import ast
    import inspect

    from chemteb_eval.metric_docs import METRICS, keyword_defaults

    for metric in METRICS:
        defaults = keyword_defaults(metric.load_function())
        params = inspect.signature(all_modules[metric.name]._compute).parameters
        renamed = RENAMED.get(metric.name, {})
        taken = {renamed.get(n, n): p for n, p in params.items() if renamed.get(n, n) in defaults}
        assert set(taken) == set(defaults), f"{metric.name}: {set(defaults) ^ set(taken)}"
        for name, p in taken.items():
            assert p.default is defaults[name], f"{metric.name}.{name}"
        # ...and the module restates none: each default is written DEFAULTS["<the keyword>"].
        tree = ast.parse((REPO_ROOT / "metrics" / metric.name / f"{metric.name}.py").read_text())
        func = next(
            f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name == "_compute"
        )
        args = func.args.args[len(func.args.args) - len(func.args.defaults) :]
        written = {
            renamed.get(a.arg, a.arg): ast.unparse(d)
            for a, d in zip(args, func.args.defaults, strict=True)
        }
        for name in defaults:
            assert written[name] == f"DEFAULTS['{name}']", f"{metric.name}: {written[name]}"


def test_an_unknown_keyword_is_a_value_error_naming_it(all_modules: dict[str, Any]) -> None:
    d = _data()
    for name, module in all_modules.items():
        with pytest.raises(
            ValueError, match=r"^n_experimentz: not an argument of this metric; "
        ) as err:
            module.compute(n_experimentz=3)
        listed = str(err.value).split("it takes ")[1].rstrip(".").split(", ")
        assert "n_experimentz" not in listed and "aligned" not in listed, name
        assert set(RENAMED.get(name, {})) <= set(listed), name
    # The list is what the metric takes, in order, so a caller can correct the name.
    with pytest.raises(
        ValueError,
        match=r"^seeds: not an argument of this metric; it takes references, embeddings, "
        r"batch_size, seed, n_clusters, return_items\.$",
    ):
        all_modules["clustering"].compute(references=d["labels"], embeddings=d["x"], seeds=1)
    with pytest.raises(ValueError, match=r"^mode: not an argument .*prompt_mode"):
        all_modules["chembench"].compute(predictions=["A"], references=["{}"], mode="completion")
    with pytest.raises(ValueError, match=r"^aligned: not an argument"):
        all_modules["bitext_mining"].compute(
            source_embeddings=d["x"], target_embeddings=d["y"], aligned=True
        )
    with pytest.raises(
        ValueError, match=r"^betta: not an argument .*predictions, references, beta"
    ):
        all_modules["ner"].compute(predictions=[["O"]], references=[["O"]], betta=2.0)
    with pytest.raises(ValueError, match=r"^oov: not an argument .*references, predictions, embed"):
        all_modules["sts"].compute(references=[1.0, 2.0], predictions=[1.0, 2.0], oov="drop")
    with pytest.raises(ValueError, match=r"^similarities: the same input as predictions"):
        all_modules["sts"].compute(references=[1, 2], predictions=[1, 2], similarities=[1, 2])
    # evaluate's own path (batches added first) names it too, instead of a TypeError.
    module = all_modules["pair_classification"]
    module.add_batch(references=d["labels"].tolist())
    with pytest.raises(ValueError, match=r"^skip_tied: not an argument"):
        module.compute(embeddings1=d["x"], embeddings2=d["y"], skip_tied=True)
    # the refused call left the batch in place
    assert module.compute(embeddings1=d["x"], embeddings2=d["y"]) == pytest.approx(
        scoring.score_pair_classification(d["x"], d["y"], d["labels"])
    )


def test_return_items_still_reaches_the_function(all_modules: dict[str, Any]) -> None:
    d = _data()
    got = all_modules["clustering"].compute(
        references=d["names"], embeddings=d["x"], return_items=True
    )
    want = scoring.score_clustering(d["x"], d["names"], return_items=True)
    assert "items" in got and set(got) == set(want)
    assert {k: v for k, v in got.items() if k != "items"} == {
        k: v for k, v in want.items() if k != "items"
    }
