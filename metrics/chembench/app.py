"""The Space app of the ChemBench metric: paste a question and a completion, see how it scores."""

import json
from pathlib import Path

import evaluate
import gradio as gr

metric = evaluate.load(str(Path(__file__).resolve().parent / "chembench.py"))

EXAMPLE_QUESTION = {
    "name": "example_1",
    "metrics": ["multiple_choice_grade"],
    "keywords": ["polymer-chemistry", "requires-reasoning", "difficulty-basic"],
    "examples": [
        {
            "input": "To double the rate of radical polymerization, how must the initiator "
            "concentration change?",
            "target_scores": {"doubled": 0, "quadrupled": 1, "tripled": 0},
        }
    ],
}


def score(question: str, completion: str, mode: str) -> dict:
    try:
        return metric.compute(
            predictions=[completion], references=[question], prompt_mode=mode, return_details=True
        )
    except ValueError as exc:  # a malformed question: say what is wrong
        return {"error": str(exc)}


demo = gr.Interface(
    fn=score,
    inputs=[
        gr.Code(json.dumps(EXAMPLE_QUESTION, indent=1), language="json", label="Question (JSON)"),
        gr.Textbox(
            "Rp grows with [I]^(1/2), so quadruple it.\n[ANSWER]B[/ANSWER]",
            lines=6,
            label="Completion",
        ),
        gr.Radio(["instruction", "completion"], value="instruction", label="Prompt mode"),
    ],
    outputs=gr.JSON(label="Scores"),
    title="ChemBench",
    description=metric.info.description,
)

if __name__ == "__main__":
    demo.launch()
