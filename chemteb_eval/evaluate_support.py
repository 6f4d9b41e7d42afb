"""Plumbing shared by the ChemTEB evaluate modules (``metrics/<name>/<name>.py``)."""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator
from contextlib import contextmanager
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

    #: The scoring function's parameter names that the module's inputs stand for (``labels``
    #: is ``references``): its errors are told in the caller's names.
    _renames: tuple[tuple[str, str], ...] = ()
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

    def add_batch(self, *, predictions: Any = None, references: Any = None, **kwargs: Any) -> Any:
        """Add a batch of the declared input (checked first: see ``_check_batch``)."""
        self._check_batch({"predictions": predictions, "references": references, **kwargs})
        return super().add_batch(predictions=predictions, references=references, **kwargs)  # type: ignore[misc]

    def add(self, *, prediction: Any = None, reference: Any = None, **kwargs: Any) -> Any:
        """Add one example of the declared input (checked first: see ``_check_batch``)."""
        one = {"predictions": prediction, "references": reference, **kwargs}
        self._check_batch({k: None if v is None else [v] for k, v in one.items()})
        return super().add(prediction=prediction, reference=reference, **kwargs)  # type: ignore[misc]

    def _check_batch(self, batch: dict[str, Any]) -> None:
        """What evaluate's own path would take wrongly, refused as ``compute`` refuses it.

        evaluate picks the first declared feature type that can encode the batch's first value
        and then writes the batch through Arrow: labels "1" and "01" both became int 1 (a
        clustering's v_measure 1.0 became 0.274), a mix of ints and strings became strings,
        NaN and bytes ended in a KeyError from inside evaluate. So labels (a declared
        ``int64``/``string`` column) must be all ints or all strings, the same kind in every
        batch, and the type evaluate encodes them with is the one of that kind."""
        module: Any = self
        names = module._feature_names()
        if batch.get("predictions") is not None and "predictions" not in names:
            raise ValueError(
                f"predictions: not a batch input of this metric (its batch input is "
                f"{', '.join(names)}); pass the other arguments to compute(), as the card shows."
            )
        for name in names:
            declared: set[Any] = {_DTYPE_KINDS.get(dtype) for dtype in self._declared(name)}
            values = batch.get(name)
            if values is None or None in declared:  # not a label column (scores, tag lists)
                continue
            kinds = {_label_kind(name, v) for v in values}
            if len(kinds) > 1:
                raise ValueError(f"{name}: labels must be all ints or all strings, got a mix.")
            if not kinds <= declared:
                raise ValueError(f"{name}: must be {' or '.join(sorted(declared))} labels.")
            seen = getattr(self, "_batch_kinds", {})
            for kind in kinds:
                if seen.setdefault(name, kind) != kind:
                    raise ValueError(
                        f"{name}: this batch's labels are {kind}s, earlier batches' were "
                        f"{seen[name]}s; use one kind."
                    )
            self._batch_kinds = seen

    def _declared(self, name: str) -> set[Any]:
        """The value types evaluate may encode input ``name`` as (``None``: not a plain value)."""
        module: Any = self
        options = module.features if isinstance(module.features, list) else [module.features]
        return {getattr(f.get(name), "dtype", None) for f in options}

    def _infer_feature_from_example(self, example: Any) -> Any:
        # evaluate's own choice takes "01" for int64; ours: the declared type of the labels' kind
        module: Any = self
        wanted = {kind: dtype for dtype, kind in _DTYPE_KINDS.items()}
        kinds = getattr(self, "_batch_kinds", {})
        if isinstance(module.features, list) and kinds:
            for features in module.features:
                dtypes = {k: getattr(v, "dtype", None) for k, v in features.items()}
                if all(dtypes.get(k) == wanted[kind] for k, kind in kinds.items()):
                    return features
        return super()._infer_feature_from_example(example)  # type: ignore[misc]

    def compute(self, *, predictions: Any = None, references: Any = None, **kwargs: Any) -> Any:
        """Compute the metric on the given inputs."""
        self._check_arguments(kwargs)
        return self._compute_checked(predictions, references, kwargs)

    def _compute_checked(self, predictions: Any, references: Any, kwargs: dict[str, Any]) -> Any:
        """``compute`` once the keyword names are checked (a module's own ``compute`` that adds
        an internal argument calls this)."""
        module: Any = self
        if module.num_process != 1 or module.writer is not None:
            with self._in_callers_names():
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
        with self._in_callers_names():
            return module._compute(**kwargs)

    @contextmanager
    def _in_callers_names(self) -> Iterator[None]:
        """Re-raise a scoring function's ``ValueError`` with its parameter names (``labels:``,
        ``test_labels has 2 rows``) as the module's inputs (``references``)."""
        try:
            yield
        except ValueError as exc:
            message = str(exc)
            for internal, public in self._renames:
                message = re.sub(rf"^{internal}:", f"{public}:", message)
                message = re.sub(rf"\b{internal} has\b", f"{public} has", message)
            if message == str(exc):
                raise
            raise ValueError(message) from None


_DTYPE_KINDS = {"int64": "int", "string": "str"}  # declared label types and the labels' kinds


def _label_kind(name: str, value: Any) -> str:
    """``"int"`` or ``"str"`` for one label of a declared ``int64``/``string`` input."""
    if isinstance(value, str):
        return "str"
    if hasattr(value, "item") and getattr(value, "ndim", 1) == 0:  # a numpy scalar
        value = value.item()
    if isinstance(value, int):  # bools too, as compute takes them (pair labels True/False)
        if not -(2**63) <= value < 2**63:
            raise ValueError(f"{name}: label {value} is beyond 64-bit integers.")
        return "int"
    if isinstance(value, (list, tuple)):  # a sequence feature (NER tags): checked elsewhere
        return "sequence"
    raise ValueError(f"{name}: labels must be ints or strings, got {type(value).__name__}.")
