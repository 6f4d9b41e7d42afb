"""The Hub side against a loopback Hub (tests/helpers/fake_hub.py): the real huggingface_hub, evaluate and
datasets clients run in subprocesses whose HF_ENDPOINT points at it (they read it at import)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from chemteb_eval import __version__
from chemteb_eval.hub.bundle import bundle_space
from tests.conftest import REPO_ROOT
from tests.helpers.fake_hub import FakeHub

sys.path.insert(0, str(REPO_ROOT / "space"))
from synthetic import write_synthetic_results

# Seconds each (dataset builds, subprocesses, models): out of `scripts/check -m "not slow"`.
pytestmark = pytest.mark.slow

TOKEN = "hf_alice_write"


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    server = FakeHub()
    server.add_token(TOKEN, "alice", orgs=("chemteb",))
    server.add_token("hf_alice_read", "alice", orgs=("chemteb",), write=False)
    yield server
    server.close()


def _env(
    hub: FakeHub, tmp_path: Path, token: str | None = TOKEN, endpoint: str | None = None
) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(
        {
            "HF_ENDPOINT": endpoint or hub.url,
            "HF_HOME": str(tmp_path / "hf-home"),
            "HF_HUB_OFFLINE": "0",
            "HF_EVALUATE_OFFLINE": "0",
            "HF_DATASETS_OFFLINE": "0",
            "HF_HUB_DISABLE_XET": "1",
            "HF_HUB_DISABLE_TELEMETRY": "1",
            "HF_HUB_ETAG_TIMEOUT": "5",
            "HF_HUB_DOWNLOAD_TIMEOUT": "5",
        }
    )
    if token:
        env["HF_TOKEN"] = token
    return env


def chemteb(
    hub: FakeHub, tmp_path: Path, *args: str, token: str | None = TOKEN, endpoint: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "chemteb_eval.cli", *args],
        capture_output=True,
        text=True,
        env=_env(hub, tmp_path, token, endpoint),
        timeout=300,
        cwd=tmp_path,
    )


def python(hub: FakeHub, tmp_path: Path, code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env=_env(hub, tmp_path),
        timeout=300,
        cwd=tmp_path,
    )


# -- publish-metrics and evaluate.load -------------------------------------------------------


def test_publish_metrics_then_evaluate_load_from_the_hub(hub: FakeHub, tmp_path: Path) -> None:
    dry = chemteb(hub, tmp_path, "publish-metrics", "--namespace", "chemteb", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "would upload" in dry.stdout and not hub.repos  # a dry run creates nothing

    done = chemteb(hub, tmp_path, "publish-metrics", "--namespace", "chemteb")
    assert done.returncode == 0, done.stderr
    names = ("classification", "clustering", "pair_classification", "bitext_mining", "retrieval")
    for name in names:
        repo = hub.repos[("space", f"chemteb/{name}")]
        assert repo.sdk == "gradio"
        files = hub.files(f"chemteb/{name}", repo_type="space")
        # the folder made self-contained (tests/test_bundle.py): exactly the generated files
        bundle = bundle_space(REPO_ROOT / "metrics" / name, name)
        published = {k: v for k, v in files.items() if k != ".gitattributes"}  # the repo's own
        assert published == {path: text.encode() for path, text in bundle.files.items()}
        for local in ("README.md", "tests.py"):  # these as they are in the checkout
            assert files[local] == (REPO_ROOT / "metrics" / name / local).read_bytes()
        assert hub.commit(f"chemteb/{name}", repo_type="space").message.endswith(
            f"publish the {name} metric"
        )

    rng = np.random.default_rng(7)
    a = rng.standard_normal((60, 8)).astype(np.float32)
    b = (a + rng.standard_normal((60, 8))).astype(np.float32)
    labels = rng.integers(0, 2, 60)
    np.savez(tmp_path / "inputs.npz", a=a, b=b, labels=labels)
    code = """
import json, sys, numpy as np, evaluate
from huggingface_hub import snapshot_download
x = np.load("inputs.npz")
args = dict(embeddings1=x["a"], embeddings2=x["b"], references=x["labels"])
remote = evaluate.load("chemteb/pair_classification").compute(**args)
# The offline route: a local folder named like the module, then evaluate.load(folder).
snapshot_download("chemteb/pair_classification", repo_type="space", local_dir="pair_classification")
offline_route = evaluate.load("./pair_classification").compute(**args)
print(json.dumps({"remote": remote, "offline_route": offline_route}))
"""
    loaded = python(hub, tmp_path, code)
    assert loaded.returncode == 0, loaded.stderr
    got = json.loads(loaded.stdout.strip().splitlines()[-1])

    import evaluate

    local = evaluate.load(str(REPO_ROOT / "metrics" / "pair_classification")).compute(
        embeddings1=a, embeddings2=b, references=labels
    )
    assert got["remote"] == pytest.approx(local) and got["offline_route"] == pytest.approx(local)
    assert got["remote"]["max_f1"] == local["max_f1"]
    # evaluate asks for its own version's tag first, then main.
    tried = [r for r in hub.requests if r.endswith("/pair_classification.py")]
    assert any("/resolve/v0.4.6/" in r for r in tried) and any("/resolve/main/" in r for r in tried)

    again = chemteb(
        hub, tmp_path, "publish-metrics", "--namespace", "chemteb", "--metric", "retrieval"
    )
    assert again.returncode == 0, again.stderr  # the repo exists: updated in place


def test_publish_errors_say_what_to_do(hub: FakeHub, tmp_path: Path) -> None:
    no_token = chemteb(hub, tmp_path, "publish-metrics", "--namespace", "chemteb", token=None)
    assert no_token.returncode == 1
    assert "no Hugging Face token" in no_token.stderr and "hf auth login" in no_token.stderr
    read_only = chemteb(
        hub, tmp_path, "publish-metrics", "--namespace", "chemteb", token="hf_alice_read"
    )
    assert read_only.returncode == 1 and "no write access" in read_only.stderr
    elsewhere = chemteb(hub, tmp_path, "publish-metrics", "--namespace", "someone-else")
    assert elsewhere.returncode == 1 and "no write access" in elsewhere.stderr
    down = chemteb(
        hub, tmp_path, "publish-metrics", "--namespace", "chemteb", endpoint="http://127.0.0.1:9"
    )
    assert down.returncode == 1 and "cannot reach http://127.0.0.1:9" in down.stderr
    for done in (no_token, read_only, elsewhere, down):
        assert "Traceback" not in done.stderr
    bad = chemteb(hub, tmp_path, "publish-metrics", "--namespace", "chemteb", "--metric", "bleu")
    assert bad.returncode == 2 and "unknown metric" in bad.stderr


# -- publish-dataset and load_dataset ------------------------------------------------------


def test_publish_a_pipchem_dataset_and_load_it_back(hub: FakeHub, tmp_path: Path) -> None:
    task = "PipChemNameSMILESPC"
    done = chemteb(
        hub,
        tmp_path,
        "publish-dataset",
        "--namespace",
        "chemteb",
        "--scale",
        "small",
        "--task",
        task,
    )
    assert done.returncode == 0, done.stderr
    files = hub.files(f"chemteb/{task}", repo_type="dataset")
    assert "README.md" in files and any(name.endswith(".parquet") for name in files)
    assert b"configs:" in files["README.md"]
    sha = hub.repos[("dataset", f"chemteb/{task}")].refs["main"]
    code = """
import json, sys
from datasets import load_dataset
ds = load_dataset(sys.argv[1], revision=sys.argv[2])
print(json.dumps({split: ds[split].num_rows for split in ds}))
"""
    loaded = python(hub, tmp_path, code, f"chemteb/{task}", sha)
    assert loaded.returncode == 0, loaded.stderr
    rows = json.loads(loaded.stdout.strip().splitlines()[-1])
    assert rows and all(n > 0 for n in rows.values())

    not_a_dataset = chemteb(
        hub, tmp_path, "publish-dataset", "--folder", str(tmp_path), "--repo-id", "chemteb/x"
    )
    assert not_a_dataset.returncode == 2 and "not a Hub-layout dataset" in not_a_dataset.stderr


# -- push-results ----------------------------------------------------------------------------

EXISTING_CARD = """---
license: apache-2.0
library_name: sentence-transformers
tags:
- feature-extraction
custom_field: keep me
model-index:
- name: alice/model
  results:
  - task:
      type: text-classification
    dataset:
      name: MTEB Banking77Classification (default)
      type: mteb/banking77
      config: default
      split: test
      revision: 0fd18e25b25c072e09e0d92ab615fda904d66300
    metrics:
    - type: accuracy
      value: 0.81
---

# alice/model

A model card that must keep its text.
"""


def _results(tmp_path: Path) -> Path:
    root = write_synthetic_results(tmp_path / "results", n_models=1, seed=5)
    folder = next(root.iterdir()) / ("0" * 40)
    keep = {
        "ChemNQRetrieval.json",
        "SDSGlovesClassification.json",
        "PubChemSynonymPC.json",
        "model_meta.json",
    }
    for path in folder.iterdir():
        if path.name not in keep:
            path.unlink()
    return folder


def test_push_results_merges_into_the_card(hub: FakeHub, tmp_path: Path) -> None:
    hub.add_commit(
        "alice/model",
        {"README.md": EXISTING_CARD.encode(), "config.json": b"{}"},
        repo_type="model",
    )
    results = _results(tmp_path)
    before = hub.repos[("model", "alice/model")].refs["main"]

    dry = chemteb(
        hub, tmp_path, "push-results", str(results), "--repo-id", "alice/model", "--dry-run"
    )
    assert dry.returncode == 0, dry.stderr
    assert "+model-index:" in dry.stdout or "+  - task:" in dry.stdout
    assert hub.repos[("model", "alice/model")].refs["main"] == before  # nothing committed

    done = chemteb(hub, tmp_path, "push-results", str(results), "--repo-id", "alice/model")
    assert done.returncode == 0, done.stderr
    commit = hub.commit("alice/model")
    assert commit.message.startswith("Add ChemTEB results (3 tasks")
    card = commit.files["README.md"].decode()
    front = yaml.safe_load(card.split("---")[1])
    assert front["license"] == "apache-2.0" and front["custom_field"] == "keep me"
    assert (
        front["tags"] == ["feature-extraction"] and front["library_name"] == "sentence-transformers"
    )
    assert "A model card that must keep its text." in card
    results_list = front["model-index"][0]["results"]
    datasets = {r["dataset"]["type"] for r in results_list}
    assert "mteb/banking77" in datasets  # the existing entry survives
    assert {
        "BASF-AI/ChemNQRetrieval",
        "BASF-AI/SDSGlovesClassification",
        "BASF-AI/PubChemSynonymPC",
    } <= datasets
    nq = next(r for r in results_list if r["dataset"]["type"] == "BASF-AI/ChemNQRetrieval")
    written = json.loads((results / "ChemNQRetrieval.json").read_text())
    assert nq["task"]["type"] == "text-retrieval"
    assert nq["dataset"]["split"] == "test" and nq["dataset"]["config"] == "default"
    assert nq["dataset"]["revision"] == written["dataset_revision"]
    main = written["scores"]["test"][0]["main_score"]
    assert nq["metrics"][0] == {"type": "ndcg_at_10", "value": main, "name": "ndcg_at_10"}
    assert [m["type"] for m in nq["metrics"]][1:] == [
        "map_at_10",
        "recall_at_10",
        "mrr_at_10",
        "ndcg_at_1",
    ]
    eval_file = yaml.safe_load(commit.files[".eval_results/ChemNQRetrieval.yaml"])
    overall = next(e for e in eval_file if e["dataset"]["task_id"] == "ChemNQRetrieval")
    assert overall["value"] == round(written["scores"]["test"][0]["main_score"] * 100, 5)
    assert overall["dataset"]["id"] == "BASF-AI/ChemNQRetrieval"
    assert commit.files["config.json"] == b"{}"

    # Idempotent: the same results again commit nothing.
    sha = hub.repos[("model", "alice/model")].refs["main"]
    again = chemteb(hub, tmp_path, "push-results", str(results), "--repo-id", "alice/model")
    assert again.returncode == 0, again.stderr
    assert "nothing to commit" in again.stdout
    assert hub.repos[("model", "alice/model")].refs["main"] == sha

    # A new score replaces the old one for the same task, split and metric; --create-pr leaves
    # main alone.
    payload = json.loads((results / "ChemNQRetrieval.json").read_text())
    payload["scores"]["test"][0]["main_score"] = 0.123
    payload["scores"]["test"][0]["ndcg_at_10"] = 0.123
    (results / "ChemNQRetrieval.json").write_text(json.dumps(payload))
    pr = chemteb(
        hub, tmp_path, "push-results", str(results), "--repo-id", "alice/model", "--create-pr"
    )
    assert pr.returncode == 0, pr.stderr
    assert "pull request" in pr.stdout
    assert hub.repos[("model", "alice/model")].refs["main"] == sha
    pr_card = yaml.safe_load(
        hub.files("alice/model", revision="refs/pr/1")["README.md"].decode().split("---")[1]
    )
    pr_nq = [
        r
        for r in pr_card["model-index"][0]["results"]
        if r["dataset"]["type"] == "BASF-AI/ChemNQRetrieval"
    ]
    assert len(pr_nq) == 1 and pr_nq[0]["metrics"][0]["value"] == 0.123


def test_push_results_to_a_repo_without_a_card(hub: FakeHub, tmp_path: Path) -> None:
    hub.add_commit("alice/bare", {"config.json": b"{}"}, repo_type="model")
    done = chemteb(
        hub, tmp_path, "push-results", str(_results(tmp_path)), "--repo-id", "alice/bare"
    )
    assert done.returncode == 0, done.stderr
    card = hub.files("alice/bare")["README.md"].decode()
    front = yaml.safe_load(card.split("---")[1])
    assert front["model-index"][0]["name"] == "synthetic-org0/model-000"  # from model_meta.json


def test_push_results_errors(hub: FakeHub, tmp_path: Path) -> None:
    results = _results(tmp_path)
    missing = chemteb(hub, tmp_path, "push-results", str(results), "--repo-id", "alice/absent")
    assert missing.returncode == 1 and "not found" in missing.stderr
    hub.add_commit("bob/model", {"README.md": b"# bob\n"}, repo_type="model")
    forbidden = chemteb(hub, tmp_path, "push-results", str(results), "--repo-id", "bob/model")
    assert forbidden.returncode == 1 and "no write access" in forbidden.stderr
    assert "--create-pr" in forbidden.stderr
    empty = chemteb(
        hub, tmp_path, "push-results", str(tmp_path / "nothing"), "--repo-id", "alice/x"
    )
    assert empty.returncode == 2 and "is not a folder" in empty.stderr


# -- submit ----------------------------------------------------------------------------------


def test_submit_starts_a_job(hub: FakeHub, tmp_path: Path) -> None:
    done = chemteb(
        hub, tmp_path, "submit", "-m", "alice/model", "-b", "ChemTEB", "--flavor", "a10g-small"
    )
    assert done.returncode == 0, done.stderr
    (job,) = hub.jobs
    spec: dict[str, Any] = job["spec"]
    assert spec["flavor"] == "a10g-small" and spec["dockerImage"] == "python:3.11"
    script = spec["command"][-1]
    # Issue 15 changed this line on purpose: the Job installs this version (with the extra the
    # model's backend needs), no longer whatever PyPI has newest ("pip install chemteb-eval").
    assert script.startswith(
        f"pip install 'chemteb-eval[run]=={__version__}' && chemteb run -m alice/model -b ChemTEB"
    )
    assert script.endswith("chemteb push-results /tmp/chemteb-results --repo-id alice/model")
    assert spec["secrets"] == {"HF_TOKEN": TOKEN} and TOKEN not in script
    assert job["record"]["id"] in done.stdout and "hf jobs logs" in done.stdout

    bad = chemteb(hub, tmp_path, "submit", "-m", "alice/model", "--flavor", "gpu-please")
    assert bad.returncode == 2 and "not a Jobs flavor" in bad.stderr
    api_model = chemteb(
        hub, tmp_path, "submit", "-m", "openai:text-embedding-3-large", "--flavor", "cpu-basic"
    )
    assert api_model.returncode == 2 and "--push-to" in api_model.stderr
    no_token = chemteb(
        hub, tmp_path, "submit", "-m", "alice/model", "--flavor", "cpu-basic", token=None
    )
    assert no_token.returncode == 1 and "no Hugging Face token" in no_token.stderr


def test_card_merge_is_idempotent_in_process(tmp_path: Path) -> None:
    from chemteb_eval.hub.model_card import card_with_results, eval_results, find_task_results

    model, found = find_task_results(_results(tmp_path), log=lambda _: None)
    first = card_with_results(EXISTING_CARD, str(model), eval_results(found))
    assert first is not None and "custom_field: keep me" in first
    assert card_with_results(first, str(model), eval_results(found)) is None
    fresh = card_with_results(None, str(model), eval_results(found))
    assert fresh is not None and fresh.startswith("---\n") and f"# {model}" in fresh


def test_local_tasks_are_not_pushed(tmp_path: Path) -> None:
    from chemteb_eval.hub.model_card import find_task_results

    folder = tmp_path / "m" / "rev"
    folder.mkdir(parents=True)
    (folder / "PipChemSMILESNameBM.json").write_text(
        json.dumps({"task_name": "PipChemSMILESNameBM", "scores": {"test": [{"main_score": 0.5}]}})
    )
    said: list[str] = []
    _, found = find_task_results(tmp_path, log=said.append)
    assert found == [] and "built locally" in said[0]
    (folder / "Broken.json").write_text("[1, 2")
    with pytest.raises(ValueError, match=r"Broken\.json is not a result file"):
        find_task_results(folder, log=said.append)


def test_job_plan_quotes_and_validates() -> None:
    from chemteb_eval.hub import job_plan

    plan = job_plan("transformers:org/model; rm -rf /", "ChemTEB(paper)", "l4x1", push=False)
    script = plan.command[-1]
    assert "'transformers:org/model; rm -rf /'" in script and "'ChemTEB(paper)'" in script
    assert "push-results" not in script and plan.push_to is None
    with pytest.raises(ValueError, match="benchmark"):
        job_plan("org/model", "ChemTEBB", "l4x1")


# -- a multi-GPU flavor: one process per GPU (issue 60) ----------------------------------------


def _hardware(name: str, gpus: int) -> dict[str, Any]:
    """One entry of the Hub's Jobs hardware list, in the fields huggingface_hub reads."""
    accelerator = {"type": "gpu", "model": "A100", "quantity": str(gpus), "vram": "80 GB"}
    return {
        "name": name,
        "prettyName": name,
        "cpu": "12 vCPU",
        "ram": "142 GB",
        "accelerator": dict(accelerator, manufacturer="Nvidia") if gpus else None,
        "unitCostMicroUSD": 1,
        "unitCostUSD": 0.000001,
        "unitLabel": "minute",
    }


def test_a_multi_gpu_flavor_runs_one_process_per_gpu(hub: FakeHub, tmp_path: Path) -> None:
    hub.hardware = [_hardware("cpu-basic", 0), _hardware("a100x4", 4), _hardware("l4x1", 1)]
    dry = chemteb(hub, tmp_path, "submit", "-m", "alice/model", "--flavor", "a100x4", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "4 GPUs (from the Hub's Jobs hardware list): chemteb run on 4 processes" in dry.stdout
    assert "torchrun --standalone --nproc_per_node=4 -m chemteb_eval run -m alice/model" in (
        dry.stdout
    )
    assert "GET /api/jobs/hardware" in hub.requests and not hub.jobs  # a dry run sends no Job
    done = chemteb(hub, tmp_path, "submit", "-m", "alice/model", "--flavor", "a100x4")
    assert done.returncode == 0, done.stderr
    (job,) = hub.jobs
    script = job["spec"]["command"][-1]
    assert "&& torchrun --standalone --nproc_per_node=4 -m chemteb_eval run -m alice/model" in (
        script
    )
    assert script.endswith("chemteb push-results /tmp/chemteb-results --repo-id alice/model")
    assert "runs chemteb on 4 processes, one per GPU (4 GPUs" in done.stdout
    for flavor in ("l4x1", "cpu-basic"):  # one GPU or none: one plain process
        one = chemteb(hub, tmp_path, "submit", "-m", "alice/model", "--flavor", flavor, "--dry-run")
        assert one.returncode == 0 and "chemteb run on one process" in one.stdout
        assert "torchrun" not in one.stdout and "&& chemteb run -m alice/model" in one.stdout


def test_the_flavor_table_answers_when_the_hub_does_not(hub: FakeHub, tmp_path: Path) -> None:
    # no hardware list (404), then no Hub at all: the table, and it says so
    dry = chemteb(hub, tmp_path, "submit", "-m", "alice/model", "--flavor", "h200x8", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "8 GPUs (from chemteb's flavor table" in dry.stdout and "nproc_per_node=8" in dry.stdout
    closed = chemteb(
        hub,
        tmp_path,
        *("submit", "-m", "alice/model", "--flavor", "a10g-largex2", "--dry-run"),
        endpoint="http://127.0.0.1:9",
    )
    assert closed.returncode == 0, closed.stderr
    assert "2 GPUs (from chemteb's flavor table" in closed.stdout


def test_flavor_gpus_takes_the_hubs_count_over_the_table(hub: FakeHub, tmp_path: Path) -> None:
    from huggingface_hub import JobHardware

    from chemteb_eval.hub.jobs import flavor_gpus

    # every flavor huggingface_hub knows has a count in the table, ranging as its name says
    for flavor in JobHardware:
        count, source = flavor_gpus(flavor.value, ask_hub=False)
        assert "table" in source
        assert count == (0 if flavor.value.startswith("cpu") else 1) or flavor.value.endswith(
            f"x{count}"
        )
    # a flavor the Hub lists with a count its name does not state: the Hub's count
    hub.hardware = [_hardware("future-gpu", 8)]
    code = (
        "from chemteb_eval.hub.jobs import flavor_gpus; "
        "print(flavor_gpus('future-gpu'), flavor_gpus('future-gpu', ask_hub=False))"
    )
    said = python(hub, tmp_path, code)
    assert said.returncode == 0, said.stderr
    assert said.stdout.split(")")[0] == '(8, "from the Hub\'s Jobs hardware list"'
    assert "(1, \"from chemteb's flavor table" in said.stdout
