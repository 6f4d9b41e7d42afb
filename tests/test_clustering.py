from __future__ import annotations

import numpy as np
import pytest

from chemteb_eval.scoring import score_clustering


def test_well_separated_clusters_score_one(rng: np.random.Generator) -> None:
    centres = np.eye(5) * 50
    x = np.vstack([c + rng.standard_normal((20, 5)) for c in centres]).astype(np.float32)
    labels = np.repeat(["aldehyde", "ketone", "ester", "amide", "ether"], 20)
    r = score_clustering(x, labels)
    assert r == {"v_measure": 1.0, "homogeneity": 1.0, "completeness": 1.0, "main_score": 1.0}


def test_v_measure_is_harmonic_mean(rng: np.random.Generator) -> None:
    x = rng.standard_normal((120, 8)).astype(np.float32)
    r = score_clustering(x, rng.integers(0, 4, 120))
    h, c = r["homogeneity"], r["completeness"]
    assert r["v_measure"] == pytest.approx(2 * h * c / (h + c))


def test_deterministic_and_seeded(rng: np.random.Generator) -> None:
    x = rng.standard_normal((300, 8)).astype(np.float32)
    y = rng.integers(0, 6, 300)
    assert score_clustering(x, y) == score_clustering(x, y)
    assert score_clustering(x, y, n_clusters=3)["v_measure"] != score_clustering(x, y)["v_measure"]
