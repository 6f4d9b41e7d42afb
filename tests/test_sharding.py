"""Sharded encoding under torchrun (gloo, CPU): the same embeddings, in order, and the same scores.

Cost: two torchrun launches (2 and 3 processes) on the small PipChem build, ~30 s.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .conftest import REPO_ROOT
from .helpers.cache_files import stored_vectors

# Seconds each (dataset builds, subprocesses, models): out of `scripts/check -m "not slow"`.
pytestmark = pytest.mark.slow

_SCRIPT = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {root!r})
    from tests.helpers.hashing_encoder import HashingEncoder
    from chemteb_eval.runner import run
    report = run(HashingEncoder(), output_dir={out!r}, cache_dir={cache!r}, batch_size=16,
                 progress=False, log=lambda m: None)
    if report.statuses:
        print("RESULT " + json.dumps({{"scores": report.main_scores, "unique": report.encoding["unique"]}}, sort_keys=True))
""")


def _vectors(cache: Path) -> dict[str, bytes]:
    (db,) = cache.glob("*.vectors")
    return stored_vectors(db)


def _launch(tmp: Path, name: str, nproc: int, env: dict[str, str]) -> dict:
    script = tmp / f"{name}.py"
    script.write_text(
        _SCRIPT.format(
            root=str(REPO_ROOT), out=str(tmp / name / "out"), cache=str(tmp / name / "cache")
        )
    )
    if nproc == 1:
        cmd = [sys.executable, str(script)]
    else:
        torchrun = shutil.which("torchrun", path=str(Path(sys.executable).parent)) or "torchrun"
        cmd = [torchrun, "--standalone", f"--nproc_per_node={nproc}", str(script)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert len(lines) == 1, proc.stdout  # only the main process scores
    return json.loads(lines[0][len("RESULT ") :])


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    cache = tmp_path_factory.mktemp("chemteb_cache")
    out = dict(
        os.environ, CHEMTEB_CACHE=str(cache), CHEMTEB_PIPCHEM_SCALE="small", OMP_NUM_THREADS="1"
    )
    subprocess.run(
        [sys.executable, "-c", "from chemteb_eval.data import pipchem; pipchem.ensure_built()"],
        env=out,
        check=True,
        timeout=300,
    )
    return out


@pytest.mark.parametrize("nproc", [2, 3])
def test_torchrun_matches_one_process(nproc: int, env: dict[str, str], tmp_path: Path) -> None:
    single = _launch(tmp_path, "single", 1, env)
    sharded = _launch(tmp_path, "sharded", nproc, env)
    assert single["unique"] % 3 != 0  # an uneven split is exercised
    assert sharded == single
    ref, got = _vectors(tmp_path / "single" / "cache"), _vectors(tmp_path / "sharded" / "cache")
    assert got.keys() == ref.keys() and all(got[k] == ref[k] for k in ref)
    # Only the main process wrote results.
    # (7 tasks and model_meta.json; the run's record is one line of runs.jsonl, not a .json)
    assert len(list((tmp_path / "sharded" / "out").rglob("*.json"))) == 8
    (log,) = (tmp_path / "sharded" / "out").rglob("runs.jsonl")
    assert len(log.read_text().splitlines()) == 1
    # and MTEB's loaders read the sharded run's folder with our values
    from .test_mteb_interop import assert_mteb_reads_ours

    (tmp_path / "mteb").mkdir()
    (tmp_path / "mteb" / "results").symlink_to(tmp_path / "sharded" / "out")
    assert_mteb_reads_ours(tmp_path / "mteb")
