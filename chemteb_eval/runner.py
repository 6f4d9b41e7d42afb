"""Run a benchmark: tasks -> data -> engine -> scoring -> MTEB-layout result files.

All texts of all selected tasks are collected first and each unique (prompt, text) is encoded
once; tasks are then scored one by one and each result is written atomically as soon as it is
done. Finished tasks are skipped on a rerun; a failing task is recorded and the run goes on.
"""

from __future__ import annotations

import platform
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from chemteb_eval import __version__, scoring
from chemteb_eval.data.loader import load_task
from chemteb_eval.data.types import (
    BitextData,
    ClassificationData,
    ClusteringData,
    NerData,
    PairClassificationData,
    RetrievalData,
    SplitData,
    StsData,
    TaskData,
)
from chemteb_eval.engine import EmbeddingCache, EmbeddingEngine
from chemteb_eval.engine.distributed import distributed_state
from chemteb_eval.errors import ChemtebError
from chemteb_eval.metric_docs import protocol_defaults
from chemteb_eval.models.base import Encoder, Role
from chemteb_eval.results.io import model_dir, write_json_atomic
from chemteb_eval.scoring.classification import undersample_indices
from chemteb_eval.scoring.ner_probe import score_ner_probe
from chemteb_eval.scoring.sts import score_sts
from chemteb_eval.tasks import Benchmark, Task, benchmark_tasks, eval_splits, get_benchmark

__all__ = ["RunReport", "run"]

Groups = dict[str, tuple[list[str], Role | None]]


def _probe_rows(data: ClassificationData) -> np.ndarray:
    """The training rows the probe's experiments use: only these need embedding (as in MTEB,
    which encodes the union of the undersampled rows, not the whole training split)."""
    defaults = protocol_defaults(scoring.score_classification)
    picks = undersample_indices(
        np.asarray(data.train_labels),
        defaults["n_experiments"],
        defaults["samples_per_label"],
        defaults["seed"],
    )
    return np.unique(np.concatenate(picks))


def _groups(data: SplitData) -> Groups:
    """The texts a split needs embedded, by name, with their retrieval role."""
    if isinstance(data, ClassificationData):
        used = [data.train_texts[i] for i in _probe_rows(data)]
        return {"train": (used, None), "test": (data.test_texts, None)}
    if isinstance(data, ClusteringData):
        return {f"set{i}": (s.texts, None) for i, s in enumerate(data.sets)}
    if isinstance(data, PairClassificationData):
        return {"s1": (data.sentences1, None), "s2": (data.sentences2, None)}
    if isinstance(data, BitextData):
        return {"src": (data.sources, None), "tgt": (data.targets, None)}
    if isinstance(data, StsData):
        return {"s1": (data.sentences1, None), "s2": (data.sentences2, None)}
    if isinstance(data, NerData):
        return {}  # words in context: embedded by the probe, not through the text cache
    return {"queries": (data.query_texts, "query"), "corpus": (data.corpus_texts, "document")}


def _score(data: SplitData, emb: dict[str, np.ndarray]) -> dict[str, Any]:
    if isinstance(data, ClassificationData):
        # Rows no experiment draws are never read by the probe: zeros keep the row indices (and
        # so the seeded undersampling) of the full training split.
        train = np.zeros((len(data.train_texts), emb["train"].shape[1]), dtype=emb["train"].dtype)
        train[_probe_rows(data)] = emb["train"]
        return scoring.score_classification(train, data.train_labels, emb["test"], data.test_labels)
    if isinstance(data, ClusteringData):
        per_set = [
            scoring.score_clustering(emb[f"set{i}"], s.labels) for i, s in enumerate(data.sets)
        ]
        out: dict[str, Any] = {k: float(np.mean([p[k] for p in per_set])) for k in per_set[0]}
        out["v_measures"] = [p["v_measure"] for p in per_set]
        return out
    if isinstance(data, PairClassificationData):
        return scoring.score_pair_classification(emb["s1"], emb["s2"], data.labels)
    if isinstance(data, BitextData):
        return scoring.score_bitext_mining(emb["src"], emb["tgt"])
    if isinstance(data, StsData):
        # A run never aborts on texts a word model cannot embed: they count as similarity 0,
        # and n_missing / coverage in the result say how many there were.
        return score_sts(data.scores, emb["s1"], emb["s2"], oov_policy="zero")
    assert isinstance(data, RetrievalData)
    return scoring.score_retrieval(
        emb["queries"], emb["corpus"], data.query_ids, data.corpus_ids, data.qrels
    )


def _score_ner(encoder: Encoder, data: NerData, batch_size: int, progress: bool) -> dict[str, Any]:
    from chemteb_eval.models.word_embeddings import word_embeddings

    train = word_embeddings(encoder, data.train_tokens, batch_size=batch_size, progress=progress)
    test = word_embeddings(encoder, data.test_tokens, batch_size=batch_size, progress=progress)
    return score_ner_probe(train, data.train_tags, test, data.test_tags)


@dataclass
class RunReport:
    """What a run did: per-task status, the encoding statistics, where results are."""

    results_dir: Path
    statuses: dict[str, str] = field(default_factory=dict)  # done | skipped | failed
    main_scores: dict[str, float] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    encoding: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0


def _hardware() -> dict[str, Any]:
    info: dict[str, Any] = {"platform": platform.platform(), "python": platform.python_version()}
    import os

    info["cpus"] = os.cpu_count()
    try:
        import torch

        info["torch"] = torch.__version__
        info["cuda"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    except ImportError:  # pragma: no cover - torch is a dependency
        pass
    return info


def _writable(folder: Path, what: str, fix: str, *, read_only_ok: bool = False) -> None:
    """Create ``folder`` (and parents) or raise one ``ChemtebError`` line: ``what folder cannot
    be written (reason); fix.`` With ``read_only_ok``, a folder that exists passes (a read-only
    embedding cache can still be read)."""
    if read_only_ok and folder.is_dir():
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ChemtebError(
            f"{what} {folder} cannot be written ({exc.strerror or exc}); {fix}."
        ) from None


def run(
    model: str | Encoder = "sentence-transformers/all-MiniLM-L6-v2",
    *,
    benchmark: str | Benchmark | None = None,
    tasks: Sequence[Task] | None = None,
    output_dir: str | Path = "results",
    batch_size: int = 32,
    device: str | None = None,
    precision: str = "float32",
    api_base: str | None = None,
    overwrite: bool = False,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    progress: bool = True,
    log: Callable[[str], None] = print,
) -> RunReport:
    """Evaluate a model on a benchmark (default PipChem) or on given tasks.

    Args:
        model: a model name or folder (sentence-transformers), or an ``Encoder``.
        benchmark: a benchmark name or record; default ``PipChem`` when ``tasks`` is not given.
        tasks: task records to run instead of a benchmark.
        output_dir: where result folders go (MTEB layout).
        batch_size: texts per model call.
        device: the torch device for local models.
        precision: float32, or float16/bfloat16 on CUDA.
        api_base: the API root for ``openai:`` models.
        overwrite: rerun tasks whose result file exists.
        cache_dir: the embedding cache folder (default ``~/.cache/chemteb/embeddings``).
        use_cache: keep embeddings on disk and reuse them across runs.
        progress: show progress bars.
        log: where one-line messages go.

    Returns:
        A ``RunReport``.
    """
    started = time.perf_counter()
    if tasks is not None and benchmark is not None:
        raise ValueError("tasks: pass a benchmark or tasks, not both.")
    bench = None
    if tasks is None:
        bench = (
            get_benchmark(benchmark or "PipChem")
            if not isinstance(benchmark, Benchmark)
            else benchmark
        )
        tasks = benchmark_tasks(bench)
    if not tasks:
        raise ValueError("tasks: nothing to run.")

    # Folders that cannot be written stop the run before minutes of model loading, not after.
    _writable(Path(output_dir), "--output-dir:", "pass a folder you can write to")
    if use_cache:
        from chemteb_eval.data.loader import cache_root

        cache_folder = Path(cache_dir) if cache_dir is not None else cache_root() / "embeddings"
        _writable(
            cache_folder,
            "embedding cache folder",
            "run with --no-cache, or set CHEMTEB_CACHE to a folder you can write to",
            read_only_ok=True,
        )

    if isinstance(model, str):
        from chemteb_eval.models import load_encoder

        encoder = load_encoder(model, device=device, precision=precision, api_base=api_base)
    else:
        encoder = model
    meta = encoder.meta
    out_dir = model_dir(Path(output_dir), meta.name, meta.revision)
    _writable(out_dir, "--output-dir:", "pass a folder you can write to")
    report = RunReport(results_dir=out_dir)
    cache = None
    if use_cache:  # opened first: a damaged cache stops the run before any work
        cache = EmbeddingCache(cache_folder, meta.name, meta.revision, meta.source)
    state = distributed_state()
    # Under torchrun/accelerate every rank loads the data and encodes its shard; only the main
    # process scores and writes.
    main = state is None or bool(state.is_main_process)
    if main:
        write_json_atomic(out_dir / "model_meta.json", meta.to_dict())

    todo: list[Task] = []
    for task in tasks:
        if (out_dir / f"{task.name}.json").is_file() and not overwrite:
            report.statuses[task.name] = "skipped"
        else:
            todo.append(task)
    if report.statuses:
        log(
            f"{len(report.statuses)} task(s) already have results in {out_dir}; skipped (use --overwrite to rerun)."
        )

    loaded: dict[str, TaskData] = {}
    for task in todo:
        splits = eval_splits(bench, task) if bench is not None else task.eval_splits
        try:
            loaded[task.name] = load_task(task, splits=splits)
        except Exception as exc:  # one task's failure is recorded; the run goes on
            report.statuses[task.name] = "failed"
            report.errors[task.name] = f"{type(exc).__name__}: {exc}"
            log(f"[failed] {task.name}: could not load data: {exc}")

    engine = EmbeddingEngine(encoder, cache, batch_size=batch_size, progress=progress)
    by_task = {task.name: task for task in todo}

    def prompt(task: Task, role: Role | None) -> str:
        return encoder.prompt(task.type, role)

    requests = [
        (prompt(by_task[name], role), text)
        for name, data in loaded.items()
        for by_split in data.values()
        for split_data in by_split.values()
        for texts, role in _groups(split_data).values()
        for text in texts
    ]
    try:
        engine.prefetch(requests)
        if not main:
            return report
        from tqdm.auto import tqdm

        for name in tqdm(list(loaded), desc="tasks", unit="task", disable=not progress):
            task = by_task[name]
            t0 = time.perf_counter()
            try:
                scores: dict[str, list[dict[str, Any]]] = {}
                for subset, by_split in loaded[name].items():
                    for split, split_data in by_split.items():
                        emb = {
                            g: engine.embed(texts, prompt(task, role))
                            for g, (texts, role) in _groups(split_data).items()
                        }
                        if isinstance(split_data, NerData):
                            metrics = _score_ner(encoder, split_data, batch_size, progress)
                        else:
                            metrics = _score(split_data, emb)
                        metrics["main_score"] = metrics[task.main_score]
                        metrics["hf_subset"] = subset
                        metrics["languages"] = ["eng-Latn"] if subset == "default" else []
                        scores.setdefault(split, []).append(metrics)
                write_json_atomic(
                    out_dir / f"{task.name}.json",
                    {
                        "dataset_revision": task.revision,
                        "task_name": task.name,
                        "mteb_version": None,
                        "chemteb_eval_version": __version__,
                        "scores": scores,
                        "evaluation_time": time.perf_counter() - t0,
                        "kg_co2_emissions": None,
                    },
                )
                report.statuses[name] = "done"
                first = next(iter(scores.values()))
                report.main_scores[name] = float(np.mean([e["main_score"] for e in first]))
            except Exception as exc:
                report.statuses[name] = "failed"
                report.errors[name] = "".join(
                    traceback.format_exception_only(type(exc), exc)
                ).strip()
                log(f"[failed] {name}: {report.errors[name]}")
    finally:
        report.encoding = engine.stats.to_dict()
        report.seconds = time.perf_counter() - started
        if cache is not None:
            cache.close()
        if main:  # also after Ctrl-C or an error: what was done is recorded
            write_json_atomic(
                out_dir / "run_meta.json",
                {
                    "chemteb_eval_version": __version__,
                    "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                    "benchmark": bench.name if bench is not None else None,
                    "hardware": _hardware(),
                    "seconds": report.seconds,
                    "encoding": report.encoding,
                    "tasks": report.statuses,
                    "errors": report.errors,
                },
            )
    return report
