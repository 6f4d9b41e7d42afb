"""The Space app of the STS metric: upload embeddings (or similarities), get the correlations."""

from pathlib import Path

import evaluate

from chemteb_eval.scoring.sts import example_inputs
from chemteb_eval.widget import launch_widget

launch_widget(evaluate.load(str(Path(__file__).resolve().parent / "sts.py")), example_inputs)
