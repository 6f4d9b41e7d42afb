"""The Space app of the ChemTEB bitext_mining metric: upload embeddings, get scores."""

from pathlib import Path

import evaluate

from chemteb_eval.scoring.bitext_mining import example_inputs
from chemteb_eval.widget import launch_widget

launch_widget(
    evaluate.load(str(Path(__file__).resolve().parent / "bitext_mining.py")), example_inputs
)
