"""The Space app of the NER metric: paste tag sequences as JSON, get entity-level scores."""

import json
from pathlib import Path

import evaluate
import gradio as gr

from chemteb_eval.scoring.ner import SCHEMES

metric = evaluate.load(str(Path(__file__).resolve().parent / "ner.py"))


CHUNKING = ["conlleval (default)", *(f"strict {s}" for s in SCHEMES)]


def score(predictions: str, references: str, beta: float, chunking: str) -> dict:
    strict = chunking.startswith("strict ")
    try:
        return metric.compute(
            predictions=json.loads(predictions),
            references=json.loads(references),
            beta=beta,
            mode="strict" if strict else None,
            scheme=chunking.removeprefix("strict ") if strict else None,
        )
    except ValueError as exc:  # malformed JSON or tags: say what is wrong
        return {"error": str(exc)}


demo = gr.Interface(
    fn=score,
    inputs=[
        gr.Code(
            '[["B-Chemical", "I-Chemical", "O", "O"]]', language="json", label="Predicted tags"
        ),
        gr.Code(
            '[["B-Chemical", "I-Chemical", "O", "B-Chemical"]]', language="json", label="Gold tags"
        ),
        gr.Number(1.0, label="beta"),
        gr.Dropdown(CHUNKING, value=CHUNKING[0], label="chunking (seqeval's mode and scheme)"),
    ],
    outputs=gr.JSON(label="Scores"),
    title="NER entity F-beta",
    description=metric.info.description,
)

if __name__ == "__main__":
    demo.launch()
