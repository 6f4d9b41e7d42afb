"""The metric Spaces' widget: scoring an upload, and building the gradio app."""

from __future__ import annotations

import numpy as np
import pytest

from chemteb_eval.metric_docs import METRICS, example_inputs
from chemteb_eval.scoring.pair_classification import example_inputs as pair_example
from chemteb_eval.widget import build_demo, score_upload

from .conftest import REPO_ROOT

evaluate = pytest.importorskip("evaluate")
# every module whose Space launches the widget: its METRICS row names its example upload
NAMES = [m.name for m in METRICS if m.example is not None]
assert {"classification", "clustering", "pair_classification", "bitext_mining", "retrieval"} <= set(
    NAMES
)


@pytest.mark.parametrize("name", NAMES)
def test_example_upload_scores(name: str, tmp_path) -> None:
    module = evaluate.load(str(REPO_ROOT / "metrics" / name / f"{name}.py"))
    assert module.name == name
    arrays, options = example_inputs(name)
    path = tmp_path / "in.npz"
    np.savez(path, **arrays)
    import json

    result = score_upload(module, str(path), json.dumps(options))
    assert 0.0 <= result["main_score"] <= 1.0


def test_bad_uploads_get_clear_errors(tmp_path) -> None:
    module = evaluate.load(str(REPO_ROOT / "metrics" / "clustering"))
    with pytest.raises(ValueError, match=r"file: upload an \.npz"):
        score_upload(module, None)
    bad = tmp_path / "bad.npz"
    bad.write_text("not a zip")
    with pytest.raises(ValueError, match=r"file: not a readable \.npz"):
        score_upload(module, str(bad))
    arrays, _ = example_inputs("clustering")
    good = tmp_path / "good.npz"
    np.savez(good, **arrays)
    with pytest.raises(ValueError, match="options: not valid JSON"):
        score_upload(module, str(good), "{oops")


def test_gradio_app_builds(tmp_path) -> None:
    pytest.importorskip("gradio")
    module = evaluate.load(str(REPO_ROOT / "metrics" / "pair_classification"))
    demo = build_demo(module, pair_example)
    fns = list(demo.fns.values()) if isinstance(demo.fns, dict) else demo.fns
    (score,) = [f for f in fns if f.name == "run"]
    arrays, _ = example_inputs("pair_classification")
    path = tmp_path / "in.npz"
    np.savez(path, **arrays)
    assert set(score.fn(str(path), "{}")) >= {"max_f1", "cosine_ap"}
    import gradio as gr

    with pytest.raises(gr.Error, match="length mismatch: embeddings1 has 50"):
        score.fn(str(path), '{"references": [5, 5]}')
