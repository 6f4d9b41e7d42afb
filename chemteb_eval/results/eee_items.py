"""A task's per-item evidence as Every Eval Ever 0.3.0 instance records (issue 49): one line
of ``instance_level_eval.schema.json`` per scored item, the same mapping for every task type
(docs/eee.md has the table). EEE maps LLM answers; for embeddings, "the answer" is what the
evaluator read off the vectors:

- retrieval: a query; its score is its main-metric value (nDCG@10), correct when a relevant
  document is among the top 10 (its recall@10 above 0); answer read by ``ranking``;
- pair classification: a pair; its score is its similarity under the function that won the
  main score, correct when its side of that function's chosen threshold agrees with its label;
- classification: a test text; its score is the share of the probe's experiments that gave
  its gold label, correct when most did;
- clustering: a text; correct (score 1) when its k-means cluster's most common label is its
  own;
- bitext mining: a source; correct (score 1) when its nearest target is its gold one.

Every line also carries, in ``metadata`` (strings, as EEE wants), the evidence arrays' values
for the item, so that a reader can rebuild the evidence exactly and resample it (``rank``'s
intervals from EEE folders). The input names the item by id; texts are not copied (a
dataset's licence is not ours to extend).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["INSTANCE_SCHEMA_VERSION", "evidence_of", "instance_lines"]

INSTANCE_SCHEMA_VERSION = "0.3.0"

Item = tuple[str, str, list[str], list[str], float, bool, str, dict[str, str]]
# (sample_id, raw input, reference, output, score, is_correct, extraction method, metadata)


def _number(value: Any) -> str:
    """A value as ``metadata`` holds it: the shortest string that reads back to it."""
    return repr(float(value)) if isinstance(value, (float, np.floating)) else str(value)


def _retrieval(items: Mapping[str, Any], key: str, split: str) -> list[Item]:
    ids = items.get("query_ids")
    values, hits = items[key], items.get("recall_at_10")
    # the metrics the run wrote per query; an array of another length (not the checked
    # layout's) is no query's value and is left out, never indexed
    arrays = {
        n: a
        for n, a in items.items()
        if n != "query_ids" and getattr(a, "shape", None) == (len(values),)
    }
    out: list[Item] = []
    for i, value in enumerate(values):
        found = bool(hits[i] > 0) if hits is not None else bool(value > 0)
        meta = {n: _number(a[i]) for n, a in arrays.items()}
        # a row as every type's (the evidence's order is the resamples'), its query by id
        said = f"query {i} ({split})"
        if ids is not None:
            meta["query_id"] = str(ids[i])
            said = f"query {ids[i]} ({split})"
        out.append((f"{split}/{i}", said, [], [], float(value), found, "ranking", meta))
    return out


def _classification(items: Mapping[str, Any], key: str, split: str) -> list[Item]:
    y_true, y_pred = items["y_true"], items["y_pred"]
    out = []
    for i, gold in enumerate(y_true):
        answers = [str(p) for p in y_pred[:, i]]
        share = float(np.mean(y_pred[:, i] == gold))
        meta = {"y_true": str(gold), "y_pred": json.dumps(answers)}
        out.append(
            (f"{split}/{i}", f"test text {i} ({split})", [str(gold)], answers, share,
             share > 0.5, "logistic_regression_probe", meta)
        )  # fmt: skip
    return out


def _matched(
    split: str, what: str, names: tuple[str, str], pairs: list[tuple[Any, Any, bool]], method: str
) -> list[Item]:
    """Items that are right or wrong (score 1 or 0): each its gold value, the value the
    evaluator found, and whether that is right; ``names``: the two evidence arrays."""
    return [
        (f"{split}/{i}", f"{what} {i} ({split})", [str(gold)], [str(found)], float(right),
         bool(right), method, {names[0]: str(gold), names[1]: str(found)})
        for i, (gold, found, right) in enumerate(pairs)
    ]  # fmt: skip


def _clustering(items: Mapping[str, Any], key: str, split: str) -> list[Item]:
    labels, clusters = items["labels"], items["clusters"]
    majority = {}
    for cluster in np.unique(clusters):
        # the most common label of the cluster; ties by the label's order (deterministic)
        counts = Counter(labels[clusters == cluster].tolist())
        majority[cluster.item()] = min(counts, key=lambda y: (-counts[y], str(y)))
    found = zip(labels.tolist(), clusters.tolist(), strict=True)
    pairs = [(label, cluster, majority[cluster] == label) for label, cluster in found]
    return _matched(split, "text", ("labels", "clusters"), pairs, "k_means_cluster")


def _bitext(items: Mapping[str, Any], key: str, split: str) -> list[Item]:
    found = zip(items["y_true"].tolist(), items["y_pred"].tolist(), strict=True)
    pairs = [(gold, match, gold == match) for gold, match in found]
    return _matched(split, "source", ("y_true", "y_pred"), pairs, "nearest_neighbour")


def _pairs(items: Mapping[str, Any], key: str, split: str) -> list[Item]:
    from chemteb_eval.scoring.pair_classification import (
        SIMILARITY_FUNCTIONS,
        best_threshold_metrics,
    )

    labels = np.asarray(items["labels"]).astype(np.int64)
    prefix, _, metric = key.partition("_")  # max_f1: every function; cosine_f1: cosine's
    functions = [(n, h) for n, h in SIMILARITY_FUNCTIONS if prefix in ("max", n)]
    sweeps = {n: (h, best_threshold_metrics(np.asarray(items[n]), labels, h)) for n, h in functions}
    # the function that won the main score (the first of equals, in the functions' order)
    name = max(sweeps, key=lambda n: sweeps[n][1][metric])
    higher, found = sweeps[name]
    threshold = found["accuracy_threshold" if metric == "accuracy" else "f1_threshold"]
    scores = np.asarray(items[name])
    out = []
    for i, (label, score) in enumerate(zip(labels.tolist(), scores.tolist(), strict=True)):
        said = score >= threshold if higher else score <= threshold
        meta = {n: _number(items[n][i]) for n, _ in SIMILARITY_FUNCTIONS}
        meta |= {"labels": str(label), "function": name, "threshold": _number(threshold)}
        out.append(
            (f"{split}/{i}", f"pair {i} ({split})", [str(label)], [_number(score)], float(score),
             bool(said) == bool(label), f"{name}_threshold", meta)
        )  # fmt: skip
    return out


# -- back: the lines' metadata as the evidence arrays (``evidence_of``) ------------------------

Lines = Sequence[tuple[str, Mapping[str, str]]]  # (sample_id, metadata), in the sidecar's order
_WHOLE = re.compile(r"0|-?[1-9][0-9]{0,17}")  # an int64 written by str(), and no other spelling


def _values(lines: Lines, name: str) -> list[str]:
    try:
        return [meta[name] for _, meta in lines]
    except KeyError:
        sample = next(s for s, meta in lines if name not in meta)
        raise ValueError(f"sample {sample!r} has no {name!r} in its metadata") from None


def _labels(values: list[str]) -> NDArray[Any]:
    """Labels as the run wrote them: whole numbers (``str`` of an int) back as int64, anything
    else as text; equality, all a label's scorer asks of it, is kept either way."""
    if all(_WHOLE.fullmatch(v) for v in values):
        return np.array([int(v) for v in values], dtype=np.int64)
    return np.array(values, dtype=str)


def _floats(values: list[str], name: str) -> NDArray[np.float64]:
    try:
        return np.array([float(v) for v in values], dtype=np.float64)
    except ValueError:
        raise ValueError(f"{name!r} holds a value that is not a number") from None


def _retrieval_back(lines: Lines, key: str) -> dict[str, NDArray[Any]]:
    """The main metric's values and the query ids (``compare`` pairs two models' queries by
    them), and every other per-query metric the lines carry, so that an export of what was
    read back writes the same lines."""
    lines = _in_order(lines)
    out: dict[str, NDArray[Any]] = {key: _floats(_values(lines, key), key)}
    names = set.intersection(*(set(meta) for _, meta in lines)) - {key, "query_id", *_OWN}
    for name in sorted(names):
        with contextlib.suppress(ValueError):  # not a number: no metric of ours
            out[name] = _floats(_values(lines, name), name)
    if all("query_id" in meta for _, meta in lines):
        out["query_ids"] = np.array(_values(lines, "query_id"), dtype=str)
    return out


_OWN = ("task_type", "main_score")  # what every line's metadata says besides its evidence
_INDEXED = re.compile(r".+/(0|[1-9][0-9]{0,9})")


def _in_order(lines: Lines) -> Lines:
    """Items in their evidence's order (a resample draws rows by position): by the index each
    ``sample_id`` (``<split>/<i>``) names, whatever the order of the lines; ``ValueError``
    unless the indices are 0 to n-1, each once."""
    at: dict[int, tuple[str, Mapping[str, str]]] = {}
    for sample, meta in lines:
        found = _INDEXED.fullmatch(sample)
        if found is None:
            raise ValueError(f"sample {sample!r} names no row (<split>/<index>)")
        at[int(found.group(1))] = (sample, meta)
    if sorted(at) != list(range(len(lines))):
        raise ValueError(f"the samples' indices are not 0 to {len(lines) - 1}, each once")
    return [at[i] for i in range(len(lines))]


def _classification_back(lines: Lines, key: str) -> dict[str, NDArray[Any]]:
    lines = _in_order(lines)
    answers = []
    for sample, text in zip((s for s, _ in lines), _values(lines, "y_pred"), strict=True):
        try:
            found = json.loads(text)
        except ValueError:
            found = None
        if not isinstance(found, list) or not all(isinstance(a, str) for a in found):
            raise ValueError(f"sample {sample!r}: 'y_pred' is not a JSON list of labels")
        answers.append(found)
    if len({len(a) for a in answers}) > 1:
        raise ValueError("the samples' 'y_pred' hold different numbers of experiments")
    y_true = _labels(_values(lines, "y_true"))
    flat = _labels([a for row in answers for a in row])  # one spelling rule for all of them
    if y_true.dtype.kind != flat.dtype.kind:  # one side all whole numbers, the other not
        y_true, flat = y_true.astype(str), flat.astype(str)
    return {"y_true": y_true, "y_pred": flat.reshape(len(answers), -1).T.copy()}


def _two_labels(first: str, second: str) -> Callable[[Lines, str], dict[str, NDArray[Any]]]:
    def back(lines: Lines, key: str) -> dict[str, NDArray[Any]]:
        lines = _in_order(lines)
        return {name: _labels(_values(lines, name)) for name in (first, second)}

    return back


def _pairs_back(lines: Lines, key: str) -> dict[str, NDArray[Any]]:
    from chemteb_eval.scoring.pair_classification import SIMILARITY_FUNCTIONS

    lines = _in_order(lines)
    out = {"labels": _floats(_values(lines, "labels"), "labels")}
    out |= {n: _floats(_values(lines, n), n) for n, _ in SIMILARITY_FUNCTIONS}
    return out


# Each task type's mapping both ways: its evidence as instance records, and the records'
# metadata back as the evidence (docs/eee.md's table).
_BY_TYPE: Mapping[
    str,
    tuple[
        Callable[[Mapping[str, Any], str, str], list[Item]],
        Callable[[Lines, str], dict[str, NDArray[Any]]],
    ],
] = {
    "Retrieval": (_retrieval, _retrieval_back),
    "Classification": (_classification, _classification_back),
    "Clustering": (_clustering, _two_labels("labels", "clusters")),
    "BitextMining": (_bitext, _two_labels("y_true", "y_pred")),
    "PairClassification": (_pairs, _pairs_back),
}


def evidence_of(task_type: str, key: str, lines: Lines, split: str) -> dict[str, NDArray[Any]]:
    """A task's evidence arrays rebuilt from its instance records' ``metadata``: what
    ``instance_lines`` wrote, or anyone's records that follow the mapping, every line a row of
    ``split`` (``<split>/<row>``). Unchecked, as an items file's arrays are:
    ``evidence.check_evidence`` checks them against the record's score.

    Raises:
        ValueError: the type has no mapping, a sample is of another split, or a sample lacks
            a value (naming it).
    """
    mapping = _BY_TYPE.get(task_type)
    if mapping is None:
        raise ValueError(f"no per-item mapping for {task_type} tasks")
    if not lines:
        raise ValueError("no samples")
    other = next((s for s, _ in lines if s.rpartition("/")[0] != split), None)
    if other is not None:
        raise ValueError(f"sample {other!r} is not of the split {split!r} the record scored")
    return mapping[1](lines, key)


def instance_lines(
    task_type: str,
    items: Mapping[str, Any],
    key: str,
    split: str,
    *,
    task: str,
    evaluation_id: str,
    model_id: str,
    result_id: str,
) -> list[dict[str, Any]]:
    """A task's instance records from its checked evidence ``items`` (``[]`` where the type
    has no mapping)."""
    mapping = _BY_TYPE.get(task_type)
    if mapping is None:
        return []
    lines: list[dict[str, Any]] = []
    for sample, raw, reference, output, score, right, method, found in mapping[0](
        items, key, split
    ):
        meta: dict[str, str] = {"task_type": task_type, "main_score": key, **found}
        answer = output[0] if len(output) == 1 else json.dumps(output)
        lines.append(
            {
                "schema_version": INSTANCE_SCHEMA_VERSION,
                "evaluation_id": evaluation_id,
                "model_id": model_id,
                "evaluation_name": task,
                "evaluation_result_id": result_id,
                "sample_id": sample,
                "interaction_type": "single_turn",
                "input": {"raw": raw, "reference": reference},
                "output": {"raw": output},
                "answer_attribution": [
                    {
                        "turn_idx": 0,
                        "source": "output.raw",
                        "extracted_value": answer,
                        "extraction_method": method,
                        "is_terminal": True,
                    }
                ],
                "evaluation": {"score": score, "is_correct": right},
                "metadata": meta,
            }
        )
    return lines
