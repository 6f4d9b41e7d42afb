"""Variants of a model's vectors (``scoring.compression``): MTEB 2.26's CompressionWrapper
on the same vectors, sentence-transformers' truncation, and what a vector weighs."""

from __future__ import annotations

import contextlib
import math

import numpy as np
import pytest

from chemteb_eval.scoring.compression import (
    PRECISIONS,
    Compression,
    bytes_per_vector,
    check_dims,
    check_precisions,
    compress,
)


def _mteb_quantize(vectors: np.ndarray, precision: str) -> np.ndarray:
    torch = pytest.importorskip("torch")
    pytest.importorskip("mteb")
    from mteb.models import CompressionWrapper
    from mteb.types import OutputDType

    # the wrapper's constructor reads and rewrites the wrapped model's meta only
    class _Model:
        class mteb_model_meta:
            output_dtypes = None
            experiment_kwargs = None

            @classmethod
            def model_copy(cls, update):
                return cls

    wrapper = CompressionWrapper(_Model(), OutputDType(precision))  # type: ignore[arg-type]
    with (
        pytest.warns(UserWarning)
        if len(vectors) < 10_000 and "int" in precision
        else contextlib.nullcontext()
    ):
        out = wrapper._quantize_embeddings(torch.tensor(vectors).float())
    return out.float().numpy()


@pytest.mark.parametrize(
    "precision", ["int8", "uint8", "int4", "uint4", "binary", "float16", "bfloat16"]
)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_each_precision_equals_mtebs_compression_wrapper(precision: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    scale = rng.uniform(0.01, 3.0, size=48).astype(np.float32)
    vectors = (rng.standard_normal((257, 48)) * scale).astype(np.float32)
    ours = compress(vectors, Compression(precision=precision))
    theirs = _mteb_quantize(vectors, precision)
    assert ours.dtype == np.float32
    np.testing.assert_array_equal(ours, theirs.astype(np.float32))


def test_truncation_then_quantization_is_mtebs_wrapper_on_truncated_vectors() -> None:
    rng = np.random.default_rng(5)
    vectors = rng.standard_normal((100, 64)).astype(np.float32)
    ours = compress(vectors, Compression(dim=16, precision="int8"))
    np.testing.assert_array_equal(
        ours, _mteb_quantize(np.ascontiguousarray(vectors[:, :16]), "int8")
    )


def test_truncation_is_sentence_transformers_truncate_embeddings() -> None:
    torch = pytest.importorskip("torch")
    from sentence_transformers.util import truncate_embeddings

    vectors = np.random.default_rng(3).standard_normal((9, 32)).astype(np.float32)
    theirs = truncate_embeddings(torch.tensor(vectors), 8).numpy()
    np.testing.assert_array_equal(compress(vectors, Compression(dim=8)), theirs)
    # renormalised: unit rows, in the truncated vectors' directions
    unit = compress(vectors, Compression(dim=8), renormalise=True)
    np.testing.assert_allclose(np.linalg.norm(unit, axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(
        unit * np.linalg.norm(theirs, axis=1, keepdims=True), theirs, rtol=1e-5
    )


def test_hand_checked_int8_levels() -> None:
    # one dimension from -1 to 1.55: step 2.55/255 = 0.01; x = 0.3 is 130 steps up, minus 128
    vectors = np.array([[-1.0], [0.3], [1.55]], dtype=np.float32)
    levels = compress(vectors, Compression(precision="int8"))[:, 0]
    assert levels[0] == -128 and levels[2] == 127
    assert levels[1] in (1.0, 2.0)  # floor of 129.99... or 130 in float32: MTEB's floor too
    assert compress(vectors, Compression(precision="binary"))[:, 0].tolist() == [0.0, 1.0, 1.0]


def test_nan_rows_stay_nan_and_take_no_part_in_calibration() -> None:
    vectors = np.array([[0.0, 1.0], [np.nan, np.nan], [1.0, 3.0]], dtype=np.float32)
    out = compress(vectors, Compression(precision="uint8"))
    assert np.isnan(out[1]).all()
    # the top row: floor(1 / float32(1/255)) = floor(254.99998) = 254 in float32, as in MTEB
    assert out[0].tolist() == [0.0, 0.0] and out[2].tolist() == [254.0, 254.0]


def test_a_constant_dimension_gives_its_lowest_level_not_nan() -> None:
    vectors = np.array([[0.5, 1.0], [0.5, 2.0]], dtype=np.float32)
    out = compress(vectors, Compression(precision="int8"))
    assert out[:, 0].tolist() == [-128.0, -128.0]
    assert np.isfinite(out).all()


def test_the_callers_vectors_are_never_changed() -> None:
    vectors = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
    before = vectors.copy()
    for precision in PRECISIONS:
        compress(vectors, Compression(dim=3, precision=precision), renormalise=True)
    np.testing.assert_array_equal(vectors, before)


@pytest.mark.parametrize(
    ("dim", "precision", "expected"),
    [
        (384, "float32", 1536),
        (384, "int8", 384),
        (384, "binary", 48),
        (100, "binary", 13),
        (7, "int4", 4),
        (256, "bfloat16", 512),
    ],
)
def test_bytes_per_vector(dim: int, precision: str, expected: int) -> None:
    assert bytes_per_vector(dim, precision) == expected
    assert expected == math.ceil(
        dim * {"float32": 32, "int8": 8, "binary": 1, "int4": 4, "bfloat16": 16}[precision] / 8
    )


def test_experiment_kwargs_name_mtebs_folder() -> None:
    pytest.importorskip("mteb")
    from mteb.models.model_meta import _serialize_experiment_kwargs_to_name

    from chemteb_eval.results.io import experiment_name

    for variant in (Compression(256, "int8"), Compression(None, "binary"), Compression(64)):
        kwargs = variant.kwargs()
        assert experiment_name(kwargs) == _serialize_experiment_kwargs_to_name(kwargs)
    assert Compression().kwargs() == {} and Compression().plain


@pytest.mark.parametrize("bad", ["0", "-5", "abc", "2.5", "", ",", [True], "999999"])
def test_bad_dims_name_the_argument(bad: object) -> None:
    with pytest.raises(ValueError, match="dims"):
        check_dims(bad, full=384)


def test_dims_and_precisions_parse() -> None:
    assert check_dims("128, 256,128") == (256, 128)
    assert check_precisions("binary,INT8") == ("int8", "binary")
    with pytest.raises(ValueError, match="precisions: 'int3'"):
        check_precisions("int3")
    with pytest.raises(ValueError, match="precision"):
        Compression(precision="float8_e4m3fn")
