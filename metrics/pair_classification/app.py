"""The Space app of the ChemTEB pair_classification metric: upload embeddings, get scores."""

from pathlib import Path

import evaluate

from chemteb_eval.scoring.pair_classification import example_inputs
from chemteb_eval.widget import launch_widget

launch_widget(
    evaluate.load(str(Path(__file__).resolve().parent / "pair_classification.py")), example_inputs
)
