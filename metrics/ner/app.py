"""The Space app of the NER metric: paste tag sequences as JSON, get entity-level scores."""

import json
from pathlib import Path

import evaluate
import gradio as gr

metric = evaluate.load(str(Path(__file__).resolve().parent / "ner.py"))


def score(predictions: str, references: str, beta: float, strict: bool) -> dict:
    try:
        return metric.compute(
            predictions=json.loads(predictions),
            references=json.loads(references),
            beta=beta,
            mode="strict" if strict else None,
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
        gr.Checkbox(False, label="strict IOB2"),
    ],
    outputs=gr.JSON(label="Scores"),
    title="NER entity F-beta",
    description=metric.info.description,
)

if __name__ == "__main__":
    demo.launch()
