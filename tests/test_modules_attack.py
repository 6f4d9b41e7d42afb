"""What an outside attack on the evaluate modules, their published bundles and the NER schemes
found (issue 26), each fixed and kept fixed: evaluate's ``add_batch`` path scores what
``compute`` scores, a planted link is never published, a bundle evaluate would misread is
refused at publish time. Cost: ~6 s (evaluate imports, a few bundles)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import evaluate
import numpy as np
import pytest

from chemteb_eval.hub.bundle import bundle_space
from tests.conftest import REPO_ROOT

METRICS = REPO_ROOT / "metrics"
E = [[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]]


@pytest.fixture(scope="module")
def load() -> Any:
    cache: dict[str, Any] = {}

    def get(name: str) -> Any:
        if name not in cache:
            cache[name] = evaluate.load(str(METRICS / name))
        return cache[name]

    return get


def test_bitext_gold_added_by_batch_is_the_gold(load: Any) -> None:
    metric = load("bitext_mining")
    src, tgt = np.eye(3), np.eye(3)[[2, 0, 1]]
    gold = [1, 2, 0]  # source i is target gold[i]
    direct = metric.compute(references=gold, source_embeddings=src, target_embeddings=tgt)
    metric.add_batch(references=gold)
    batched = metric.compute(source_embeddings=src, target_embeddings=tgt)
    assert direct["accuracy"] == batched["accuracy"] == 1.0  # was 0.0: scored as if aligned


def test_add_batch_keeps_labels_as_they_are(load: Any) -> None:
    clustering = load("clustering")
    labels = ["1", "1", "01", "01"]  # two clusters; Arrow's int64 merged them into one
    direct = clustering.compute(references=labels, embeddings=E)
    clustering.add_batch(references=labels)
    assert clustering.compute(embeddings=E) == direct and direct["v_measure"] == 1.0
    classification = load("classification")
    args = {"train_embeddings": E, "train_labels": ["0", "0", "1", "1"], "test_embeddings": E}
    classification.add_batch(references=["0", "0", "1", "1"])
    assert classification.compute(**args) == classification.compute(
        references=["0", "0", "1", "1"], **args
    )


@pytest.mark.parametrize(
    "labels, message",
    [
        ([float("nan"), 0, 1, 1], "references: labels must be ints or strings, got float"),
        ([b"x", 0, 1, 1], "references: labels must be ints or strings, got bytes"),
        (["a", 0, 1, 1], "references: labels must be all ints or all strings, got a mix"),
        ([10**30, 0, 1, 1], "references: label 1000000000000000000000000000000 is beyond"),
    ],
)
def test_add_batch_refuses_what_compute_refuses(load: Any, labels: list[Any], message: str) -> None:
    metric = load("clustering")
    with pytest.raises(ValueError, match=message):
        metric.add_batch(references=labels)
    with pytest.raises(ValueError, match=r"^references: "):
        metric.compute(references=labels, embeddings=E)


def test_one_kind_of_label_across_batches_and_no_stray_predictions(load: Any) -> None:
    metric = evaluate.load(str(METRICS / "clustering"))
    metric.add_batch(references=[0, 1])
    with pytest.raises(ValueError, match="this batch's labels are strs, earlier batches' were"):
        metric.add_batch(references=["a", "b"])
    sts = evaluate.load(str(METRICS / "sts"))
    with pytest.raises(ValueError, match=r"^predictions: not a batch input of this metric"):
        sts.add_batch(predictions=[0.9, 0.4], references=[5.0, 2.5])
    sts.add_batch(references=[5.0, 2.5])  # float gold scores are no labels: taken as they are


@pytest.mark.parametrize(
    "name, args, message",
    [
        ("clustering", {"references": [10**30, 0, 1, 1], "embeddings": E}, "^references: a label"),
        ("pair_classification", {"references": [0, 1], "embeddings1": E, "embeddings2": E}, "references has 2"),
        ("bitext_mining", {"references": [2**63, 0, 1, 1], "source_embeddings": E, "target_embeddings": E}, "^references: a label is beyond 64-bit"),
        ("classification", {"references": [], "train_embeddings": E, "train_labels": [0, 0, 1, 1], "test_embeddings": E}, "^references: is empty"),
    ],
)  # fmt: skip
def test_errors_name_the_modules_inputs(
    load: Any, name: str, args: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        load(name).compute(**args)


def _copy(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    shutil.copytree(METRICS / name, folder)
    return folder


def test_a_linked_file_is_never_published(tmp_path: Path) -> None:
    from chemteb_eval.hub.publish import publish_dataset_folder

    secret = tmp_path / "token.txt"
    secret.write_text("hf_planted\n")
    folder = _copy(tmp_path, "ner")
    (folder / "tests.py").unlink()
    (folder / "tests.py").symlink_to(secret)
    with pytest.raises(ValueError, match=r"tests\.py is a link"):
        bundle_space(folder, "ner")
    dataset = tmp_path / "ds"
    (dataset / "data").mkdir(parents=True)
    (dataset / "README.md").write_text("---\nconfigs: []\n---\n")
    (dataset / "data" / "test.parquet").symlink_to(secret)
    with pytest.raises(ValueError, match=r"test\.parquet links outside the folder"):
        publish_dataset_folder(dataset, "alice/ds", dry_run=True, log=lambda m: None)
    (dataset / "data" / "test.parquet").unlink()
    (dataset / "real.parquet").write_bytes(b"PAR1")
    (dataset / "data" / "test.parquet").symlink_to(dataset / "real.parquet")  # inside: fine
    publish_dataset_folder(dataset, "alice/ds", dry_run=True, log=lambda m: None)


def test_a_wrapped_import_still_bundles_a_working_module(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "ner")
    script = folder / "ner.py"
    text = script.read_text()
    one_line = next(line for line in text.splitlines() if "scoring.ner import" in line)
    module, names = one_line.split(" import ", 1)
    names = names.split("#")[0].strip()
    wrapped = f"{module} import (\n    " + ",\n    ".join(names.split(", ")) + ",\n)"
    script.write_text(text.replace(one_line, wrapped))
    bundle = bundle_space(folder, "ner")
    out = tmp_path / "out" / "ner"
    out.mkdir(parents=True)
    for path, body in bundle.files.items():
        (out / path).write_text(body)
    loaded = evaluate.load(str(out / "ner.py"))
    assert loaded.description == evaluate.load(str(METRICS / "ner")).description  # untouched
    tags = [["B-Chemical", "I-Chemical", "O"]]
    assert loaded.compute(predictions=tags, references=tags)["overall_f1"] == 1.0


@pytest.mark.parametrize(
    "line, message",
    [
        ('importlib.import_module("chemteb_eval.scoring.ner")', "imports chemteb_eval.scoring.ner by name"),
        ('__import__("chemteb_eval.scoring")', "imports chemteb_eval.scoring by name"),
    ],
)  # fmt: skip
def test_imports_a_bundle_cannot_rewrite_are_refused(
    tmp_path: Path, line: str, message: str
) -> None:
    folder = _copy(tmp_path, "ner")
    script = folder / "ner.py"
    script.write_text(script.read_text() + f"\nimport importlib\n_x = {line}\n")
    with pytest.raises(ValueError, match=message):
        bundle_space(folder, "ner")


def test_a_from_comment_evaluate_would_follow_is_refused(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "ner")
    script = folder / "ner.py"
    text = script.read_text()
    line = next(x for x in text.splitlines() if x.startswith("from chemteb_eval.scoring.ner"))
    statement = line.split("#")[0].rstrip()
    script.write_text(text.replace(line, f"{statement}; import json  # From: http://x/evil.py"))
    with pytest.raises(ValueError, match=r"evaluate would read the generated module wrongly"):
        bundle_space(folder, "ner")


def test_requirements_with_comments_and_bad_lines(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "sts")
    (folder / "requirements.txt").write_text("chemteb-eval\nevaluate==0.4.6  # pinned\n")
    assert "evaluate==0.4.6" in bundle_space(folder, "sts").files["requirements.txt"]
    (folder / "requirements.txt").write_text("gradio>=6,<7\nnot a requirement!\n")
    with pytest.raises(ValueError, match=r"requirements\.txt: line 2: not a requirement"):
        bundle_space(folder, "sts")


def test_two_modules_one_file_name_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from chemteb_eval.hub import bundle

    monkeypatch.setattr(bundle, "flat_name", lambda module: "chemteb_same")
    with pytest.raises(ValueError, match="two bundled modules would share a file name"):
        bundle.bundle_space(METRICS / "sts", "sts")


@pytest.mark.parametrize("beta", [3.0, float("inf"), 0.5, 2.0])
def test_ner_fbeta_is_seqeval_to_the_last_bit(beta: float) -> None:
    from seqeval.metrics import classification_report

    from chemteb_eval.scoring.ner import score_ner

    gold = [["B-A", "O", "B-A", "O", "B-A"]]
    pred = [["B-A", "O", "O", "O", "O"]]  # p = 1, r = 1/3
    ours = score_ner(pred, gold, beta=beta)
    report = classification_report(gold, pred, output_dict=True, zero_division=0)
    p, r = 1.0, 1 / 3
    expected = r if beta == float("inf") else (1 + beta**2) * p * r / (beta**2 * p + r)
    assert ours["overall_f1"] == expected
    assert report["micro avg"]["recall"] == ours["overall_recall"]
