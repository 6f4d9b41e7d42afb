"""One record per model backend: every fact about a backend that code outside its encoder needs.

The spec parser (``spec.py``), ``load_encoder``, the ``chemteb run -m`` help, ChemBench's
generators, the extras check and the runner's embedding-cache key read these records; none of
them keeps its own list of backends. Adding a backend is its name in ``Backend``, one
``ModelBackend`` here and its encoder class, named by a ``"module:Class"`` string (as lm-eval's
``MODEL_MAPPING``) whose ``from_spec(spec, options)`` loads it and whose ``ModelMeta.framework``
is the record's ``framework``.

This module imports nothing heavy (no numpy, torch or httpx), and none of the encoder modules it
names — they import it, so a table that imported them would close a circle: the CLI builds its
help from it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, get_args

if TYPE_CHECKING:
    from .base import Encoder

__all__ = [
    "BACKEND_TABLE",
    "DEFAULT_MODEL",
    "Backend",
    "BackendRole",
    "Install",
    "LoadOptions",
    "ModelBackend",
    "backend_of",
    "backend_record",
    "cache_variant",
    "check_precision",
    "experiment_kwargs",
    "framework_of",
    "model_help",
    "vector_software",
]

Backend = Literal[
    "sentence-transformers",
    "transformers",
    "transformers-cls",
    "model2vec",
    "word2vec",
    "fasttext",
    "openai",
    "onnx",
    "onnx-int8",
    "litellm",
]
BackendRole = Literal["encoder", "generator"]
# The model a plain ``chemteb run`` evaluates (bundled: it runs offline).
DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


@dataclass(frozen=True)
class Install:
    """What one role of a backend needs beyond the core install.

    Args:
        extra: the pyproject extra (``pip install "chemteb-eval[EXTRA]"``); ``None``: the core
            install is enough (httpx).
        modules: the modules that tell the extra is installed.
    """

    extra: str | None
    modules: tuple[str, ...] = ()


@dataclass(frozen=True)
class LoadOptions:
    """What ``load_encoder`` hands a backend's loader besides the spec."""

    device: str | None = None
    precision: str = "float32"
    api_base: str | None = None
    log: Callable[[str], None] = print


Loader = Callable[[Any, LoadOptions], "Encoder"]  # (ModelSpec, LoadOptions) -> Encoder


@dataclass(frozen=True)
class ModelBackend:
    """The facts of one backend.

    Args:
        name: the spec prefix (``transformers`` in ``transformers:ID``); a name without a prefix
            is ``sentence-transformers``'s.
        takes: what follows the prefix, for help (``ID``, ``PATH``, ``MODEL``).
        summary: one line for the ``-m`` help.
        hub_ids: whether its name may be a Hub model id (else a file or an API's model name).
        encoder: what it needs to embed text (``None``: it embeds nothing).
        generator: what it needs to generate text for ChemBench (``None``: it generates
            nothing).
        load: its encoder class as ``"module:Class"``, imported only when a model loads; the
            class's ``from_spec(spec, options)`` loads it (``None`` for a generator-only
            backend).
        framework: what its encoder's ``ModelMeta.framework`` says (``None``: no encoder); the
            result files record it, and it names the record that keys the embedding cache.
        cache_variant: the ``variant`` of its embedding-cache key in float32; ``None`` is the
            plain key, by model name, revision and source. A backend whose names also load
            through another (``transformers:ID``, ``onnx:ID`` and a plain ``ID``) needs one of
            its own, or its vectors and the other's would share a cache file. The values are
            the keys existing caches were written with: never change one.
        dtypes: whether its encoder computes in the float16/bfloat16 ``--precision`` asks for
            (else the vectors are float32's whatever is asked, and the dtype is refused).
        software: the distributions (pip names) whose versions can move its vectors (their
            arithmetic, tokenisation or defaults): recorded with every result and part of its
            embedding cache's identity (``vector_software``). None for an API: its server
            computes the vectors.
    """

    name: Backend
    takes: str
    summary: str
    hub_ids: bool
    encoder: Install | None
    generator: Install | None
    load: str | None
    framework: str | None
    cache_variant: str | None
    dtypes: bool = False
    software: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if len({self.encoder is None, self.load is None, self.framework is None}) != 1:
            raise ValueError(f"{self.name}: an encoder role needs a loader and a framework.")
        if self.encoder is None and self.generator is None:
            raise ValueError(f"{self.name}: a backend embeds or generates.")

    @property
    def prefix(self) -> str:
        """How a spec starts for this backend (``transformers:``; ``""``: no prefix)."""
        return "" if self.name == "sentence-transformers" else f"{self.name}:"

    @property
    def roles(self) -> tuple[BackendRole, ...]:
        """``encoder`` (it embeds text) and/or ``generator`` (it generates for ChemBench)."""
        roles: tuple[BackendRole, ...] = ("encoder", "generator")
        return tuple(role for role in roles if self.install(role) is not None)

    def install(self, role: BackendRole = "encoder") -> Install | None:
        """What the role needs (``None``: the backend has no such role)."""
        return self.encoder if role == "encoder" else self.generator

    def loader(self) -> Loader:
        """The encoder class's ``from_spec``, its module imported now."""
        if self.load is None:
            raise ValueError(f"backend: {self.name} embeds nothing; it has no encoder.")
        module, _, name = self.load.partition(":")
        loader: Loader = getattr(importlib.import_module(module), name).from_spec
        return loader


# -- the table --------------------------------------------------------------------------------

_TORCH_ST = Install("run", ("torch", "sentence_transformers"))
_TORCH_TRANSFORMERS = Install("run", ("torch", "transformers"))
# export needs torch; running needs onnxruntime (in the run extra: it is the fast CPU path)
_ONNX = Install("run", ("torch", "sentence_transformers", "onnxruntime", "onnx"))
_GENSIM = Install("static", ("gensim",))
_CORE = Install(None)
# what can move a torch model's vectors: its kernels, its tokenizer, the libraries' defaults
_TRANSFORMERS_SOFTWARE = ("torch", "transformers", "tokenizers")
_TORCH_SOFTWARE = (*_TRANSFORMERS_SOFTWARE, "sentence-transformers")
_ONNX_SOFTWARE = ("onnxruntime", "onnx", *_TORCH_SOFTWARE)  # torch exports the graph and pools

_BACKENDS = (
    ModelBackend(
        name="sentence-transformers",
        takes="ID or FOLDER",
        summary="sentence-transformers",
        hub_ids=True,
        encoder=_TORCH_ST,
        generator=None,
        load="chemteb_eval.models.sentence_transformers:SentenceTransformerEncoder",
        framework="sentence-transformers",
        cache_variant=None,
        software=_TORCH_SOFTWARE,
        dtypes=True,
    ),
    ModelBackend(
        name="transformers",
        takes="ID",
        summary="plain transformers, mean pooling",
        hub_ids=True,
        encoder=_TORCH_TRANSFORMERS,
        generator=Install("chembench", ("torch", "transformers")),
        load="chemteb_eval.models.transformers_pooling:TransformersEncoder",
        framework="transformers (mean pooling)",
        cache_variant="transformers (mean pooling)",
        software=_TRANSFORMERS_SOFTWARE,
    ),
    ModelBackend(
        name="transformers-cls",
        takes="ID",
        summary="plain transformers, CLS pooling",
        hub_ids=True,
        encoder=_TORCH_TRANSFORMERS,
        generator=None,
        load="chemteb_eval.models.transformers_pooling:TransformersEncoder",
        framework="transformers (cls pooling)",
        cache_variant="transformers (cls pooling)",
        software=_TRANSFORMERS_SOFTWARE,
    ),
    ModelBackend(
        name="model2vec",
        takes="ID",
        summary="a model2vec static model",
        hub_ids=True,
        encoder=Install("static", ("model2vec",)),
        generator=None,
        load="chemteb_eval.models.static:Model2VecEncoder",
        framework="model2vec",
        cache_variant=None,
        software=("model2vec", "tokenizers", "numpy"),
    ),
    ModelBackend(
        name="word2vec",
        takes="PATH",
        summary="word vectors: word2vec text/binary or a gensim save",
        hub_ids=False,
        encoder=_GENSIM,
        generator=None,
        load="chemteb_eval.models.static:WordVectorEncoder",
        framework="word vectors (gensim)",
        cache_variant=None,
        software=("gensim", "numpy"),
    ),
    ModelBackend(
        name="fasttext",
        takes="PATH",
        summary="FastText vectors: a Facebook .bin or a gensim .model",
        hub_ids=False,
        encoder=_GENSIM,
        generator=None,
        load="chemteb_eval.models.static:WordVectorEncoder",
        framework="fasttext (gensim)",
        cache_variant=None,
        software=("gensim", "numpy"),
    ),
    ModelBackend(
        name="openai",
        takes="MODEL",
        summary="an OpenAI-compatible API at --api-base or $OPENAI_BASE_URL",
        hub_ids=False,
        encoder=_CORE,
        generator=_CORE,
        load="chemteb_eval.models.http:HTTPEmbeddingEncoder",
        framework="openai-compatible-http",
        cache_variant=None,
    ),
    ModelBackend(
        name="onnx",
        takes="ID",
        summary="sentence-transformers in ONNX Runtime, CPU",
        hub_ids=True,
        encoder=_ONNX,
        generator=None,
        load="chemteb_eval.models.onnx:OnnxEncoder",
        framework="onnxruntime",
        cache_variant="onnxruntime",
        software=_ONNX_SOFTWARE,
        dtypes=True,  # it refuses them itself, with its own line
    ),
    ModelBackend(
        name="onnx-int8",
        takes="ID",
        summary="the same, int8-quantized",
        hub_ids=True,
        encoder=_ONNX,
        generator=None,
        load="chemteb_eval.models.onnx:OnnxEncoder",
        framework="onnxruntime-int8 (per text)",
        cache_variant="onnxruntime-int8 (per text)",
        software=_ONNX_SOFTWARE,
        dtypes=True,
    ),
    ModelBackend(
        name="litellm",
        takes="PROVIDER/MODEL",
        summary="a chat model through LiteLLM; generation only",
        hub_ids=False,
        encoder=None,
        generator=Install("chembench", ("litellm", "tenacity")),
        load=None,
        framework=None,
        cache_variant=None,
    ),
)

BACKEND_TABLE: Mapping[str, ModelBackend] = MappingProxyType({b.name: b for b in _BACKENDS})
assert tuple(BACKEND_TABLE) == get_args(Backend), "every Backend needs one record, in order"

# The record of what wrote a ``ModelMeta.framework``: one record per framework.
_BY_FRAMEWORK: Mapping[str, ModelBackend] = MappingProxyType(
    {b.framework: b for b in _BACKENDS if b.framework is not None}
)
assert len(_BY_FRAMEWORK) == sum(b.framework is not None for b in _BACKENDS), "frameworks clash"
# Frameworks earlier versions wrote, whose caches stay theirs: the batched int8 export's vectors
# (before int8 ran per text) differ from both ONNX backends' of today.
_RETIRED_VARIANTS: Mapping[str, str] = MappingProxyType({"onnxruntime-int8": "onnxruntime-int8"})


def backend_record(name: str) -> ModelBackend:
    """The record of backend ``name``; ``ValueError`` naming the known backends otherwise."""
    try:
        return BACKEND_TABLE[name]
    except KeyError:
        raise ValueError(
            f"backend: {name!r} is not a model backend; use one of {list(BACKEND_TABLE)}."
        ) from None


def framework_of(name: Backend) -> str:
    """What the encoder of backend ``name`` writes as its ``ModelMeta.framework``."""
    framework = BACKEND_TABLE[name].framework
    if framework is None:
        raise ValueError(f"backend: {name} embeds nothing; it has no encoder framework.")
    return framework


def cache_variant(framework: str, precision: str) -> str | None:
    """The ``variant`` of a model's embedding-cache key: its backend record's in float32 (the
    backend named by what its meta says ran, after any fallback), and ``FRAMEWORK/PRECISION`` in
    float16/bfloat16. An encoder from outside the table (an ``Encoder`` object) keys the plain
    file, as it always did."""
    if precision != "float32":
        return f"{framework}/{precision}"
    record = _BY_FRAMEWORK.get(framework)
    return record.cache_variant if record is not None else _RETIRED_VARIANTS.get(framework)


def vector_software(framework: str, device: str | None = None) -> dict[str, str]:
    """The installed versions of what can move the vectors of ``framework`` (its backend
    record's ``software``) and the kernel set that computes them on ``device`` (``KERNELS``:
    another CPU's instruction set rounds otherwise). Empty for an API (its server computes
    them) and for an encoder from outside the table (what it runs is not known)."""
    from chemteb_eval._env import installed_versions

    from ._kernels import KERNELS, kernel_set

    record = _BY_FRAMEWORK.get(framework)
    if record is None or not record.software:
        return {}
    return {**installed_versions(record.software), KERNELS: kernel_set(device)}


def experiment_kwargs(framework: str, precision: str) -> dict[str, str]:
    """What makes a run another variant of its model than the model as its authors run it:
    the backend, where its vectors differ (``backend``: ONNX Runtime, its int8 export, plain
    transformers pooling — every backend whose cache has a variant of its own), and a compute
    dtype other than float32 (``dtype``). Empty for the model itself. The results of a variant
    go to MTEB's ``experiments/<name>/`` folder, never into the model's own."""
    out: dict[str, str] = {}
    record = _BY_FRAMEWORK.get(framework)
    if record is not None and record.cache_variant is not None:
        out["backend"] = record.name
    if precision != "float32":
        out["dtype"] = precision
    return out


def check_precision(record: ModelBackend | None, precision: str) -> None:
    """A dtype other than float32 only where the backend computes in it (sentence-transformers
    on CUDA; ONNX Runtime refuses it with its own line). Elsewhere the vectors are float32's
    whatever is asked, and a dtype label would split one model into two rows and two caches.
    ``record`` None: an encoder from outside the table, whose precision is its own affair."""
    if precision == "float32" or record is None or record.dtypes:
        return
    raise ValueError(
        f"precision: {precision} is for sentence-transformers models (on CUDA, or bfloat16 on "
        "a CPU with native bfloat16); a "
        f"{record.name} model computes in its own precision: drop --precision."
    )


def backend_of(framework: str) -> ModelBackend | None:
    """The backend record whose encoders write ``framework`` (``None``: none of ours)."""
    return _BY_FRAMEWORK.get(framework)


def model_help(role: BackendRole = "encoder") -> str:
    """Each backend of ``role`` as ``prefix:TAKES (summary)``, for a ``-m`` help."""
    return "; ".join(
        f"{b.prefix}{b.takes} ({b.summary})" for b in _BACKENDS if b.install(role) is not None
    )
