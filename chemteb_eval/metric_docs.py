"""Text shared by the evaluate modules' cards and docstrings: citations and protocol defaults.

The defaults are read from the scoring functions' signatures, so the cards never restate (and
never drift from) a default that lives in code.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

CHEMTEB_CITATION = """\
@article{kasmaee2024chemteb,
  title   = {ChemTEB: Chemical Text Embedding Benchmark, an Overview of Embedding Models
             Performance \\& Efficiency on a Specific Domain},
  author  = {Kasmaee, Ali Shiraee and Khodadad, Mohammad and Saloot, Mohammad Arshi and
             Sherck, Nick and Dokas, Stephen and Mahyar, Hamidreza and Samiee, Soheila},
  journal = {arXiv preprint arXiv:2412.00532},
  year    = {2024}
}
@article{muennighoff2022mteb,
  title   = {MTEB: Massive Text Embedding Benchmark},
  author  = {Muennighoff, Niklas and Tazi, Nouamane and Magne, Lo{\\\"\\i}c and Reimers, Nils},
  journal = {arXiv preprint arXiv:2210.07316},
  year    = {2022}
}
"""

CHEMBENCH_CITATION = """\
@article{mirza2024chembench,
  title   = {Are large language models superhuman chemists?},
  author  = {Mirza, Adrian and Alampara, Nawaf and Kunchapu, Sreekanth and others},
  journal = {arXiv preprint arXiv:2404.01475},
  year    = {2024}
}
"""

REFERENCE_URLS = [
    "https://arxiv.org/abs/2412.00532",
    "https://github.com/embeddings-benchmark/mteb",
]


@dataclass(frozen=True)
class MetricModule:
    """One evaluate module: ``metrics/<name>/`` in the repository, the Space ``chemteb/<name>``.

    Args:
        name: the folder and Space name.
        function: the scoring function it wraps, as ``module:attribute`` (imported on demand, so
            the table costs nothing to read).
        what: one line on what it scores.
        example: the Space widget's example upload, as ``module:attribute`` of a function
            ``(rng) -> (arrays, options)`` beside the scoring function; ``None``: the module's
            Space has an app of its own (``metrics/<name>/app.py`` does not launch the widget).
    """

    name: str
    function: str
    what: str
    example: str | None = None

    def load_function(self) -> Callable[..., Any]:
        return _load(self.function)

    def load_example(self) -> Callable[..., tuple[dict[str, Any], dict[str, Any]]] | None:
        return _load(self.example) if self.example is not None else None


def _load(target: str) -> Callable[..., Any]:
    module, attribute = target.split(":")
    func: Callable[..., Any] = getattr(importlib.import_module(module), attribute)
    return func


#: Every evaluate module the project ships, in the order ``chemteb metrics`` lists them. A test
#: checks that the ``metrics/*/`` folders are exactly these.
METRICS: tuple[MetricModule, ...] = (
    MetricModule(
        "classification",
        "chemteb_eval.scoring:score_classification",
        "logistic-regression probe",
        "chemteb_eval.scoring.classification:example_inputs",
    ),
    MetricModule(
        "clustering",
        "chemteb_eval.scoring:score_clustering",
        "mini-batch k-means, V-measure",
        "chemteb_eval.scoring.clustering:example_inputs",
    ),
    MetricModule(
        "pair_classification",
        "chemteb_eval.scoring:score_pair_classification",
        "best-threshold F1",
        "chemteb_eval.scoring.pair_classification:example_inputs",
    ),
    MetricModule(
        "bitext_mining",
        "chemteb_eval.scoring:score_bitext_mining",
        "top-1 cosine, F1",
        "chemteb_eval.scoring.bitext_mining:example_inputs",
    ),
    MetricModule(
        "retrieval",
        "chemteb_eval.scoring:score_retrieval",
        "exact cosine top-k, nDCG@10",
        "chemteb_eval.scoring.retrieval:example_inputs",
    ),
    MetricModule(
        "chembench", "chemteb_eval.chembench.score:score_chembench", "LLM answers, fraction correct"
    ),
    MetricModule(
        "sts",
        "chemteb_eval.scoring.sts:score_sts",
        "Spearman of cosine, OOV policy",
        "chemteb_eval.scoring.sts:example_inputs",
    ),
    MetricModule("ner", "chemteb_eval.scoring.ner:score_ner", "entity F-beta (seqeval's)"),
)
METRIC_NAMES: tuple[str, ...] = tuple(m.name for m in METRICS)


def keyword_defaults(func: Callable[..., Any]) -> dict[str, Any]:
    """Every keyword-only parameter of a scoring function with its default: the protocol
    parameters and the output switches (``return_items``).

    The evaluate modules' ``_compute`` takes its defaults from here
    (``beta=DEFAULTS["beta"]``), so a default lives in one signature, the function's.
    """
    return {
        name: p.default
        for name, p in inspect.signature(func).parameters.items()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    }


def protocol_defaults(func: Callable[..., Any]) -> dict[str, Any]:
    """The keyword-only parameters of a scoring function with their defaults, less
    ``return_items`` (the per-item evidence the runner keeps; not a protocol setting)."""
    return {k: v for k, v in keyword_defaults(func).items() if k != "return_items"}


def inputs_description(
    func: Callable[..., Any], inputs: str, returns: str, examples: str = ""
) -> str:
    """An evaluate ``inputs_description``: the data arguments, then the protocol parameters.

    Args:
        func: the scoring function the module wraps.
        inputs: one indented line per data argument of ``compute``.
        returns: the output keys.
        examples: doctest examples (``>>>`` lines, indented by four spaces), put under an
            ``Examples:`` heading; evaluate's module test runs them from the class docstring.

    Returns:
        The text evaluate shows as the module's inputs description.
    """
    params = "\n".join(
        f"    {name} (optional, default {default!r})"
        for name, default in protocol_defaults(func).items()
    )
    text = f"Args:\n{inputs.rstrip()}\nProtocol parameters (compute keyword arguments):\n{params}\nReturns:\n{returns}"
    if examples:
        text = f"{text.rstrip()}\nExamples:\n{examples.rstrip()}\n"
    return text


def example_inputs(module_name: str, seed: int = 0) -> tuple[dict[str, Any], dict[str, Any]]:
    """A small random input for a metric module whose Space uses the widget: (arrays for the
    ``.npz``, JSON options), from the example function its row names.

    Raises:
        ValueError: naming ``module_name`` when no row of ``METRICS`` has an example for it.
    """
    row = next((m for m in METRICS if m.name == module_name), None)
    example = row.load_example() if row is not None else None
    if example is None:
        raise ValueError(f"module_name: unknown metric {module_name!r}.")
    import numpy as np  # here: the table is read without numpy (`chemteb metrics`)

    return example(np.random.default_rng(seed))
