"""The content fingerprint a local task writes as its ``dataset_revision``: stable for the same
data, different for any other, and never mistaken for a Hub commit. Cost: <1 s."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from chemteb_eval.data.fingerprint import _CHUNK, data_fingerprint
from chemteb_eval.data.types import (
    ClassificationData,
    PairClassificationData,
    RetrievalData,
)
from chemteb_eval.tasks import benchmark_tasks, get_benchmark


def _pairs(s1: list[str], s2: list[str], labels: list[Any]) -> dict:
    return {"default": {"test": PairClassificationData(s1, s2, labels)}}


def test_hand_checked_properties() -> None:
    base = _pairs(["CCO", "C"], ["ethanol", "methane"], [1, 1])
    value = data_fingerprint(base)
    assert value.startswith("sha256:") and len(value) == len("sha256:") + 16
    int(value.split(":")[1], 16)  # hex
    assert data_fingerprint(_pairs(["CCO", "C"], ["ethanol", "methane"], [1, 1])) == value
    # one character, one label, the order, the split or subset name: another fingerprint
    others = [
        _pairs(["CCO", "C"], ["ethanol", "methanE"], [1, 1]),
        _pairs(["CCO", "C"], ["ethanol", "methane"], [1, 0]),
        _pairs(["C", "CCO"], ["methane", "ethanol"], [1, 1]),
        {"default": {"dev": base["default"]["test"]}},
        {"other": base["default"]},
        _pairs(["CCO", "C"], ["ethanol", "methane"], ["1", "1"]),  # labels of another type
        _pairs(["CCOC"], ["ethanol" + "methane"], [1]),  # no boundary games
    ]
    assert len({value, *(data_fingerprint(o) for o in others)}) == len(others) + 1
    # numpy labels and the ints they hold are the same data
    numpy_labels = _pairs(["CCO", "C"], ["ethanol", "methane"], list(np.array([1, 1])))
    assert data_fingerprint(numpy_labels) == value


def test_mappings_are_read_in_key_order_and_probe_options_count() -> None:
    a = RetrievalData(["d1", "d2"], ["x", "y"], ["q"], ["z"], {"q": {"d1": 1, "d2": 0}})
    b = RetrievalData(["d1", "d2"], ["x", "y"], ["q"], ["z"], {"q": {"d2": 0, "d1": 1}})
    assert data_fingerprint({"default": {"test": a}}) == data_fingerprint({"default": {"test": b}})
    c = ClassificationData(["a"], [0], ["b"], [0])
    d = replace(c, probe=MappingProxyType({"full_train": True}))
    assert data_fingerprint({"default": {"test": c}}) != data_fingerprint({"default": {"test": d}})


def test_long_lists_cross_chunk_boundaries() -> None:
    texts = [f"t{i}" for i in range(_CHUNK * 2 + 5)]
    labels = [i % 2 for i in range(len(texts))]
    base = data_fingerprint(_pairs(texts, texts, labels))
    for i in (0, _CHUNK - 1, _CHUNK, len(texts) - 1):
        changed = list(texts)
        changed[i] += "!"
        assert data_fingerprint(_pairs(changed, texts, labels)) != base


def test_lone_surrogates_and_odd_text_are_hashed_not_raised() -> None:
    assert data_fingerprint(_pairs(["\ud800", "\x00"], ["é", "\U0001f600"], [0, 1]))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.text(), st.text(), st.integers(0, 1)), min_size=1, max_size=20),
    st.integers(0, 19),
)
def test_any_single_edit_changes_it(rows: list[tuple[str, str, int]], at: int) -> None:
    s1, s2, labels = (list(x) for x in zip(*rows, strict=True))
    base = data_fingerprint(_pairs(s1, s2, labels))
    assert data_fingerprint(_pairs(list(s1), list(s2), list(labels))) == base
    i = at % len(s1)
    edited = list(s1)
    edited[i] = edited[i] + "x"
    assert data_fingerprint(_pairs(edited, s2, labels)) != base


def test_local_task_records_accept_fingerprints_only() -> None:
    task = benchmark_tasks(get_benchmark("PipChem"))[0]
    assert task.revision is None
    assert task.revision_status(None) == "pinned"  # files from before fingerprints
    assert task.revision_status("sha256:0123456789abcdef") == "pinned"
    assert task.revision_status("0" * 40) == "unknown"  # a Hub commit names other data
    for odd in ("sha256:", "sha256:xyz", "sha256:0123456789ABCDEF", "sha256:0123456789abcdef0"):
        assert task.revision_status(odd) == "unknown", odd
    hub_task = benchmark_tasks(get_benchmark("ChemTEB"))[0]
    assert hub_task.revision_status("sha256:0123456789abcdef") == "unknown"


def test_models_scored_on_other_local_data_are_noted(tmp_path: Path) -> None:
    import json

    from chemteb_eval.results.board import read_results

    bench = get_benchmark("PipChem")
    task = benchmark_tasks(bench)[0]
    entry = {"main_score": 0.5, task.main_score: 0.5, "hf_subset": "default"}
    one, two = "sha256:" + "1" * 16, "sha256:" + "2" * 16
    for model, revision in (("a", one), ("b", one), ("c", two), ("d", None)):
        folder = tmp_path / f"org__{model}" / "rev"
        folder.mkdir(parents=True)
        scores = {split: [entry] for split in task.eval_splits}
        payload = {"task_name": task.name, "dataset_revision": revision, "scores": scores}
        (folder / f"{task.name}.json").write_text(json.dumps(payload))
    models = {m.model: m for m in read_results([tmp_path], bench)}
    assert all(m.scores[task.name] == 0.5 for m in models.values())  # kept on the board
    (note,) = models["org/c"].notes
    assert note.startswith(f"{task.name}: org/c was scored on other data ({two}) than 2")
    assert not models["org/a"].notes and not models["org/b"].notes
    assert not models["org/d"].notes  # a file from before fingerprints names no data


def _local_results(root: Path, model: str, revisions: dict[str, str | None]) -> Path:
    import json

    for task in benchmark_tasks(get_benchmark("PipChem")):
        if task.name not in revisions:
            continue
        entry = {"main_score": 0.5, task.main_score: 0.5, "hf_subset": "default"}
        folder = root / f"org__{model}" / "rev"
        folder.mkdir(parents=True, exist_ok=True)
        scores = {split: [entry] for split in task.eval_splits}
        payload = {"task_name": task.name, "dataset_revision": revisions[task.name]}
        (folder / f"{task.name}.json").write_text(json.dumps({**payload, "scores": scores}))
    return root / f"org__{model}"


def test_compare_leaves_out_tasks_scored_on_other_data(tmp_path: Path) -> None:
    from chemteb_eval.results.compare import compare_models, load_model

    bench = get_benchmark("PipChem")
    names = [t.name for t in benchmark_tasks(bench)][:4]
    one, two = "sha256:" + "1" * 16, "sha256:" + "2" * 16
    a = _local_results(tmp_path, "a", dict.fromkeys(names, one))
    b = _local_results(tmp_path, "b", {**dict.fromkeys(names[:2], one), names[2]: two})
    result = compare_models(load_model(a, bench), load_model(b, bench), bench)
    assert [t.task for t in result.tasks] == names[:2]
    assert result.left_out == (f"{names[2]}: A and B scored different data ({one} vs {two})",)


def test_a_tie_between_versions_tells_every_model(tmp_path: Path) -> None:
    from chemteb_eval.results.board import read_results

    bench = get_benchmark("PipChem")
    name = benchmark_tasks(bench)[0].name
    _local_results(tmp_path, "a", {name: "sha256:" + "1" * 16})
    _local_results(tmp_path, "b", {name: "sha256:" + "2" * 16})
    models = read_results([tmp_path], bench)
    assert all(len(m.notes) == 1 and "2 different versions" in m.notes[0] for m in models)
