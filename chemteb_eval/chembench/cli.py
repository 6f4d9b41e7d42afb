"""``chemteb chembench prompts|generate|score``: the arguments beside their handlers."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from chemteb_eval.models.backends import model_help

from .refusal import DEFAULT_REFUSAL_MODEL
from .run import GENERATION_BATCH_SIZE

Subparsers = Any  # argparse's _SubParsersAction
_UNDER_TEST = "\x00under-test"  # --extractor without a model
_CONFIDENCE_HELP = "also ask for a 1-5 confidence after the answer (instruction mode)"


def add_chembench(sub: Subparsers) -> None:
    bench = sub.add_parser("chembench", help="score LLM answers to ChemBench questions")
    steps = bench.add_subparsers(dest="chembench_command", metavar="STEP", required=True)
    _add_prompts(steps)
    _add_generate(steps)
    _add_score(steps)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--questions",
        required=True,
        help="a folder of question files, a .json/.jsonl file, or hub:jablonkagroup/ChemBench",
    )
    p.add_argument("--revision", help="with hub:...: the commit to read ('main': latest)")
    p.add_argument("--mode", default="instruction", choices=["instruction", "completion"])
    p.add_argument("--shuffle-seed", type=int, help="shuffle options (same seed to score)")


def _add_prompts(steps: Subparsers) -> None:
    prompts = steps.add_parser("prompts", help="export the prompts as JSONL for any server")
    _common(prompts)
    prompts.add_argument("--out", required=True, help="the JSONL file to write")
    prompts.add_argument("--cot", action="store_true", help="add a chain-of-thought line")
    prompts.add_argument(
        "--keep-wrappers", action="store_true", help="keep \\ce{}, $..$, SMILES tags"
    )
    prompts.add_argument("--confidence", action="store_true", help=_CONFIDENCE_HELP)
    prompts.set_defaults(func=_cmd_chembench_prompts)


def _add_generate(steps: Subparsers) -> None:
    gen = steps.add_parser("generate", help="ask a model (resumable; JSONL out)")
    _common(gen)
    gen.add_argument(
        "-m",
        "--model",
        required=True,
        # from the backend table (chemteb_eval.models.backends): every generation backend
        help=model_help("generator"),
    )
    gen.add_argument("--api-base", help="OpenAI-compatible API root (default $OPENAI_BASE_URL)")
    gen.add_argument("--out", required=True, help="completions JSONL (appended; reruns resume)")
    gen.add_argument("--cot", action="store_true")
    gen.add_argument("--max-tokens", type=int, default=512)
    gen.add_argument("--temperature", type=float, default=0.0)
    gen.add_argument(
        "--batch-size",
        type=int,
        default=GENERATION_BATCH_SIZE,
        help=f"prompts per generation call (default: {GENERATION_BATCH_SIZE})",
    )
    gen.add_argument("--confidence", action="store_true", help=_CONFIDENCE_HELP)
    gen.add_argument(
        "--max-retries",
        type=int,
        default=0,
        help="ask a refused question again, up to N more times (every attempt is kept)",
    )
    gen.add_argument(
        "--refusal-classifier",
        nargs="?",
        const=DEFAULT_REFUSAL_MODEL,
        help="with --max-retries: judge refusals with a classifier model too",
    )
    gen.add_argument("--quiet", action="store_true")
    gen.set_defaults(func=_cmd_chembench_generate)


def _add_score(steps: Subparsers) -> None:
    score = steps.add_parser("score", help="score completions; JSON report and a table")
    _common(score)
    score.add_argument("--completions", required=True, help="JSONL: key (or uuid/name), completion")
    score.add_argument("--report", help="report path (default: beside the completions)")
    score.add_argument("--relative-tolerance", type=float, default=0.01)
    score.add_argument("--no-refusal-detection", action="store_true")
    score.add_argument(
        "--refusal-classifier",
        nargs="?",
        const=DEFAULT_REFUSAL_MODEL,
        help=f"also ask a classifier model (default {DEFAULT_REFUSAL_MODEL})",
    )
    score.add_argument(
        "--only-answered", action="store_true", help="score only questions with a completion"
    )
    score.add_argument(
        "--confidence",
        action="store_true",
        help="read each completion's 1-5 confidence and report calibration",
    )
    score.add_argument(
        "--extractor",
        nargs="?",
        const=_UNDER_TEST,
        metavar="MODEL",
        help="ask a model to restate answers no rule reads (counted as n_llm_extracted): the "
        "model under test (recorded by generate) when no MODEL is given",
    )
    score.add_argument("--api-base", help="with --extractor openai:M: the API root")
    score.set_defaults(func=_cmd_chembench_score)


def _questions(args: argparse.Namespace) -> Any:
    from .load import load_questions

    loaded = load_questions(args.questions, revision=args.revision)
    if loaded.skipped:
        print(f"{len(loaded.skipped)} question(s) skipped (malformed):", file=sys.stderr)
        for source, reason in loaded.skipped[:10]:
            print(f"  {source}: {reason}", file=sys.stderr)
    return loaded


def _cmd_chembench_prompts(args: argparse.Namespace) -> int:
    from .run import write_prompts

    loaded = _questions(args)
    n = write_prompts(
        loaded.questions,
        args.out,
        mode=args.mode,
        cot=args.cot,
        shuffle_seed=args.shuffle_seed,
        keep_wrappers=args.keep_wrappers,
        confidence=args.confidence,
    )
    print(f"{n} prompts written to {args.out} ({args.mode} mode).")
    return 0


def _cmd_chembench_generate(args: argparse.Namespace) -> int:
    from .generate import load_generator
    from .run import generate_completions

    loaded = _questions(args)
    generator = load_generator(
        args.model,
        mode=args.mode,
        api_base=args.api_base,
        max_tokens=args.max_tokens,
        temperature=args.temperature,
    )
    n = generate_completions(
        loaded.questions,
        generator,
        args.out,
        mode=args.mode,
        cot=args.cot,
        shuffle_seed=args.shuffle_seed,
        confidence=args.confidence,
        max_retries=args.max_retries,
        refusal_classifier=_refusal_classifier(args.refusal_classifier),
        model=args.model,
        batch_size=args.batch_size,
        progress=not args.quiet,
    )
    print(f"{n} completion(s) generated into {args.out}.")
    return 0


def _refusal_classifier(model: str | None) -> Any:
    if not model:
        return None
    from .refusal import load_refusal_classifier

    return load_refusal_classifier(model)


def _extractor(args: argparse.Namespace) -> Any:
    if not args.extractor:
        return None
    from .generate import llm_extractor, load_generator
    from .run import read_model

    model = args.extractor
    if model == _UNDER_TEST:
        model = read_model(args.completions)
        if model is None:
            raise ValueError(
                f"--extractor: {args.completions} does not record the model that wrote it (it "
                "was not made by chemteb chembench generate); name one: --extractor MODEL."
            )
    # instruction mode: the extraction prompt asks for tags
    return llm_extractor(load_generator(model, mode="instruction", api_base=args.api_base))


def _cmd_chembench_score(args: argparse.Namespace) -> int:
    from .run import read_attempts, read_completions, score_completions

    loaded = _questions(args)
    report = args.report or str(args.completions).rsplit(".", 1)[0] + ".report.json"
    completions = read_completions(args.completions)
    out = score_completions(
        loaded,
        completions,
        report=report,
        only_answered=args.only_answered,
        attempts=read_attempts(args.completions) or None,
        mode=args.mode,
        shuffle_seed=args.shuffle_seed,
        relative_tolerance=args.relative_tolerance,
        detect_refusals=not args.no_refusal_detection,
        refusal_classifier=_refusal_classifier(args.refusal_classifier),
        read_confidence=args.confidence,
        llm_extractor=_extractor(args),
    )
    print(
        f"fraction correct {out['fraction_correct']:.4f} ({out['n_correct']}/{out['n_questions']}); "
        f"answered {out['fraction_correct_answered']:.4f}; refusals {out['n_refusals']}, "
        f"parse failures {out['n_parse_failures']}"
    )
    head = f"{'topic':<36} {'n':>5} {'correct':>8} {'fraction':>9} {'refused':>8} {'unparsed':>9}"
    print(f"\n{head}\n{'-' * len(head)}")
    for group in ("by_type", "by_topic"):
        for name, row in out[group].items():
            print(
                f"{name:<36} {row['n_questions']:>5} {row['n_correct']:>8} "
                f"{row['fraction_correct']:>9.4f} {row['n_refusals']:>8} {row['n_parse_failures']:>9}"
            )
    _print_extras(out)
    print(f"\nReport (per-question details, keyword problems): {report}")
    return 0


def _print_extras(out: dict[str, Any]) -> None:
    """The retry, fallback-extraction and calibration lines, where the run has them."""
    if "n_generation_retries" in out:
        print(
            f"\nrefusals re-asked: {out['n_questions_retried']} question(s), "
            f"{out['n_generation_retries']} retries; still refused: "
            f"{out['n_refusals_after_retries']}"
        )
    if out.get("n_llm_extracted"):
        print(f"answers read by the extractor model: {out['n_llm_extracted']}")
    cal = out.get("calibration")
    if cal is None:
        return
    if not cal["n_with_confidence"]:
        print(f"\nno confidence stated in {cal['n_without_confidence']} completion(s)")
        return

    def fmt(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    print(
        f"\ncalibration ({cal['n_with_confidence']} with a confidence, "
        f"{cal['n_without_confidence']} without): mean confidence correct "
        f"{fmt(cal['mean_confidence_correct'])}, wrong {fmt(cal['mean_confidence_wrong'])}; "
        f"Spearman {fmt(cal['spearman'])}; ECE {fmt(cal['ece'])} (5 equal-width bins); "
        f"Brier {fmt(cal['brier'])}"
    )
