"""Issue 35: a score is what it was computed from, never just a name.

Each test is named after the issue's item it proves. The runs use the hashing encoder (no
model); ~10 s in all.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import replace
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chemteb_eval.data import load_task
from chemteb_eval.runner import run
from chemteb_eval.tasks.custom import TaskFileError, fingerprint_files, read_task_file

from .helpers.hashing_encoder import HashingEncoder
from .helpers.loopback import read_json, reply_json, serving
from .test_custom_tasks import PAIRS, _run, write_pairs


def _result(report: Any, name: str) -> dict[str, Any]:
    out: dict[str, Any] = json.loads((report.results_dir / f"{name}.json").read_text())
    return out


def _score(
    declared: Any,
    out: Path,
    *,
    framework: str | None = None,
    name: str = "test/hashing-trigrams",
    log: Any = None,
    **options: Any,
) -> Any:
    """A run of the hashing encoder (under another backend's ``framework``, if given) on one
    declared task file's task, into ``out``."""
    encoder = HashingEncoder(name=name)
    if framework is not None:
        encoder.meta = replace(encoder.meta, framework=framework)
    return run(
        encoder,
        tasks=[declared.to_task()],
        data_paths={declared.name: str(declared.source)},
        output_dir=out,
        use_cache=False,
        progress=False,
        log=log or (lambda m: None),
        **options,
    )


def test_a_result_records_its_declaration_and_its_data(tmp_path: Path) -> None:
    files = [write_pairs(tmp_path)]
    report = _run(files, tmp_path / "results")
    result = _result(report, "SynonymPairs")
    task = read_task_file(files[0]).to_task()
    assert result["task_declaration"] == task.declaration_digest()
    assert (
        result["dataset_revision"] == task.revision == fingerprint_files(tmp_path / "synonyms.csv")
    )


@pytest.mark.parametrize(
    ("edit", "rescored"),
    [
        ("columns: {sentence1: sentence2, sentence2: sentence1}\n", True),  # sides swapped
        ("main_score: max_ap\n", True),  # the main score
        ("description: other words\n", False),  # changes no number
        ("columns: {sentence1: sentence1}\n", False),  # a column mapped to itself: the same
    ],
)
def test_an_edited_declaration_is_scored_again(tmp_path: Path, edit: str, rescored: bool) -> None:
    files = [write_pairs(tmp_path)]
    out = tmp_path / "results"
    first = _run(files, out)
    was = _result(first, "SynonymPairs")["task_declaration"]
    files[0].write_text(files[0].read_text() + edit)
    now = read_task_file(files[0]).to_task().declaration_digest()
    lines: list[str] = []
    again = _run(files, out, lines)
    assert (now != was) is rescored
    assert again.statuses == {"SynonymPairs": "done" if rescored else "skipped"}
    said = any("declaration changed since SynonymPairs.json" in line for line in lines)
    assert said is rescored
    assert _result(again, "SynonymPairs")["task_declaration"] == now


def test_the_declaration_digest_covers_what_changes_a_number_and_only_that(
    tmp_path: Path,
) -> None:
    task = read_task_file(write_pairs(tmp_path)).to_task()
    same = [replace(task, description="other words"), replace(task, name="Renamed")]
    assert {t.declaration_digest() for t in same} == {task.declaration_digest()}
    other = [
        replace(task, prompts={"query": "q: "}),
        replace(task, eval_splits=("dev",)),
        replace(task, main_score="max_ap"),
        replace(task, columns={"a": "sentence1"}),
        replace(task, data_format="jsonl"),
    ]
    digests = {t.declaration_digest() for t in other}
    assert len(digests) == len(other) and task.declaration_digest() not in digests


def test_an_old_result_without_a_digest_still_reads_and_skips(tmp_path: Path) -> None:
    """Migration: a file written before digests were recorded is judged by the declaration
    recorded beside it: the same one skips (nothing lost), another rescores."""
    files = [write_pairs(tmp_path)]
    out = tmp_path / "results"
    first = _run(files, out)
    path = first.results_dir / "SynonymPairs.json"
    payload = json.loads(path.read_text())
    del payload["task_declaration"]
    path.write_text(json.dumps(payload))
    assert _run(files, out).statuses == {"SynonymPairs": "skipped"}
    files[0].write_text(files[0].read_text() + "main_score: max_ap\n")
    assert _run(files, out).statuses == {"SynonymPairs": "done"}


def test_files_changed_while_the_model_loads_are_scored_as_read_and_named_so(
    tmp_path: Path,
) -> None:
    """The fingerprint and the scores come from one read: the task file is read (and its
    files fingerprinted) before the model loads; an edit in between is scored as it is read
    at load time, and the result names those bytes, with a line saying so."""
    files = [write_pairs(tmp_path)]
    declared = read_task_file(files[0])
    (tmp_path / "synonyms.csv").write_text(PAIRS + "benzene,cyclohexane,0\n")  # meanwhile
    lines: list[str] = []
    report = _score(declared, tmp_path / "results", log=lines.append)
    result = _result(report, "SynonymPairs")
    assert result["dataset_revision"] == fingerprint_files(tmp_path / "synonyms.csv")
    assert result["dataset_revision"] != declared.fingerprint
    assert any("changed after the task file was read" in line for line in lines)
    # six pairs scored (the file as read at load time), not the five fingerprinted first
    assert result["scores"]["test"][0]["max_f1"] is not None
    scored: list[str] = []
    data = load_task(declared.to_task(), data_path=declared.source, scored=scored.append)[
        "default"
    ]["test"]
    assert len(data.labels) == 6 and scored == [result["dataset_revision"]]


def _hub_folder(tmp_path: Path, card_files: str) -> Path:
    data = tmp_path / "pairs"
    data.mkdir()
    (data / "test.csv").write_text(
        PAIRS.replace("sentence1,sentence2,label", "sentence1,sentence2,labels")
    )
    (data / "README.md").write_text(
        "---\nconfigs:\n- config_name: default\n  data_files:\n"
        f"  - split: test\n    path: {card_files}\n---\nPairs.\n"
    )
    task_file = tmp_path / "pairs.yaml"
    task_file.write_text(
        "name: HubPairs\ntype: PairClassification\nsource: {path: pairs, format: hub}\n"
    )
    return task_file


def test_a_hub_folders_csv_files_are_in_the_fingerprint(tmp_path: Path) -> None:
    task_file = _hub_folder(tmp_path, "test.csv")
    before = read_task_file(task_file)
    data = load_task(before.to_task(), data_path=before.source)["default"]["test"]
    assert len(data.labels) == 5  # the CSV the card names is what is read
    with (tmp_path / "pairs" / "test.csv").open("a") as handle:
        handle.write("benzene,cyclohexane,0\n")
    after = read_task_file(task_file)
    assert after.fingerprint != before.fingerprint  # a CSV's byte changes the data's name
    (tmp_path / "pairs" / "notes.txt").write_text("results, notes: not read")
    assert read_task_file(task_file).fingerprint == after.fingerprint


@pytest.mark.parametrize("pattern", ["../outside.csv", "/etc/hosts", "hf://datasets/x/y.csv"])
def test_a_card_pointing_outside_its_folder_is_refused(tmp_path: Path, pattern: str) -> None:
    (tmp_path / "outside.csv").write_text(PAIRS)
    with pytest.raises(TaskFileError, match="outside the folder"):
        read_task_file(_hub_folder(tmp_path, pattern))


def test_a_link_out_of_the_source_folder_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "elsewhere"
    secret.mkdir()
    (secret / "test.csv").write_text(PAIRS)
    task_file = _hub_folder(tmp_path, "test.csv")
    (tmp_path / "pairs" / "test.csv").unlink()
    (tmp_path / "pairs" / "test.csv").symlink_to(secret / "test.csv")
    with pytest.raises(TaskFileError, match="leads outside"):
        read_task_file(task_file)


# -- a model behind an API is the vectors it returns ------------------------------------------

_SERVED = {"weights": 1, "noise": 0.0}


def _served_vector(text: str) -> list[float]:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")
    base = np.random.default_rng([seed, int(_SERVED["weights"])]).standard_normal(16)
    noise = np.random.default_rng().standard_normal(16) * float(_SERVED["noise"])
    return (base + noise).tolist()


class _Embeddings(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        texts = read_json(self)["input"]
        reply_json(
            self,
            {"data": [{"index": i, "embedding": _served_vector(t)} for i, t in enumerate(texts)]},
        )


def test_another_model_served_under_the_same_name_gets_its_own_cache_and_results(
    tmp_path: Path,
) -> None:
    """Issue 59: what an API model is, is declared (URL, name, ``--revision``); its probe only
    guards it. Another model behind the same name stops the run before anything is stored, and
    ``--revision`` gives it its own cache and results."""
    from chemteb_eval.models.identity import ProbeMoved

    declared = read_task_file(write_pairs(tmp_path))

    def once(url: str, lines: list[str], revision: str | None = None) -> Any:
        return run(
            "openai:local-embed",
            api_base=url,
            tasks=[declared.to_task()],
            data_paths={"SynonymPairs": str(declared.source)},
            output_dir=tmp_path / "results",
            cache_dir=tmp_path / "cache",
            progress=False,
            log=lines.append,
            revision=revision,
        )

    _SERVED.update(weights=1, noise=0.0)
    with serving(_Embeddings) as url:
        first = once(url, [])
        _SERVED.update(noise=1e-7)  # the same model, last digits noisy: the same identity
        lines: list[str] = []
        assert once(url, lines).statuses == {"SynonymPairs": "skipped"}
        _SERVED.update(weights=2, noise=0.0)  # the server restarted with another model
        lines = []
        stored = sorted(p.name for p in (tmp_path / "cache").rglob("*"))
        with pytest.raises(ProbeMoved, match=r"another model .* --revision"):
            once(url, lines)  # never the first model's number, nor its cache
        assert sorted(p.name for p in (tmp_path / "cache").rglob("*")) == stored
        other = once(url, lines, revision="v2")
    assert other.statuses == {"SynonymPairs": "done"}
    assert other.results_dir != first.results_dir and other.results_dir.name == "v2"
    metas = [json.loads((r.results_dir / "model_meta.json").read_text()) for r in (first, other)]
    assert metas[0]["weights"].startswith("api:") and metas[0]["weights"] != metas[1]["weights"]
    assert len(list((tmp_path / "cache").glob("*.vectors"))) == 2  # its own cache entries
    assert other.encoding["cache_hits"] == 0


def test_an_api_cache_written_before_probes_is_kept(tmp_path: Path) -> None:
    """Migration: the cache an API model had under its URL becomes its probe label's."""
    from chemteb_eval.engine import EmbeddingCache

    declared = read_task_file(write_pairs(tmp_path))
    _SERVED.update(weights=1, noise=0.0)
    with serving(_Embeddings) as url:
        old, _ = EmbeddingCache.path_for(tmp_path / "cache", "local-embed", None, url, None)
        kwargs: dict[str, Any] = {
            "api_base": url,
            "tasks": [declared.to_task()],
            "data_paths": {"SynonymPairs": str(declared.source)},
            "cache_dir": tmp_path / "cache",
            "progress": False,
            "log": lambda m: None,
        }
        # the old layout: a cache keyed by the URL, filled by an earlier version
        from chemteb_eval.engine import EmbeddingEngine
        from chemteb_eval.models.http import HTTPEmbeddingEncoder

        encoder = HTTPEmbeddingEncoder("local-embed", api_base=url)
        store = EmbeddingCache(tmp_path / "cache", "local-embed", None, url)
        engine = EmbeddingEngine(encoder, store, progress=False)
        data = load_task(declared.to_task(), data_path=declared.source)["default"]["test"]
        engine.prefetch(("", t) for t in [*data.sentences1, *data.sentences2])
        engine.close()
        store.close()
        assert old.is_dir()  # the cache keyed by the URL
        report = run("openai:local-embed", output_dir=tmp_path / "results", **kwargs)
    assert report.encoding["cache_hits"] == report.encoding["unique"] > 0  # nothing re-encoded
    assert not old.exists()


# -- the backend and the compute dtype are part of a model's identity -------------------------


def test_each_backend_and_dtype_gets_its_own_results_in_mteb_experiments(tmp_path: Path) -> None:
    """``-m onnx-int8:M`` into the folder of ``M`` printed the torch score as its own
    ("skipped"), and rank mixed the two; a variant now has MTEB's experiments folder."""
    from chemteb_eval.results.scan import scan_results

    declared = read_task_file(write_pairs(tmp_path))
    out = tmp_path / "results"

    def once(framework: str, precision: str = "float32") -> Any:
        return _score(declared, out, framework=framework, precision=precision)

    torch_run = once("sentence-transformers")
    int8_run = once("onnxruntime-int8 (per text)")
    assert int8_run.statuses == {"SynonymPairs": "done"}  # not the torch score, "skipped"
    assert int8_run.results_dir == torch_run.results_dir / "experiments" / "backend_onnx-int8"
    meta = json.loads((int8_run.results_dir / "model_meta.json").read_text())
    assert meta["experiment_kwargs"] == {"backend": "onnx-int8"}
    assert meta["name"] == "test/hashing-trigrams"
    names = sorted(m.name for m in scan_results([out]))
    assert names == ["test/hashing-trigrams", "test/hashing-trigrams (backend=onnx-int8)"]


def test_experiment_folders_are_named_and_read_as_mteb_does(tmp_path: Path) -> None:
    mteb = pytest.importorskip("mteb")
    from mteb.models.model_meta import _serialize_experiment_kwargs_to_name

    from chemteb_eval.results.io import experiment_name

    for kwargs in (
        {"backend": "onnx-int8"},
        {"dtype": "bfloat16", "backend": "onnx"},
        {"a": "x/y"},
    ):
        assert experiment_name(kwargs) == _serialize_experiment_kwargs_to_name(kwargs)
    long = {"backend": "x" * 300}
    assert experiment_name(long) == _serialize_experiment_kwargs_to_name(long)
    # MTEB's cache reads the experiment beside the model only when asked to
    declared = read_task_file(write_pairs(tmp_path))
    out = tmp_path / "cache" / "results"
    for framework in ("sentence-transformers", "onnxruntime"):
        _score(declared, out, framework=framework)
    cache = mteb.ResultCache(cache_path=tmp_path / "cache")
    plain = cache.get_cache_paths(require_model_meta=True, include_remote=False)
    both = cache.get_cache_paths(
        require_model_meta=True, include_remote=False, load_experiments="match_name"
    )
    assert [p.parent.name for p in plain] == ["1" * 40]
    assert sorted(p.parent.name for p in both) == ["1" * 40, "backend_onnx"]


# -- the task catalog is a value; readers never mix two declarations of one name --------------


def _two_roots(tmp_path: Path) -> tuple[Path, Path]:
    """Two results folders, each a model that scored SynonymPairs under its own declaration."""
    roots = []
    for i, extra in enumerate(("", "main_score: max_ap\n")):
        folder = tmp_path / f"user{i}"
        folder.mkdir()
        task_file = write_pairs(folder)
        task_file.write_text(task_file.read_text() + extra)
        _score(read_task_file(task_file), folder / "results", name=f"org/model-{i}")
        roots.append(folder / "results")
    return roots[0], roots[1]


def test_two_scans_of_two_folders_never_see_each_others_tasks(tmp_path: Path) -> None:
    from chemteb_eval.results.scan import catalog_of, scan_results

    a, b = _two_roots(tmp_path)
    first = catalog_of(scan_results([a]))
    second = catalog_of(scan_results([b]))
    assert first.get_task("SynonymPairs").main_score == "max_f1"
    assert second.get_task("SynonymPairs").main_score == "max_ap"
    assert catalog_of(scan_results([a])) == first  # the first scan did not change
    from chemteb_eval.tasks import list_tasks

    assert not any(t.collection == "custom" for t in list_tasks())  # no process state


def test_models_of_two_declarations_are_never_side_by_side_and_no_order_decides(
    tmp_path: Path,
) -> None:
    from chemteb_eval.results.board import read_results
    from chemteb_eval.results.scan import catalog_of, scan_results

    a, b = _two_roots(tmp_path)
    boards = []
    for roots in ([a, b], [b, a]):
        scanned = scan_results(roots)
        custom = catalog_of(scanned).get_benchmark("Custom")
        models = read_results(scanned, custom)
        boards.append((custom.tasks, {m.model: sorted(m.scores) for m in models}))
        assert all(any("different declarations" in n for n in m.notes) for m in models)
    assert boards[0] == boards[1]  # whichever folder comes first
    tasks, scores = boards[0]
    assert len(tasks) == 2 and all(t.startswith("SynonymPairs(") for t in tasks)
    assert scores["org/model-0"] != scores["org/model-1"]  # each its own version, one each
    assert all(len(v) == 1 for v in scores.values())


def test_compare_never_pairs_two_declarations_as_one_task(tmp_path: Path) -> None:
    from chemteb_eval.results.compare import compare_models, load_models

    a, b = _two_roots(tmp_path)
    (ma, mb), bench = load_models([a / "org__model-0", b / "org__model-1"], "Custom")
    assert sorted([*ma.scores, *mb.scores]) == list(bench.tasks)  # two versions, two tasks
    with pytest.raises(ValueError, match="share 0 task"):  # nothing in common to pair
        compare_models(ma, mb, bench, resamples=200)


# -- a published task's card carries the whole declaration ------------------------------------


@pytest.mark.slow
def test_a_published_cards_task_file_gives_the_publishers_scores(tmp_path: Path) -> None:
    """publish-dataset's card holds the publisher's whole declaration (here a query prompt,
    which moves every score): a colleague who saves it as their task file, at the commit,
    gets the publisher's numbers (loopback Hub)."""
    import re

    from .conftest import REPO_ROOT
    from .test_custom_tasks import _HUB_RUN, published, write_retrieval
    from .test_hub import python

    local = write_retrieval(tmp_path)
    prompt = "Acetone is a polar aprotic solvent that dissolves plastics. "  # moves q1's ranking
    local.write_text(local.read_text() + f"prompts: {{query: '{prompt}'}}\n")
    ours = _run([local], tmp_path / "local")
    with published(tmp_path, local) as (hub, sha, _):
        card = hub.files("chemteb/sol", repo_type="dataset")["README.md"].decode()
        (block,) = re.findall(r"```yaml\n(.*?)```", card, flags=re.S)
        assert prompt in block
        followed = tmp_path / "colleague" / "SolventRetrieval.yaml"
        followed.parent.mkdir()
        followed.write_text(block.replace("COMMIT", sha))
        ran = python(hub, tmp_path, _HUB_RUN, str(REPO_ROOT), str(followed), str(tmp_path / "hub"))
        assert ran.returncode == 0, ran.stderr[-3000:]
    (path,) = (tmp_path / "hub").glob("*/*/SolventRetrieval.json")
    theirs = json.loads(path.read_text())
    mine = json.loads((ours.results_dir / "SolventRetrieval.json").read_text())
    assert theirs["scores"] == mine["scores"]  # the publisher's numbers
    assert theirs["task_declaration"] != mine["task_declaration"]  # other source and format
    no_prompt = _run([write_retrieval(tmp_path / "plain")], tmp_path / "plain-results")
    plain = json.loads((no_prompt.results_dir / "SolventRetrieval.json").read_text())
    assert plain["scores"] != mine["scores"]  # the prompt matters: the card had to carry it


# -- a task file chooses its protocol: the paper's or MTEB 2.26's ----------------------------


def test_a_task_file_chooses_its_protocol(tmp_path: Path) -> None:
    plain = read_task_file(write_pairs(tmp_path))
    assert plain.protocol == "paper" and "protocol" not in plain.declaration()
    text = plain.path.read_text()
    plain.path.write_text(text + "protocol: mteb2\n")
    chosen = read_task_file(plain.path)
    assert chosen.to_task().protocol == "mteb2" and chosen.declaration()["protocol"] == "mteb2"
    assert chosen.to_task().declaration_digest() != plain.to_task().declaration_digest()
    plain.path.write_text(text + "protocol: mteb1\n")
    with pytest.raises(TaskFileError, match="protocol 'mteb1'; use paper"):
        read_task_file(plain.path)


_ZERO_QRELS = "query-id\tcorpus-id\tscore\nq1\td2\t1\nq2\td3\t2\nq2\td1\t0\nq3\td4\t0\n"


@pytest.mark.parametrize("protocol", ["paper", "mteb2"])
def test_the_mteb2_protocol_equals_mteb_226_on_the_same_vectors(
    tmp_path: Path, protocol: str
) -> None:
    """A run under ``protocol: mteb2`` gives MTEB 2.26's numbers on the run's own vectors: a
    judged query with no relevant document (q3) scored 0, pair thresholds never cut between
    equal scores; under ``paper`` (the default) q3 is left out, as the published results did."""
    pytest.importorskip("mteb")
    from .helpers import mteb_reference as ref
    from .test_custom_tasks import write_retrieval

    task_file = write_retrieval(tmp_path, qrels=_ZERO_QRELS)
    task_file.write_text(task_file.read_text() + f"protocol: {protocol}\n")
    # pairs whose hashing-encoder cosines tie (the same pair twice, with both labels)
    rows = PAIRS + "aspirin,acetylsalicylic acid,0\nethanol,ethyl alcohol,0\n"
    pairs = write_pairs(tmp_path, rows)
    pairs.write_text(pairs.read_text() + f"protocol: {protocol}\n")
    report = _run([task_file, pairs], tmp_path / "results")
    got = _result(report, "SolventRetrieval")["scores"]["test"][0]
    encoder = HashingEncoder()
    declared = read_task_file(task_file)
    data = load_task(declared.to_task(), data_path=declared.source)["default"]["test"]
    q = encoder.encode(data.query_texts, prompt="", batch_size=8)
    c = encoder.encode(data.corpus_texts, prompt="", batch_size=8)
    qrels = {
        str(q): {str(d): int(g) for d, g in docs.items()}
        for q, docs in data.qrels.items()
        if protocol == "mteb2" or q != "q3"
    }
    want = ref.retrieval(q, c, data.query_ids, data.corpus_ids, qrels, [1, 3, 5, 10])
    assert ("q3" in data.query_ids) is (protocol == "mteb2")
    for k in (1, 3, 5, 10):
        assert got[f"ndcg_at_{k}"] == want.ndcg[f"NDCG@{k}"]
        assert got[f"mrr_at_{k}"] == want.mrr[f"MRR@{k}"]
    if protocol == "mteb2":  # q3 counted, as 0: a third fewer than the paper's mean
        assert got["ndcg_at_10"] < 1.0
    pair = _result(report, "SynonymPairs")["scores"]["test"][0]
    declared = read_task_file(pairs)
    data = load_task(declared.to_task(), data_path=declared.source)["default"]["test"]
    e1 = encoder.encode(data.sentences1, prompt="", batch_size=8)
    e2 = encoder.encode(data.sentences2, prompt="", batch_size=8)
    mteb = ref.pair_classification(ref.pair_distances(e1, e2), np.asarray(data.labels))
    if protocol == "mteb2":
        for m in ("accuracy", "f1", "ap"):
            assert pair[f"max_{m}"] == mteb[f"max_{m}"], m


def test_a_recorded_task_under_a_name_now_reserved_is_left_out_not_a_crash(
    tmp_path: Path,
) -> None:
    """Results recorded before MTEB's task names were refused still read: the task is left
    out with the reason, and rank, the Space and compare go on."""
    from chemteb_eval.results.scan import catalog_of, scan_results

    report = _run([write_pairs(tmp_path)], tmp_path / "results")
    folder = report.results_dir
    for suffix in (".json", ".task.yaml"):
        old = folder / f"SynonymPairs{suffix}"
        text = old.read_text().replace("SynonymPairs", "Banking77Classification")
        (folder / f"Banking77Classification{suffix}").write_text(text)
        old.unlink()
    scanned = scan_results([tmp_path / "results"])
    assert catalog_of(scanned).custom == ()
    assert any("Banking77Classification" in s and "MTEB" in s for s in scanned[0].skipped)


# -- a task built locally (no Hub commit) is named by the data it loads ----------------------


@pytest.mark.slow
def test_a_local_build_is_scored_again_when_its_data_changes(
    small_suite: Path, tmp_path: Path
) -> None:
    """PipChem has no revision: its result names the data by fingerprint, and a rerun compares
    the fingerprint of the data it loads (after loading) with the recorded one."""
    from chemteb_eval.tasks import get_task

    task = get_task("PipChemWikiFieldClustering")
    kwargs: dict[str, Any] = {"tasks": [task], "use_cache": False, "progress": False}
    first = run(HashingEncoder(), output_dir=tmp_path, log=lambda m: None, **kwargs)
    assert run(HashingEncoder(), output_dir=tmp_path, log=lambda m: None, **kwargs).statuses == {
        "PipChemWikiFieldClustering": "skipped"
    }
    path = first.results_dir / "PipChemWikiFieldClustering.json"
    payload = json.loads(path.read_text())
    payload["dataset_revision"] = "sha256:" + "0" * 16  # as if scored on another build
    path.write_text(json.dumps(payload))
    lines: list[str] = []
    again = run(HashingEncoder(), output_dir=tmp_path, log=lines.append, **kwargs)
    assert again.statuses == {"PipChemWikiFieldClustering": "done"}
    assert any("data changed since PipChemWikiFieldClustering.json" in line for line in lines)


def test_compare_takes_a_backend_experiment_as_its_own_model(tmp_path: Path) -> None:
    from chemteb_eval.results.compare import load_models

    declared = read_task_file(write_pairs(tmp_path))
    dirs = [
        _score(declared, tmp_path / "results", framework=framework).results_dir
        for framework in ("sentence-transformers", "onnxruntime-int8 (per text)")
    ]
    (a, b), _ = load_models(dirs, "Custom")
    assert a.model == "test/hashing-trigrams"
    assert b.model == "test/hashing-trigrams (backend=onnx-int8)"


# -- what the outside attack on issue 35 found, fixed ----------------------------------------


def _local_model(folder: Path, content: str, framework: str) -> HashingEncoder:
    """The hashing encoder posing as a model loaded from ``folder`` (its weights: a file)."""
    folder.mkdir(parents=True)
    (folder / "weights.bin").write_text(content)
    encoder = HashingEncoder(name=str(folder))
    encoder.meta = replace(encoder.meta, revision=None, source=str(folder), framework=framework)
    return encoder


def test_a_variant_of_other_weights_never_skips_into_anothers_experiment_folder(
    tmp_path: Path,
) -> None:
    declared = read_task_file(write_pairs(tmp_path))
    reports = []
    for i in (1, 2):  # exp1/final and exp2/final: two models of one name
        encoder = _local_model(
            tmp_path / f"exp{i}" / "final", f"w{i}", "transformers (mean pooling)"
        )
        reports.append(
            run(
                encoder,
                tasks=[declared.to_task()],
                data_paths={"SynonymPairs": str(declared.source)},
                output_dir=tmp_path / "out",
                use_cache=False,
                progress=False,
                log=lambda m: None,
            )
        )
    assert [r.statuses["SynonymPairs"] for r in reports] == ["done", "done"]
    assert reports[0].results_dir != reports[1].results_dir
    assert all(r.results_dir.parent.name == "experiments" for r in reports)


def test_a_precision_a_backend_ignores_is_refused() -> None:
    from chemteb_eval.models import load_encoder

    for spec in ("openai:x", "transformers:org/m", "model2vec:org/m"):
        with pytest.raises(ValueError, match="precision: float16 is for sentence-transformers"):
            load_encoder(spec, precision="float16")


def test_an_api_answer_with_duplicate_indices_is_refused() -> None:
    from chemteb_eval.errors import ChemtebError
    from chemteb_eval.models.http import HTTPEmbeddingEncoder

    rows = [{"index": 0, "embedding": [1.0, 0.0]}, {"index": 0, "embedding": [0.0, 1.0]}]
    with pytest.raises(ChemtebError, match=r"indices are not 0\.\.1 once each"):
        HTTPEmbeddingEncoder._parse({"data": rows}, 2)


def test_the_recorded_declaration_names_the_bytes_scored(tmp_path: Path) -> None:
    import yaml

    files = [write_pairs(tmp_path)]
    declared = read_task_file(files[0])
    (tmp_path / "synonyms.csv").write_text(PAIRS + "benzene,cyclohexane,0\n")  # after reading
    report = _score(declared, tmp_path / "results")
    recorded = yaml.safe_load((report.results_dir / "SynonymPairs.task.yaml").read_text())
    assert recorded["source"]["fingerprint"] == _result(report, "SynonymPairs")["dataset_revision"]


def test_compare_decides_versions_among_the_two_models_only(tmp_path: Path) -> None:
    """A third model in A's folder that scored another version must not rename A's task."""
    from chemteb_eval.results.compare import load_models

    a, b = _two_roots(tmp_path)  # user0 (max_f1) and user1 (max_ap): two versions
    plain = read_task_file(tmp_path / "user0" / "synonyms.yaml")
    _score(plain, b, name="org/model-2")  # the plain version, in B's root too
    (ma, mb), bench = load_models([a / "org__model-0", b / "org__model-2"], "Custom")
    assert list(bench.tasks) == ["SynonymPairs"] and set(ma.scores) == set(mb.scores)


def test_task_names_differing_in_case_are_two_tasks_not_a_crash(tmp_path: Path) -> None:
    from chemteb_eval.results.scan import catalog_of, scan_results

    out = tmp_path / "results"
    for i, name in enumerate(("CasePairs", "casepairs")):
        folder = tmp_path / f"u{i}"
        folder.mkdir()
        task_file = write_pairs(folder)
        task_file.write_text(task_file.read_text().replace("SynonymPairs", name))
        _score(read_task_file(task_file), out, name=f"org/m{i}")
    custom = catalog_of(scan_results([out])).get_benchmark("Custom")
    assert len(custom.tasks) == 2 and all(
        t.casefold().startswith("casepairs(") for t in custom.tasks
    )


def test_a_published_cards_licence_and_description_cannot_inject(tmp_path: Path) -> None:
    from chemteb_eval.hub.publish import _task_card

    task_file = write_pairs(tmp_path)
    task_file.write_text(task_file.read_text() + 'license: "mit\\n---\\n"\n')
    with pytest.raises(TaskFileError, match="is not a licence id"):
        read_task_file(task_file)
    task_file.write_text(
        task_file.read_text().split("license")[0]
        + "description: '![x](https://tracker.example/p.png) [docs](https://evil.example)'\n"
    )
    card = _task_card(read_task_file(task_file), "a/b", ["test"])
    prose = re.sub(r"```yaml\n.*?```", "", card, flags=re.S)  # a code block shows it literally
    assert "![x](" not in prose and "[docs](" not in prose
    assert "![x](https://tracker.example/p.png)" in card  # the task file, whole, in the block


def _hub_pairs(tmp_path: Path, rows: str) -> Path:
    task_file = _hub_folder(tmp_path, "test.csv")
    (tmp_path / "pairs" / "test.csv").write_text(rows)
    return task_file


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (
            "sentence1,sentence2,labels\naspirin,,1\nethanol,ethyl alcohol,0\n",
            "row 1: a text is None",
        ),
        ("sentence1,sentence2,labels\naspirin,x,2\nethanol,ethyl alcohol,0\n", "labels \\[0, 2\\]"),
        ("sentence1,sentence2\naspirin,x\n", "test.csv|labels"),
    ],
)
def test_hub_layout_rows_are_checked_like_any_others_and_name_the_users_file(
    tmp_path: Path, rows: str, message: str
) -> None:
    from chemteb_eval.data.custom import CustomDataError

    declared = read_task_file(_hub_pairs(tmp_path, rows))
    with pytest.raises(CustomDataError, match=message) as caught:
        load_task(declared.to_task(), data_path=declared.source)
    assert "chemteb-task-" not in str(caught.value) and "\n" not in str(caught.value)


def test_hub_layout_ids_read_as_numbers_are_refused_not_scored_zero(tmp_path: Path) -> None:
    from chemteb_eval.data.custom import CustomDataError

    data = tmp_path / "ret"
    data.mkdir()
    # the corpus's ids came out as numbers (1, 2), the judgements' as text ("002", "q9")
    (data / "corpus.jsonl").write_text(
        '{"_id": 1, "text": "ethanol"}\n{"_id": 2, "text": "hexane"}\n'
    )
    (data / "queries.jsonl").write_text('{"_id": "q1", "text": "a solvent"}\n')
    (data / "test.jsonl").write_text('{"query-id": "q1", "corpus-id": "002", "score": 1}\n')
    (data / "README.md").write_text(
        "---\nconfigs:\n- config_name: corpus\n  data_files:\n  - split: corpus\n    path: corpus.jsonl\n"
        "- config_name: queries\n  data_files:\n  - split: queries\n    path: queries.jsonl\n"
        "- config_name: default\n  data_files:\n  - split: test\n    path: test.jsonl\n---\n"
    )
    task_file = tmp_path / "ret.yaml"
    task_file.write_text("name: HubRet\ntype: Retrieval\nsource: {path: ret, format: hub}\n")
    declared = read_task_file(task_file)
    with pytest.raises(CustomDataError, match="not in the corpus"):
        load_task(declared.to_task(), data_path=declared.source)


def test_hub_layout_runs_leave_no_datasets_cache_behind(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("CHEMTEB_CACHE", str(tmp_path / "cache"))
    declared = read_task_file(_hub_folder(tmp_path, "test.csv"))
    for _ in range(2):
        load_task(declared.to_task(), data_path=declared.source)
    assert not (tmp_path / "cache" / "datasets").exists() or not any(
        (tmp_path / "cache" / "datasets").iterdir()
    )


def test_prompts_apply_only_to_sides_and_an_empty_one_is_kept(tmp_path: Path) -> None:
    from chemteb_eval.runner.stages import task_prompt

    task_file = write_pairs(tmp_path)
    task_file.write_text(task_file.read_text() + "prompts: {query: 'q: '}\n")
    with pytest.raises(TaskFileError, match="without a side"):
        read_task_file(task_file)
    from .test_custom_tasks import write_retrieval

    retrieval = write_retrieval(tmp_path)
    retrieval.write_text(retrieval.read_text() + "prompts: {query: ''}\n")
    task = read_task_file(retrieval).to_task()

    class Prompting(HashingEncoder):
        def prompt(self, task_type: str, role: str | None) -> str:
            return "query: "

    assert task_prompt(Prompting(), task, "query") == ""  # the task's own: no prompt
    assert task_prompt(Prompting(), task, "document") == "query: "


# -- the second outside attack on issue 35, fixed --------------------------------------------


def _run_local(tmp_path: Path, i: int, framework: str, declared: Any) -> Any:
    encoder = _local_model(tmp_path / f"exp{i}" / "final", f"w{i}", framework)
    return run(
        encoder,
        tasks=[declared.to_task()],
        data_paths={declared.name: str(declared.source)},
        output_dir=tmp_path / "out",
        use_cache=False,
        progress=False,
        log=lambda m: None,
    )


def test_a_results_folder_whose_owner_cannot_be_told_is_never_adopted(tmp_path: Path) -> None:
    declared = read_task_file(write_pairs(tmp_path))
    first = _run_local(tmp_path, 1, "sentence-transformers", declared)
    (first.results_dir / "model_meta.json").unlink()  # results, but no owner on record
    second = _run_local(tmp_path, 2, "sentence-transformers", declared)
    assert second.statuses == {"SynonymPairs": "done"}
    assert second.results_dir != first.results_dir


def test_other_weights_never_adopt_a_models_experiments_as_their_variants(tmp_path: Path) -> None:
    declared = read_task_file(write_pairs(tmp_path))
    variant = _run_local(tmp_path, 1, "transformers (mean pooling)", declared)
    plain = _run_local(tmp_path, 2, "sentence-transformers", declared)
    assert plain.results_dir.parent != variant.results_dir.parent.parent.parent


def test_a_recorded_task_file_edited_after_the_run_is_left_out_whatever_the_order(
    tmp_path: Path,
) -> None:
    from chemteb_eval.results.scan import catalog_of, scan_results

    declared = read_task_file(write_pairs(tmp_path))
    out = tmp_path / "results"
    runs = [_score(declared, out, name=name) for name in ("org/a", "org/z")]
    recorded = runs[1].results_dir / "SynonymPairs.task.yaml"
    recorded.write_text(recorded.read_text().replace("main_score: max_f1", "main_score: max_ap"))
    scanned = scan_results([out])
    assert catalog_of(scanned).get_task("SynonymPairs").main_score == "max_f1"
    z = next(m for m in scanned if m.name == "org/z")
    assert any("declares another task than its result" in s for s in z.skipped)


@pytest.mark.parametrize(
    ("queries", "qrels", "message"),
    [
        (
            '{"_id": "q1", "text": null}\n',
            '{"query-id": "q1", "corpus-id": "d1", "score": 1}\n',
            "a text is None",
        ),
        (
            '{"_id": "q1", "text": "x"}\n',
            '{"query-id": "q1", "corpus-id": "d1", "score": 0.6}\n',
            "a grade is an integer",
        ),
        (
            '{"_id": "q1", "text": "x"}\n',
            '{"query-id": "q1", "corpus-id": "d1", "score": 1}\n{"query-id": "q1", "corpus-id": "d1", "score": 0}\n',
            "judged twice",
        ),
    ],
)
def test_hub_layout_retrieval_rows_are_checked_as_beirs_are(
    tmp_path: Path, queries: str, qrels: str, message: str
) -> None:
    from chemteb_eval.data.custom import CustomDataError

    data = tmp_path / "ret"
    data.mkdir()
    (data / "corpus.jsonl").write_text('{"_id": "d1", "text": "ethanol"}\n')
    (data / "queries.jsonl").write_text(queries)
    (data / "test.jsonl").write_text(qrels)
    configs = [("corpus", "corpus", "corpus.jsonl"), ("queries", "queries", "queries.jsonl")]
    configs.append(("default", "test", "test.jsonl"))
    header = "".join(
        f"- config_name: {c}\n  data_files:\n  - split: {s}\n    path: {f}\n" for c, s, f in configs
    )
    (data / "README.md").write_text(f"---\nconfigs:\n{header}---\n")
    task_file = tmp_path / "ret.yaml"
    task_file.write_text("name: HubRet\ntype: Retrieval\nsource: {path: ret, format: hub}\n")
    declared = read_task_file(task_file)
    with pytest.raises(CustomDataError, match=message):
        load_task(declared.to_task(), data_path=declared.source)


@pytest.mark.parametrize("licence", ["null", "true", "no", "1.0", "0x1F"])
def test_a_licence_a_yaml_reader_takes_for_another_type_is_refused(
    tmp_path: Path, licence: str
) -> None:
    task_file = write_pairs(tmp_path)
    task_file.write_text(task_file.read_text() + f"license: '{licence}'\n")
    with pytest.raises(TaskFileError, match="is not a licence id"):
        read_task_file(task_file)


def test_a_precision_is_refused_for_an_encoder_object_whose_backend_ignores_it(
    tmp_path: Path,
) -> None:
    declared = read_task_file(write_pairs(tmp_path))
    with pytest.raises(ValueError, match="precision: float16 is for sentence-transformers"):
        _score(declared, tmp_path / "out", framework="openai-compatible-http", precision="float16")
    assert not any((tmp_path / "out").rglob("*.json"))
