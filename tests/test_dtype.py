"""bfloat16 on a CPU with native bfloat16 (issue 39): refused where the CPU lacks it or for
float16, its own cache entries and results folder, scores within 0.005 of float32's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chemteb_eval.cli import main as chemteb_main

torch = pytest.importorskip("torch")

from chemteb_eval.models import sentence_transformers as st  # noqa: E402


def test_float16_on_a_cpu_is_refused_naming_precision() -> None:
    with pytest.raises(ValueError, match="precision: float16 needs a CUDA device"):
        st.check_half_precision("float16", "cpu")
    st.check_half_precision("float16", "cuda")
    st.check_half_precision("bfloat16", "cuda")


def test_bfloat16_on_a_cpu_without_native_bfloat16_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(st, "native_bfloat16", lambda: False)
    with pytest.raises(ValueError, match=r"needs native bfloat16 .* this CPU lacks"):
        st.check_half_precision("bfloat16", "cpu")
    monkeypatch.setattr(st, "native_bfloat16", lambda: True)
    st.check_half_precision("bfloat16", "cpu")
    with pytest.raises(ValueError, match="mps"):
        st.check_half_precision("bfloat16", "mps")


def test_the_native_check_agrees_with_the_cpus_flags() -> None:
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        pytest.skip("no /proc/cpuinfo here to compare with")
    assert st.native_bfloat16() == ("avx512_bf16" in flags or "amx_bf16" in flags)


@pytest.mark.slow
def test_a_bfloat16_run_has_its_own_cache_and_folder_and_scores_within_0_005(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The docs' custom-task example, float32 then bfloat16 over one embedding cache: the
    bfloat16 run encodes every text again (never float32's vectors), writes to MTEB's
    experiments/dtype_bfloat16/, and moves no main score by more than 0.005."""
    import re

    from .conftest import REPO_ROOT

    if not st.native_bfloat16():
        pytest.skip("this CPU has no native bfloat16 (AVX512-BF16/AMX)")
    example = (REPO_ROOT / "docs" / "custom_tasks.md").read_text(encoding="utf-8")
    for name, body in re.findall(r"<!-- file: (\S+) -->\n```\w*\n(.*?)```", example, flags=re.S):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(body)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CHEMTEB_CACHE", str(tmp_path / "cache"))
    common = [
        "run",
        "--task-file",
        "solvents.yaml",
        "synonyms.yaml",
        "--backend",
        "torch",
        "--quiet",
    ]
    assert chemteb_main(common) == 0
    assert chemteb_main([*common, "--dtype", "bfloat16"]) == 0
    printed = capsys.readouterr().out
    assert printed.count(", 0 from the cache") == 2  # bfloat16 never took float32's vectors
    (plain,) = tmp_path.glob("results/*/*/SolventRetrieval.json")
    revision = plain.parent
    folder = revision / "experiments" / "dtype_bfloat16"
    meta = json.loads((folder / "model_meta.json").read_text())
    assert meta["experiment_kwargs"] == {"dtype": "bfloat16"}
    for task in ("SolventRetrieval", "SynonymPairs"):
        a = json.loads((revision / f"{task}.json").read_text())["scores"]["test"][0]["main_score"]
        b = json.loads((folder / f"{task}.json").read_text())["scores"]["test"][0]["main_score"]
        assert abs(a - b) <= 0.005, (task, a, b)
    # a float32 rerun is still float32's: every vector from its own cache entries
    assert chemteb_main([*common, "--overwrite"]) == 0
    assert "0 encoded" in capsys.readouterr().out
