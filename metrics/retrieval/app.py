"""The Space app of the ChemTEB retrieval metric: upload embeddings, get scores."""

from pathlib import Path

import evaluate

from chemteb_eval.scoring.retrieval import example_inputs
from chemteb_eval.widget import launch_widget

launch_widget(evaluate.load(str(Path(__file__).resolve().parent / "retrieval.py")), example_inputs)
