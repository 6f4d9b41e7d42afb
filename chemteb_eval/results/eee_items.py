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

import json
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from chemteb_eval.tasks import Benchmark, Task, eval_splits, main_score

from .board import ModelResults

__all__ = ["INSTANCE_SCHEMA_VERSION", "sample_lines"]

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
        qid = str(ids[i]) if ids is not None else str(i)
        found = bool(hits[i] > 0) if hits is not None else bool(value > 0)
        meta = {n: _number(a[i]) for n, a in arrays.items()}
        out.append((qid, f"query {qid} ({split})", [], [], float(value), found, "ranking", meta))
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


_BY_TYPE: Mapping[str, Callable[[Mapping[str, Any], str, str], list[Item]]] = {
    "Retrieval": _retrieval,
    "Classification": _classification,
    "Clustering": _clustering,
    "BitextMining": _bitext,
    "PairClassification": _pairs,
}


def sample_lines(
    model: ModelResults,
    bench: Benchmark,
    task: Task,
    *,
    evaluation_id: str,
    model_id: str,
    result_id: str,
) -> list[dict[str, Any]]:
    """The task's instance records (``[]`` where the run wrote no checked evidence, or the
    type has no mapping)."""
    from .ranking import task_evidence

    key = main_score(bench, task)
    evidence = task_evidence(model, bench, task, key)
    mapping = _BY_TYPE.get(task.type)
    if evidence is None or mapping is None:
        return []
    split = eval_splits(bench, task)[0]
    lines = []
    for sample, raw, reference, output, score, right, method, found in mapping(
        evidence.items, key, split
    ):
        meta: dict[str, str] = {"task_type": task.type, "main_score": key, **found}
        answer = output[0] if len(output) == 1 else json.dumps(output)
        lines.append(
            {
                "schema_version": INSTANCE_SCHEMA_VERSION,
                "evaluation_id": evaluation_id,
                "model_id": model_id,
                "evaluation_name": task.name,
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
