"""The Space app of the ChemTEB clustering metric: upload embeddings, get scores."""

from pathlib import Path

import evaluate

from chemteb_eval.scoring.clustering import example_inputs
from chemteb_eval.widget import launch_widget

launch_widget(evaluate.load(str(Path(__file__).resolve().parent / "clustering.py")), example_inputs)
