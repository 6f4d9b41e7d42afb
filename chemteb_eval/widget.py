"""The Gradio widget behind every metric Space (``metrics/<name>/app.py``).

evaluate's own ``launch_gradio_widget`` does not work with gradio >= 5, so this one is ours. A
user uploads an ``.npz`` file whose arrays are named after the module's ``compute`` arguments
(``embeddings1``, ``references``, ...), adds any other arguments as JSON (``qrels``, protocol
parameters) and gets the scores back as JSON. gradio is imported only when a demo is built.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["Example", "build_demo", "launch_widget", "score_upload"]

#: A metric's example upload: ``rng -> (arrays for the .npz, the other arguments as JSON)``; each
#: scoring module has one (``example_inputs``), named on its ``METRICS`` row.
Example = Callable[[np.random.Generator], tuple[dict[str, Any], dict[str, Any]]]


def score_upload(
    module: Any, npz_path: str | Path | None, options_json: str = ""
) -> dict[str, Any]:
    """Score an uploaded ``.npz`` with an evaluate module.

    Args:
        module: a loaded ChemTEB evaluate module.
        npz_path: path of the uploaded file; its array names are ``compute`` argument names.
        options_json: a JSON object of further ``compute`` arguments (may be empty).

    Returns:
        What ``module.compute`` returns.
    """
    if npz_path is None:
        raise ValueError(
            "file: upload an .npz file whose arrays are named after compute() arguments."
        )
    try:
        with np.load(npz_path, allow_pickle=False) as npz:
            kwargs: dict[str, Any] = {k: npz[k] for k in npz.files}
    except (OSError, ValueError) as exc:
        raise ValueError(
            f"file: not a readable .npz archive ({exc}); save it with numpy.savez."
        ) from None
    if options_json.strip():
        try:
            options = json.loads(options_json)
        except json.JSONDecodeError as exc:
            raise ValueError(f"options: not valid JSON ({exc}).") from None
        if not isinstance(options, dict):
            raise ValueError("options: must be a JSON object of compute() arguments.")
        kwargs.update(options)
    for key in ("references", "query_ids", "train_labels", "corpus_ids"):
        if key in kwargs and isinstance(kwargs[key], np.ndarray):
            kwargs[key] = kwargs[key].tolist()
    return dict(module.compute(**kwargs))


def build_demo(module: Any, example: Example | None = None) -> Any:
    """A gradio Blocks app for one module (gradio 6), offering ``example``'s upload (seed 0).

    The app passes its module's example function itself (``from chemteb_eval.scoring.X import
    example_inputs``): a plain import, which ``publish-metrics`` bundles with the module; a
    lookup by name would import on demand, which a Space without chemteb-eval cannot."""
    from chemteb_eval.errors import require_extra

    require_extra("space", "gradio", what="the metric widget")
    import gradio as gr

    name = module.name
    if example is None:
        raise ValueError(f"example: pass {name}'s example_inputs (its METRICS row names it).")
    arrays, options = example(np.random.default_rng(0))
    example_path = Path(tempfile.mkdtemp()) / f"{name}_example.npz"
    np.savez(example_path, **arrays)

    def run(file: Any, opts: str) -> dict[str, Any]:
        path = getattr(file, "name", file)
        try:
            return score_upload(module, path, opts)
        except ValueError as exc:
            raise gr.Error(str(exc)) from None

    with gr.Blocks(title=f"ChemTEB {name}") as demo:
        gr.Markdown(f"# ChemTEB · {name.replace('_', ' ')}\n\n{module.description}")
        gr.Markdown(
            "Upload an `.npz` (`numpy.savez`) whose arrays are named after the arguments below; "
            "put other arguments (e.g. `qrels`, protocol parameters) in the JSON box.\n\n"
            f"```\n{module.inputs_description}\n```"
        )
        with gr.Row():
            with gr.Column():
                upload = gr.File(label="inputs (.npz)", file_types=[".npz"])
                opts = gr.Code(label="more compute() arguments (JSON)", language="json", value="{}")
                button = gr.Button("Score", variant="primary")
            out = gr.JSON(label="scores")
        gr.Examples([[str(example_path), json.dumps(options)]], inputs=[upload, opts])
        button.click(run, inputs=[upload, opts], outputs=out)
    return demo


def launch_widget(module: Any, example: Example | None = None, **launch_kwargs: Any) -> None:
    """Build and launch the widget (what each metric Space's ``app.py`` calls)."""
    build_demo(module, example).launch(**launch_kwargs)
