"""Our ChemBench answer extraction and refusal detection against the reference's (chembench 0.3.0)
on the same hand-labelled fixture (tests/data/chembench_fixture.json: 126 completions).

python benchmarks/bench_chembench_parsers.py [--reference-python PATH]

The reference runs in its own environment (it pulls litellm, langchain and torch): create one with
``python3 -m venv /tmp/cbvenv && /tmp/cbvenv/bin/pip install torch==2.13.0 chembench==0.3.0``
and pass its python. Its rules as its pipeline applies them: keyword refusal detection, then
``prepare_mcq_answer`` + ``run_regex(create_multiple_choice_regex(letters))`` for multiple choice,
``prepare_general_answer`` for numbers; no LLM extractor on either side.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "data" / "chembench_fixture.json"

REFERENCE = r"""
import json, sys
from chembench.prompter import prepare_general_answer, prepare_mcq_answer
from chembench.refusal import RefusalDetector
from chembench.utils import create_multiple_choice_regex, run_regex
fx = json.load(open(sys.argv[1]))
detector = RefusalDetector("keyword")
out = []
for row in fx["completions"]:
    q = fx["questions"][row["question"]]
    text = row["completion"]
    refused = detector.keyword_refusal_detection(text)
    example = q["examples"][0]
    answer = None
    try:
        if "target_scores" in example:
            letters = [chr(65 + i) for i in range(len(example["target_scores"]))]
            prepared = prepare_mcq_answer(text)
            found = run_regex(create_multiple_choice_regex(letters), prepared, return_first=False)
            answer = sorted(set(found)) if found else None
        else:
            value = prepare_general_answer(text)
            answer = float(value) if value is not None else None
    except Exception as exc:
        answer = None
    out.append({"refused": refused, "answer": answer})
print(json.dumps(out))
"""


def ours(fixture: dict[str, Any]) -> list[dict[str, Any]]:
    from chemteb_eval.chembench.score import Question, score_question

    questions = {k: Question.from_dict(v) for k, v in fixture["questions"].items()}
    rows = []
    for row in fixture["completions"]:
        result = score_question(questions[row["question"]], row["completion"])
        answer = list(result.answer) if isinstance(result.answer, tuple) else result.answer
        rows.append({"refused": result.refused, "answer": answer})
    return rows


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= 1e-9 * max(1.0, abs(b))
    return bool(a == b)


def summary(fixture: dict[str, Any], got: list[dict[str, Any]]) -> dict[str, float]:
    rows = fixture["completions"]
    answerable = [i for i, r in enumerate(rows) if r["expected"] is not None and not r["refusal"]]
    unanswerable = [i for i, r in enumerate(rows) if r["expected"] is None and not r["refusal"]]
    refusals = [i for i, r in enumerate(rows) if r["refusal"]]
    genuine = [i for i, r in enumerate(rows) if not r["refusal"]]

    def read(i: int) -> Any:
        return None if got[i]["refused"] else got[i]["answer"]

    return {
        "read right": sum(same(read(i), rows[i]["expected"]) for i in answerable) / len(answerable),
        "read wrong": sum(
            read(i) is not None and not same(read(i), rows[i]["expected"]) for i in answerable
        )
        / len(answerable),
        "answer invented": sum(read(i) is not None for i in unanswerable) / len(unanswerable),
        "refusals found": sum(got[i]["refused"] for i in refusals) / len(refusals),
        "refusal false positives": sum(got[i]["refused"] for i in genuine) / len(genuine),
        "n_answerable": len(answerable),
        "n_unanswerable": len(unanswerable),
        "n_refusals": len(refusals),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference-python", default="/tmp/cbvenv/bin/python")
    args = parser.parse_args()
    fixture = json.loads(FIXTURE.read_text(encoding="utf-8"))
    import chemteb_eval.chembench.score  # noqa: F401  (import time is not scoring time)

    start = time.perf_counter()
    mine = summary(fixture, ours(fixture))
    ours_s = time.perf_counter() - start
    ref = None
    if Path(args.reference_python).exists():
        done = subprocess.run(
            [args.reference_python, "-c", REFERENCE, str(FIXTURE)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode == 0:
            ref = summary(fixture, json.loads(done.stdout.strip().splitlines()[-1]))
        else:
            print(done.stderr[-2000:], file=sys.stderr)
    n = len(fixture["completions"])
    lines = [
        f"Fixture: {n} completions ({mine['n_answerable']:.0f} with an answer a human reads, "
        f"{mine['n_unanswerable']:.0f} without one, {mine['n_refusals']:.0f} refusals). "
        f"Ours scored them in {ours_s * 1000:.0f} ms.",
        "",
        "| | chemteb-eval | chembench 0.3.0 rules |",
        "|---|---:|---:|",
    ]
    for key in (
        "read right",
        "read wrong",
        "answer invented",
        "refusals found",
        "refusal false positives",
    ):
        theirs = f"{ref[key]:.1%}" if ref else "not run"
        lines.append(f"| {key} | {mine[key]:.1%} | {theirs} |")
    text = "\n".join(lines)
    print(text)
    out = ROOT / "benchmarks" / "out"
    out.mkdir(exist_ok=True)
    (out / "bench_chembench_parsers.md").write_text(text + "\n")


if __name__ == "__main__":
    main()
