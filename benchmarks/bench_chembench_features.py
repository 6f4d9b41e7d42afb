"""What ChemBench's optional features cost per question, and what the calibration report looks
like, on a scripted loopback model over real ChemBench questions.

python benchmarks/bench_chembench_features.py [--n 300]

The model is a script behind a loopback OpenAI-compatible server (no LLM runs here): for each
question it "knows" the answer with a probability fixed by the question's key (70%), answers in
tags when it knows and guesses otherwise (a random option, or the target times 1.5), refuses 10%
of first attempts, writes 15% of its answers in prose no rule reads, and states a confidence
(4-5 when it knows, 1-3 when it guesses, on a seeded draw). So the calibration figures show the
report on a model that is calibrated by construction: they are not a measurement of any LLM.

Per flag, measured: extra model calls per question, extra prompt characters, and scoring time;
with ``generate`` (the loopback's HTTP round trips) timed against the plain run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

ROOT = Path(__file__).resolve().parents[1]


def _draw(key: str, salt: str) -> float:
    digest = hashlib.sha256(f"{salt}:{key}".encode()).hexdigest()
    return int(digest[:12], 16) / 16**12


class _Scripted(BaseHTTPRequestHandler):
    # (texts a prompt holds: question and options, wrappers stripped) -> question
    by_prompt: ClassVar[list[tuple[list[str], Any]]] = []
    calls: ClassVar[list[int]] = []  # prompt characters of each call
    asked: ClassVar[dict[str, int]] = {}

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompt = body["messages"][0]["content"]
        type(self).calls.append(len(prompt))
        data = json.dumps({"choices": [{"message": {"content": self._answer(prompt)}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _answer(self, prompt: str) -> str:
        from chemteb_eval.chembench.prompts import option_order

        if prompt.startswith("Below is a model's response"):
            inner = prompt.split("Response:\n", 1)[1]
            value = inner.split("my answer would be ", 1)[-1].split(",", 1)[0]
            return f"[ANSWER]{value}[/ANSWER]"
        question = next(q for texts, q in type(self).by_prompt if all(t in prompt for t in texts))
        n = type(self).asked.get(question.key, 0)
        type(self).asked[question.key] = n + 1
        if n == 0 and _draw(question.key, "refuse") < 0.10:
            return "I'm sorry, I can't help with that."
        knows = _draw(question.key, "knows") < 0.70
        rng = random.Random(question.key)
        if question.is_mcq:
            options = option_order(question, None)
            right = [chr(65 + i) for i, o in enumerate(options) if question.target_scores[o] == 1]
            value = ",".join(right) if knows else chr(65 + rng.randrange(len(options)))
        else:
            value = f"{question.target if knows else question.target * 1.5:g}"
        confidence = rng.choice([4, 5]) if knows else rng.choice([1, 2, 3])
        stated = f"\n[CONFIDENCE]{confidence}[/CONFIDENCE]" if "[CONFIDENCE]" in prompt else ""
        if _draw(question.key, "prose") < 0.15:
            return f"Weighing it all, my answer would be {value}, I suppose, on reflection.{stated}"
        return f"[ANSWER]{value}[/ANSWER]{stated}"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--n", type=int, default=300)
    n = parser.parse_args().n

    from chemteb_eval._env import shared_data_root
    from chemteb_eval.chembench.generate import llm_extractor, load_generator
    from chemteb_eval.chembench.load import load_questions
    from chemteb_eval.chembench.prompts import strip_wrappers
    from chemteb_eval.chembench.run import (
        generate_completions,
        read_attempts,
        read_completions,
        score_completions,
    )

    loaded = load_questions(shared_data_root() / "chembench")
    rng = random.Random(0)
    chosen = sorted(
        rng.sample(loaded.questions, min(n, len(loaded.questions))), key=lambda q: q.key
    )
    loaded = type(loaded)(chosen, [], [], loaded.source)
    _Scripted.by_prompt = [
        ([strip_wrappers(t).strip() for t in [q.input, *(q.target_scores or {})]], q)
        for q in chosen
    ]
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Scripted)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/v1"
    generate = load_generator("openai:scripted", api_base=base)

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        runs = {
            "plain": {},
            "--confidence": {"confidence": True},
            "--confidence --max-retries 2": {"confidence": True, "max_retries": 2},
        }
        reports = {}
        for label, options in runs.items():
            _Scripted.calls, _Scripted.asked = [], {}
            out = Path(tmp) / f"{len(reports)}.jsonl"
            start = time.perf_counter()
            generate_completions(chosen, generate, out, progress=False, **options)
            seconds = time.perf_counter() - start
            calls, chars = len(_Scripted.calls), sum(_Scripted.calls)
            completions = read_completions(out)
            start = time.perf_counter()
            report = score_completions(
                loaded,
                completions,
                attempts=read_attempts(out) or None,
                read_confidence=bool(options),
            )
            scoring = time.perf_counter() - start
            reports[label] = report
            rows.append((label, calls / len(chosen), chars / calls, seconds, scoring, report))
        _Scripted.calls = []
        start = time.perf_counter()
        extracted = score_completions(
            loaded,
            read_completions(Path(tmp) / "2.jsonl"),
            read_confidence=True,
            llm_extractor=llm_extractor(generate),
        )
        extract_seconds = time.perf_counter() - start
        extract_calls = len(_Scripted.calls)
    server.shutdown()

    plain_seconds, plain_scoring = rows[0][3], rows[0][4]
    lines = [
        f"ChemBench features on {len(chosen)} questions of ../shared/data/chembench (seeded "
        "sample), a scripted loopback model (see the script: calibrated by construction).",
        "",
        "| run | model calls / question | prompt chars / call | generate s (x plain) | "
        "score ms / question (x plain) | fraction correct | refusals | parse failures |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for label, calls, chars, seconds, scoring, report in rows:
        lines.append(
            f"| {label} | {calls:.2f} | {chars:.0f} | {seconds:.2f} ({seconds / plain_seconds:.2f}x) | "
            f"{1000 * scoring / len(chosen):.3f} ({scoring / plain_scoring:.2f}x) | "
            f"{report['fraction_correct']:.3f} | {report['n_refusals']} | "
            f"{report['n_parse_failures']} |"
        )
    lines.append(
        f"| score --extractor (on the last run) | {extract_calls / len(chosen):.2f} extra | "
        f"{sum(_Scripted.calls) / max(extract_calls, 1):.0f} | | "
        f"{1000 * extract_seconds / len(chosen):.3f} | {extracted['fraction_correct']:.3f} | "
        f"{extracted['n_refusals']} | {extracted['n_parse_failures']} |"
    )
    retried = reports["--confidence --max-retries 2"]
    lines += [
        "",
        f"Retries: {retried['n_questions_retried']} question(s) re-asked, "
        f"{retried['n_generation_retries']} retries, {retried['n_refusals_after_retries']} still "
        f"refused. Extractor: {extracted['n_llm_extracted']} answers read by the model.",
        "",
        _calibration_table(extracted),
    ]
    text = "\n".join(lines)
    print(text)
    out_dir = ROOT / "benchmarks" / "out"
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "chembench_features.md").write_text(text + "\n")


def _calibration_table(report: dict[str, Any]) -> str:
    def fmt(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    head = (
        "| scope | n (with confidence) | mean confidence, correct | wrong | Spearman | "
        "ECE (5 bins) | Brier |\n|---|---:|---:|---:|---:|---:|---:|"
    )
    rows = [("overall", report["calibration"])]
    by_topic = sorted(
        report["calibration_by_topic"].items(), key=lambda kv: -kv[1]["n_with_confidence"]
    )
    rows += by_topic[:5]
    body = [
        f"| {scope} | {c['n_with_confidence']} | {fmt(c['mean_confidence_correct'])} | "
        f"{fmt(c['mean_confidence_wrong'])} | {fmt(c['spearman'])} | {fmt(c['ece'])} | "
        f"{fmt(c['brier'])} |"
        for scope, c in rows
    ]
    return "\n".join([head, *body])


if __name__ == "__main__":
    main()
