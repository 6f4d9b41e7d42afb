"""Plumbing shared by the ChemTEB evaluate modules (``metrics/<name>/<name>.py``)."""

from __future__ import annotations

import inspect
from typing import Any

from chemteb_eval.metric_docs import CHEMTEB_CITATION, REFERENCE_URLS


def metric_info(
    description: str, inputs_description: str, feature: str, kinds: tuple[str, ...]
) -> Any:
    """The ``evaluate.MetricInfo`` of a ChemTEB module.

    Only one input is declared as a feature (evaluate needs one per call); embeddings stay plain
    ``compute`` keyword arguments, since declared features would send them through Arrow at
    ~100x the cost.

    Args:
        description: the module's description.
        inputs_description: its inputs description (see ``metric_docs.inputs_description``).
        feature: the declared input (``references`` or ``query_ids``).
        kinds: the value types it may hold, in the order evaluate should try them
            (e.g. ``("int64", "string")``: labels may be ints or strings).

    Returns:
        An ``evaluate.MetricInfo``.
    """
    import datasets
    import evaluate

    features = [datasets.Features({feature: datasets.Value(kind)}) for kind in kinds]
    return evaluate.MetricInfo(
        description=description,
        citation=CHEMTEB_CITATION,
        inputs_description=inputs_description,
        features=features if len(features) > 1 else features[0],
        reference_urls=REFERENCE_URLS,
    )


class DirectCompute:
    """A mixin for evaluate modules: in one process, hand the inputs straight to ``_compute``.

    evaluate's ``compute`` writes every declared input through Arrow to a cache file and reads
    it back, encoding each label in Python (~2 µs a label). For ChemTEB's metrics that round
    trip was up to 40% of the whole call (4,096 pairs: 17 ms of math, 7 ms of plumbing) and
    buys nothing in a single process, because our scoring functions validate their inputs
    themselves — and it would change them: Arrow turns a ``bytes`` answer or an int tag into
    text that the function rightly rejects, so the module would score what the function
    refuses. With several processes (``num_process > 1``) or batches already added with
    ``add_batch``, evaluate's own path runs unchanged (those modules check inputs in ``add``).
    """

    #: ``_compute`` parameters that the module's own ``compute`` fills in, never the caller.
    _internal_arguments: tuple[str, ...] = ()
    #: Arguments the module's ``compute`` takes and renames before ``_compute`` sees them.
    _extra_arguments: tuple[str, ...] = ()

    def _public_arguments(self) -> list[str]:
        """The keyword arguments a caller may pass to ``compute``, in signature order."""
        module: Any = self
        names = [n for n in inspect.signature(module._compute).parameters if n != "self"]
        public = [n for n in ("predictions", "references") if n in module._feature_names()]
        public += [n for n in self._extra_arguments if n not in public]
        public += [n for n in names if n not in public and n not in self._internal_arguments]
        return public

    def _check_arguments(self, kwargs: dict[str, Any]) -> None:
        """A keyword the metric does not take is a ValueError naming it and listing those it
        takes (evaluate itself raises a TypeError from inside ``_compute``, after writing the
        inputs out)."""
        public = self._public_arguments()
        for name in kwargs:
            if name not in public:
                raise ValueError(
                    f"{name}: not an argument of this metric; it takes {', '.join(public)}."
                )

    def compute(self, *, predictions: Any = None, references: Any = None, **kwargs: Any) -> Any:
        """Compute the metric on the given inputs."""
        self._check_arguments(kwargs)
        return self._compute_checked(predictions, references, kwargs)

    def _compute_checked(self, predictions: Any, references: Any, kwargs: dict[str, Any]) -> Any:
        """``compute`` once the keyword names are checked (a module's own ``compute`` that adds
        an internal argument calls this)."""
        module: Any = self
        if module.num_process != 1 or module.writer is not None:
            return super().compute(predictions=predictions, references=references, **kwargs)  # type: ignore[misc]
        feature_names = module._feature_names()
        if predictions is not None:
            if "predictions" not in feature_names:
                raise ValueError(
                    "predictions: this metric scores embeddings, not predictions; see the card's Inputs."
                )
            kwargs["predictions"] = predictions
        if references is not None:
            if "references" not in feature_names:
                raise ValueError("references: not an input of this metric; see the card's Inputs.")
            kwargs["references"] = references
        missing = [name for name in feature_names if kwargs.get(name) is None]
        if missing:
            raise ValueError(
                f"{missing[0]}: missing; this metric's inputs are {feature_names} plus the "
                "keyword arguments listed in its card."
            )
        # evaluate would also fix numpy's global seed here; our functions seed their own RNGs.
        return module._compute(**kwargs)
