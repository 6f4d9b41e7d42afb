"""Issue 46 (trust, round 4): each defect class an outside attack found, a test named after it
that failed on the code before the fix."""

from __future__ import annotations

import json
import os
import threading
import time
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chemteb_eval._files import public_url, read_regular
from chemteb_eval.errors import ChemtebError
from chemteb_eval.models.base import ModelMeta
from chemteb_eval.models.identity import Anchor, ApiIdentity, Probe, ProbeRegistry
from chemteb_eval.runner.folders import recorded_meta

SECRET_URL = "https://alice:hunter2@api.example.org:8443/v1?api_key=sk-123&model=m"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (SECRET_URL, "https://api.example.org:8443/v1?api_key=REDACTED&model=m"),
        ("https://:tok@h/v1", "https://h/v1"),
        (
            "http://h/v1?sig=abc&X-Amz-Credential=c&q=a+b",
            "http://h/v1?sig=REDACTED&X-Amz-Credential=REDACTED&q=a+b",
        ),
        ("http://localhost:8000/v1?q=a b", "http://localhost:8000/v1?q=a b"),  # untouched
        ("sentence-transformers/all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"),
        ("/home/me/model", "/home/me/model"),
        ("http://[::1", "http://[::1"),  # not a URL urllib can split: as it is
    ],
)
def test_secrets_a_recorded_url_loses_its_password_and_keys(url: str, shown: str) -> None:
    assert public_url(url) == shown


def test_secrets_model_meta_never_records_an_api_bases_password() -> None:
    meta = ModelMeta("m", None, None, 8, None, "openai-compatible API", SECRET_URL)
    text = json.dumps(recorded_meta(meta, None))
    assert "hunter2" not in text and "sk-123" not in text and "alice" not in text
    assert recorded_meta(meta, None)["source"].startswith("https://api.example.org:8443/v1")


def test_secrets_api_models_json_never_records_a_password(tmp_path: Path) -> None:
    path = tmp_path / "api-models.json"
    vectors = np.random.default_rng(0).standard_normal((4, 8))
    # a registry written before URLs were cleaned: cleaned at the next write
    path.write_text(json.dumps({"old": {"model": "x", "source": SECRET_URL, "probe": [[1.0]]}}))
    registry = ProbeRegistry(path)
    identity = ApiIdentity("m", SECRET_URL)
    registry.remember(identity, Anchor(Probe(vectors), "2026-12-04"))
    again = ProbeRegistry(path).anchor(ApiIdentity("m", SECRET_URL))
    assert again is not None and np.array_equal(again.probe.vectors, vectors.astype("f4"))
    text = path.read_text()
    assert "hunter2" not in text and "sk-123" not in text and "alice" not in text


def test_hostile_files_a_fifo_as_api_models_json_never_hangs(tmp_path: Path) -> None:
    path = tmp_path / "api-models.json"
    os.mkfifo(path)
    done: list[str] = []

    def identify() -> None:
        done.append(str(ProbeRegistry(path).anchor(ApiIdentity("m", "http://h/v1"))))

    worker = threading.Thread(target=identify, daemon=True)
    started = time.perf_counter()
    worker.start()
    worker.join(timeout=10)
    assert done and time.perf_counter() - started < 10  # hung for ever before
    other = tmp_path / "fifo"
    os.mkfifo(other)
    with pytest.raises(ValueError, match="not a regular file"):
        read_regular(other)  # the one reader of a file named by the user's folders


# -- 3: collisions -----------------------------------------------------------------------------


def test_collisions_a_task_named_like_a_version_is_never_merged_with_it(tmp_path: Path) -> None:
    """A task named ``SynonymPairs(<8 hex>)`` was merged with the version of SynonymPairs that
    ``rank`` renamed to that very name."""
    from chemteb_eval.results.scan import catalog_of, scan_results
    from chemteb_eval.tasks.custom import read_task_file

    from .test_custom_tasks import PAIRS, write_pairs
    from .test_identity import _score

    out = tmp_path / "results"
    for i in range(2):  # two versions of one name: other data
        folder = tmp_path / f"u{i}"
        folder.mkdir()
        task_file = write_pairs(folder)
        if i:
            (folder / "synonyms.csv").write_text(PAIRS + "benzene,cyclohexane,0\n")
        _score(read_task_file(task_file), out, name=f"org/m{i}")
    versions = sorted(catalog_of(scan_results([out])).get_benchmark("Custom").tasks)
    assert len(versions) == 2 and all(v.startswith("SynonymPairs(") for v in versions)
    folder = tmp_path / "u2"
    folder.mkdir()
    task_file = write_pairs(folder)
    task_file.write_text(task_file.read_text().replace("SynonymPairs", versions[0]))
    _score(read_task_file(task_file), out, name="org/m2")
    scanned = scan_results([out])
    tasks = catalog_of(scanned).get_benchmark("Custom").tasks
    assert len(tasks) == 3 and versions[0] in tasks  # the task of that name, and two versions
    held = {m.name: {f.task_name for f in m.files} for m in scanned}
    assert held["org/m2"] == {versions[0]} and versions[0] not in held["org/m0"] | held["org/m1"]


# -- 4: round trips ------------------------------------------------------------------------------


@pytest.mark.slow
def test_round_trips_a_hub_results_repo_brings_every_file_a_results_folder_holds(
    tmp_path: Path,
) -> None:
    """The Space fetched only *.json and *.csv from a results repo: the recorded task
    declarations (the Custom board), the evidence and the run records stayed behind."""
    from .helpers.fake_hub import FakeHub
    from .test_space_app import _download

    folder = "org__m/no_revision_available"
    files = {
        f"{folder}/SynonymPairs.json": b"{}",
        f"{folder}/SynonymPairs.task.yaml": b"name: SynonymPairs\n",
        f"{folder}/SynonymPairs.items.npz": b"npz",
        f"{folder}/runs.jsonl": b"{}\n",
        f"{folder}/model_meta.json": b"{}",
        "README.md": b"not a results file: left",
        f"{folder}/weights.bin": b"not a results file: left",
    }
    hub = FakeHub()
    try:
        pinned = hub.add_commit("chemteb/results", files)
        done = _download(hub, tmp_path, "chemteb/results", pinned, offline=False)
    finally:
        hub.close()
    assert done.returncode == 0, done.stderr
    got = Path(done.stdout.strip())
    fetched = {str(p.relative_to(got)) for p in got.rglob("*") if p.is_file()}
    assert fetched == {name for name in files if not name.endswith((".md", ".bin"))}


def test_round_trips_an_edited_recorded_declaration_is_said_and_restored_by_the_rerun(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An edited ``{Task}.task.yaml`` beside a result hid it for good: the rerun said
    ``skipped`` and never restored it, and ``rank -b Custom`` said "Custom has no tasks" alone."""
    from chemteb_eval.cli import main
    from chemteb_eval.tasks.custom import read_task_file

    from .test_custom_tasks import write_pairs
    from .test_identity import _score

    declared = read_task_file(write_pairs(tmp_path))
    out = tmp_path / "results"
    report = _score(declared, out)
    recorded = report.results_dir / "SynonymPairs.task.yaml"
    original = recorded.read_text()
    recorded.write_text(original.replace("main_score: max_f1", "main_score: max_ap"))
    assert main(["rank", str(out), "-b", "Custom"]) == 2
    err = capsys.readouterr().err
    assert "[skipped]" in err and "declares another task than its result" in err
    assert "Custom has no tasks" in err
    lines: list[str] = []
    again = _score(declared, out, log=lines.append)
    assert again.statuses == {"SynonymPairs": "skipped"} and recorded.read_text() == original
    assert any("was edited or lost; restored" in line for line in lines)
    assert main(["rank", str(out), "-b", "Custom"]) == 0
    assert "SynonymPairs" not in capsys.readouterr().err  # nothing left out now


# -- 8: scale --------------------------------------------------------------------------------------


def test_scale_the_truncation_count_tokenises_a_chunk_at_a_time() -> None:
    """A whole side went to the tokenizer at once: 2.7 GB for 80,000 short texts."""
    from chemteb_eval.runner.costs import TOKENIZE_CHUNK, truncation

    calls: list[int] = []

    class Counting:
        meta = ModelMeta("m", "r", None, 8, 5, "sentence-transformers", "m")

        def untruncated_lengths(self, texts: list[str], *, prompt: str) -> list[int]:
            calls.append(len(texts))
            return [len(t.split()) + 2 for t in texts]

    texts = [("", f"t{i} " + "word " * (i % 7)) for i in range(2 * TOKENIZE_CHUNK + 5)]
    record = truncation(Counting(), {("test", "texts"): dict.fromkeys(texts)})  # type: ignore[arg-type]
    assert max(calls) <= TOKENIZE_CHUNK and sum(calls) == len(texts)
    whole = [len(t.split()) + 2 for _, t in texts]
    assert record["test"]["texts"]["tokens"] == sum(whole)
    assert record["test"]["texts"]["truncated"] == sum(n > 5 for n in whole)


# -- 1: which software computed a number -----------------------------------------------------------


def test_order_and_threads_results_and_run_records_name_every_library_that_moves_a_number(
    tmp_path: Path,
) -> None:
    """Run records carried torch's version alone; result files none, the cache key none."""
    from importlib import metadata

    from chemteb_eval.results.runs import read_runs
    from chemteb_eval.tasks.custom import read_task_file

    from .test_custom_tasks import write_pairs
    from .test_identity import _score

    report = _score(
        read_task_file(write_pairs(tmp_path)), tmp_path / "out", framework="sentence-transformers"
    )
    result = json.loads((report.results_dir / "SynonymPairs.json").read_text())
    expected = {"numpy", "scipy", "scikit-learn", "torch", "transformers", "tokenizers"}
    assert expected <= set(result["software"])
    assert result["software"]["numpy"] == metadata.version("numpy")  # what pip says
    assert result["software"]["torch"] == metadata.version("torch")
    (run,), problems = read_runs(report.results_dir)
    assert problems == []
    assert run["software"] == result["software"]


def test_order_and_threads_a_library_version_is_part_of_the_caches_identity(
    tmp_path: Path,
) -> None:
    from chemteb_eval.engine import EmbeddingCache
    from chemteb_eval.models.variant import ModelVariant
    from chemteb_eval.runner.encode import open_cache

    def folder(software: dict[str, str] | None) -> Path:
        return EmbeddingCache.path_for(tmp_path, "m", "r", "src", None, None, software)[0]

    assert folder({"torch": "2.13.0"}) != folder({"torch": "2.14.1"})  # new version, new vectors
    assert folder({"torch": "2.13.0", "numpy": "2"}) == folder({"numpy": "2", "torch": "2.13.0"})
    assert folder(None) == folder({})  # an API's key is the one it always had

    class Local:
        meta = ModelMeta("m", "r", 1, 2, 8, "sentence-transformers", "src")

    class Api:
        meta = ModelMeta("m", None, None, 2, None, "openai-compatible-http", "http://x/v1")

    local = open_cache(tmp_path / "c", Local(), ModelVariant(), None)  # type: ignore[arg-type]
    api = open_cache(tmp_path / "c", Api(), ModelVariant(), "probe:2d-1")  # type: ignore[arg-type]
    assert local is not None and api is not None
    software = json.loads(local.ident)[-1]
    assert "torch" in software and "tokenizers" in software
    assert "torch" not in api.ident and "numpy" not in api.ident
    local.close()
    api.close()


def _two_versions(root: Path) -> None:
    """Two models' folders whose results were computed under other versions of torch."""
    from chemteb_eval.tasks.custom import read_task_file

    from .test_custom_tasks import write_pairs
    from .test_identity import _score

    declared = read_task_file(write_pairs(root))
    for name, version in (("org/a", "2.13.0"), ("org/b", "2.9.1")):
        report = _score(declared, root / "out", name=name, framework="sentence-transformers")
        for path in report.results_dir.glob("*.json"):
            data = json.loads(path.read_text())
            if "software" in data:
                data["software"]["torch"] = version
                path.write_text(json.dumps(data))


def test_order_and_threads_rank_compare_and_the_space_say_when_versions_differ(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from chemteb_eval.cli import main
    from chemteb_eval.results.leaderboard import build_leaderboard
    from chemteb_eval.results.scan import catalog_of, scan_results

    _two_versions(tmp_path)
    out = tmp_path / "out"
    assert main(["rank", str(out), "-b", "Custom"]) == 0
    err = capsys.readouterr().err
    line = (
        "[note] results here were computed under 2 versions of torch: 2.13.0 (org/a); 2.9.1 (org/b)"
    )
    assert err.count(line) == 1, err  # once, however many models it concerns
    scanned = scan_results([out])
    board = build_leaderboard(scanned, catalog_of(scanned).get_benchmark("Custom"))
    assert any("2 versions of torch" in n for n in board.notes)  # the Space's notice
    assert not any("versions of numpy" in n for n in board.notes)  # what agrees is not said
    from chemteb_eval.results.compare import load_models

    folders = sorted(p for p in out.iterdir() if p.is_dir())
    (a, b), _ = load_models(folders, "Custom")  # what compare prints as [note]
    assert any(line in f"[note] {n}" for n in a.notes) and a.notes == b.notes


def test_order_and_threads_a_hostile_software_record_is_no_record() -> None:
    from chemteb_eval.results.software import software_notes, software_of

    assert software_of({"software": ["torch"]}) == {}
    assert software_of({"software": {"torch": 2}}) == {}
    # a name or version too long to show whole is no record (cut, two versions looked one)
    assert software_of({"software": {"t" * 500: "1", "torch": "v" * 500}}) == {}
    base = "2.5.0a0+git" + "0" * 29
    notes = software_notes(
        [
            ("a", {"software": {"torch": base + "aaaa"}}),
            ("b", {"software": {"torch": base + "bbbb"}}),
        ]
    )
    assert len(notes) == 1 and "…" in notes[0][0]  # told apart, shown cut
    # junk keys before torch never hide a torch difference, and never make more than 12 notes
    junk = {f"x{i:03d}": str(i) for i in range(400)}
    other = {f"x{i:03d}": str(i + 1) for i in range(400)}
    notes = software_notes(
        [("a", {"software": {**junk, "torch": "1"}}), ("b", {"software": {**other, "torch": "2"}})]
    )
    assert len(notes) == 12 and "versions of torch" in notes[0][0]
    notes = software_notes([("a", {"software": {"torch": "1"}}), ("b", {})])
    assert notes == []  # a file that records nothing is not another version


# -- 7: independent numbers ----------------------------------------------------------------------


def test_independent_numbers_an_integer_corpus_is_calibrated_per_mteb_search_chunk() -> None:
    """MTEB's search encodes (and its CompressionWrapper calibrates) the corpus 50,000
    documents at a time; ours calibrated the whole corpus at once (0.13886 against 0.14711)."""
    import inspect

    pytest.importorskip("mteb")
    from mteb.models.search_wrappers import SearchEncoderWrapper

    from chemteb_eval.runner.costs import CORPUS_CHUNK, transform
    from chemteb_eval.scoring.compression import Compression

    from .test_compression import _mteb_quantize

    chunk = inspect.signature(SearchEncoderWrapper).parameters["corpus_chunk_size"].default
    assert chunk == CORPUS_CHUNK
    rng = np.random.default_rng(0)
    n = 2 * CORPUS_CHUNK + 7
    drift = np.linspace(0.2, 3.0, n, dtype=np.float32)[:, None]  # later documents spread wider
    vectors = (rng.standard_normal((n, 6)) * drift).astype(np.float32)
    ours = transform(vectors, Compression(precision="int8"), chunk=CORPUS_CHUNK)
    theirs = np.concatenate(
        [_mteb_quantize(vectors[s : s + chunk], "int8") for s in range(0, n, chunk)]
    )
    np.testing.assert_array_equal(ours, theirs)
    whole = transform(vectors, Compression(precision="int8"))  # the calibration of before
    assert not np.array_equal(whole, theirs)


def test_independent_numbers_the_runner_chunks_the_corpus_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chemteb_eval.runner import score as runner_score
    from chemteb_eval.runner.costs import CORPUS_CHUNK
    from chemteb_eval.tasks.custom import read_task_file

    from .test_custom_tasks import write_retrieval
    from .test_identity import _score

    seen: dict[str, set[int | None]] = {}
    real = runner_score.transform  # type: ignore[attr-defined]

    def spy(vectors: np.ndarray, variant: object, *, chunk: int | None = None) -> np.ndarray:
        seen.setdefault("chunks", set()).add(chunk)
        return real(vectors, variant, chunk=chunk)  # type: ignore[arg-type,return-value]

    monkeypatch.setattr(runner_score, "transform", spy)
    report = _score(read_task_file(write_retrieval(tmp_path)), tmp_path / "out", precisions="int8")
    assert set(report.statuses.values()) == {"done"}
    assert seen["chunks"] == {None, CORPUS_CHUNK}


def test_scale_a_compressed_corpus_weighs_one_chunk_on_the_way() -> None:
    """Every variant materialised the corpus ~4x (+1.4-1.5 GB at 250k x 384)."""
    import tracemalloc

    from chemteb_eval.runner.costs import transform
    from chemteb_eval.scoring.compression import Compression

    vectors = np.random.default_rng(1).standard_normal((120_000, 64)).astype(np.float32)
    peaks = {}
    for chunk in (None, 20_000):
        tracemalloc.start()
        transform(vectors, Compression(dim=32, precision="int8"), chunk=chunk)
        peaks[chunk] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    out = 120_000 * 32 * 4
    assert peaks[20_000] < out + 5 * 20_000 * 64 * 4 < peaks[None]


# -- 2: identity ---------------------------------------------------------------------------------


class _NoisyApi:
    """An API model: fixed vectors per text (from a seed) with fresh noise on every call."""

    def __init__(self, seed: int = 0, noise: float = 1e-4, dim: int = 1536, shift: float = 0.0):
        self.meta = ModelMeta(
            "served", None, None, dim, None, "openai-compatible-http", "http://h/v1"
        )
        self.seed, self.noise, self.dim, self.shift = seed, noise, dim, shift
        self.draw = np.random.default_rng(1000 + seed)

    def prompt(self, task_type: str, role: object) -> str:
        return ""

    def encode(self, texts: list[str], *, prompt: str, batch_size: int) -> np.ndarray:
        rows = []
        for text in texts:
            rng = np.random.default_rng(
                zlib.crc32(f"{self.seed}\0{text}".encode())
            )  # not hash(): seeded per process
            base = rng.standard_normal(self.dim)
            base /= np.linalg.norm(base)
            if self.shift:  # another model, close to seed's: its own fixed offset
                base += self.shift * np.random.default_rng(7).standard_normal(self.dim)
                base /= np.linalg.norm(base)
            rows.append(base + self.noise * self.draw.standard_normal(self.dim))
        return np.asarray(rows, np.float32)


def test_identity_a_noisy_api_model_is_one_model_on_every_rerun(tmp_path: Path) -> None:
    """1e-4 noise per component of a 1,536-d vector was "another model" on every rerun (the
    threshold, cosine 1 - 1e-5, sat below the noise), and the third run was refused."""
    from chemteb_eval.models.identity import measure_probe, within

    model = _NoisyApi(noise=1e-4)
    anchor = measure_probe(model)
    assert all(within(measure_probe(model), anchor) for _ in range(5))
    assert measure_probe(model).noise > 1e-3  # measured: two draws ~5.5e-3 apart


def test_identity_a_near_identical_other_model_never_takes_a_label_it_shares_signs_with(
    tmp_path: Path,
) -> None:
    from chemteb_eval.models.identity import Probe, measure_probe, within

    a = measure_probe(_NoisyApi(noise=1e-5))
    b = measure_probe(_NoisyApi(noise=1e-5, shift=1e-4))  # cosine 1 - 7.5e-6 to a: 7x noise
    assert not a.matches(b) and not within(a, b)  # the guard stops b under a's identity
    kept = Probe.from_record(a.to_record())  # the results folder's copy of the anchor
    assert kept is not None and np.array_equal(kept.vectors, a.vectors) and kept.noise == a.noise
    assert not within(b, kept)


def test_identity_survives_the_loss_of_api_models_json(tmp_path: Path) -> None:
    """Without ``api-models.json`` (another machine, a new cache) a near-identical other model
    got the first one's label and was "skipped" with its scores; the same model, a new one."""
    from chemteb_eval.runner import run
    from chemteb_eval.tasks.custom import read_task_file

    from .test_custom_tasks import write_pairs

    declared = read_task_file(write_pairs(tmp_path))

    def scored(model: _NoisyApi, cache: Path) -> object:
        return run(
            model,
            tasks=[declared.to_task()],
            data_paths={declared.name: str(declared.source)},
            output_dir=tmp_path / "out",
            cache_dir=cache,
            progress=False,
            log=lambda m: None,
        )

    first = scored(_NoisyApi(noise=1e-4), tmp_path / "cache1")
    meta = json.loads((first.results_dir / "model_meta.json").read_text())  # type: ignore[attr-defined]
    assert meta["weights"].startswith("api:") and meta["probe"]["noise"] > 0
    again = scored(_NoisyApi(noise=1e-4), tmp_path / "cache2")  # a new cache: no registry
    assert again.results_dir == first.results_dir  # type: ignore[attr-defined]
    assert again.statuses == {"SynonymPairs": "skipped"}  # type: ignore[attr-defined]
    before = sorted((first.results_dir).rglob("*"))  # type: ignore[attr-defined]
    with pytest.raises(ChemtebError, match="--revision"):  # 11x the noise: never its score
        scored(_NoisyApi(noise=1e-4, shift=1e-3), tmp_path / "cache3")
    assert sorted((first.results_dir).rglob("*")) == before  # type: ignore[attr-defined]
    assert not list((tmp_path / "cache3").glob("*.vectors/*.block"))


# -- 5: means over incomplete rows ---------------------------------------------------------------


def test_means_over_incomplete_rows_are_no_type_mean_never_ranked_or_best(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A model with 1 of PipChem's 2 pair-classification tasks had a PairClassification mean
    over that one, type rank 1 in ``rank`` and the bold "best" in the Space's tables."""
    from chemteb_eval.cli import main
    from chemteb_eval.results.board import read_results
    from chemteb_eval.results.ranking import rank_models
    from chemteb_eval.tasks import benchmark_tasks, get_benchmark

    from .test_ranking import _write

    bench = get_benchmark("PipChem")
    pairs = [t.name for t in benchmark_tasks(bench) if t.type == "PairClassification"]
    assert len(pairs) == 2
    complete = {t.name: 0.5 for t in benchmark_tasks(bench)}
    partial = {name: s for name, s in complete.items() if name != pairs[1]}
    partial[pairs[0]] = 0.99
    _write(tmp_path, "org/complete", complete)
    _write(tmp_path, "org/partial", partial)
    rows = {r.model: r for r in rank_models(read_results([tmp_path], bench), bench)}
    assert "PairClassification" not in rows["org/partial"].means
    assert "PairClassification" not in rows["org/partial"].ranks
    assert rows["org/partial"].type_coverage["PairClassification"] == "1/2"
    assert rows["org/complete"].ranks["PairClassification"] == 1
    assert rows["org/partial"].means["Retrieval"] == 0.5  # a type it has whole: a mean
    # what the CLI prints: 1/2 in its cell, never a mean and a rank
    assert main(["rank", str(tmp_path), "-b", "PipChem"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if "org/partial" in x)
    assert " 1/2 " in line and "0.9900" not in line
    assert main(["rank", str(tmp_path), "-b", "PipChem", "--json"]) == 0
    shown = {r["model"]: r for r in json.loads(capsys.readouterr().out)}
    assert shown["org/partial"]["type_coverage"]["PairClassification"] == "1/2"


# -- a run's counts add up ---------------------------------------------------------------------


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    tasks=st.lists(st.lists(st.sampled_from("abcdefghij"), max_size=12), min_size=1, max_size=4),
    cached=st.sets(st.sampled_from("abcdefghij")),
    use_cache=st.booleans(),
)
def test_counts_add_up_unique_is_hits_plus_encoded(
    tasks: list[list[str]], cached: set[str], use_cache: bool
) -> None:
    """A run of 8 unique texts reported 10 encoded: every unique text is counted once, as a
    hit or as encoded, however the tasks share texts and whatever the cache held."""
    import tempfile

    from chemteb_eval.engine import EmbeddingCache, EmbeddingEngine

    from .helpers.hashing_encoder import HashingEncoder

    encoder = HashingEncoder()
    with tempfile.TemporaryDirectory() as folder:
        store = EmbeddingCache(Path(folder), "m", "r", "s") if use_cache else None
        if store is not None and cached:
            warm = EmbeddingEngine(encoder, store, batch_size=4, progress=False)
            warm.prefetch(("", t) for t in sorted(cached))
            warm.close()
        engine = EmbeddingEngine(encoder, store, batch_size=4, progress=False)
        for texts in tasks:  # task by task, as for a backend that cannot promise invariance
            engine.prefetch(("", t) for t in texts)
        for texts in tasks:
            engine.embed(texts, "")
        engine.close()
        if store is not None:
            store.close()
    unique = {t for texts in tasks for t in texts}
    stats = engine.stats
    assert stats.unique == len(unique) and stats.requested == sum(map(len, tasks))
    assert stats.cache_hits + stats.encoded == stats.unique
    assert stats.encoded == len(unique - cached) if use_cache else stats.encoded == len(unique)


def test_counts_add_up_after_the_cache_lost_what_the_run_wrote(tmp_path: Path) -> None:
    import shutil
    import warnings

    from chemteb_eval.engine import EmbeddingCache, EmbeddingEngine

    from .helpers.hashing_encoder import HashingEncoder

    store = EmbeddingCache(tmp_path, "m", "r", "s")
    engine = EmbeddingEngine(HashingEncoder(), store, batch_size=4, progress=False)
    texts = [f"text {i}" for i in range(8)]
    engine.prefetch(("", t) for t in texts)
    shutil.rmtree(store.path)  # the cache's folder removed mid-run: embed encodes them again
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = engine.embed(texts, "")
    assert out.shape == (8, 64)
    assert (engine.stats.unique, engine.stats.cache_hits, engine.stats.encoded) == (8, 0, 8)
    engine.close()


# -- low precision is scored in float32 -----------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_low_precision_vectors_are_scored_in_float32(dtype: str) -> None:
    """As MTEB since 2.18.10 (#4933): float16/bfloat16 vectors are upcast before similarity, so
    ties that low-precision arithmetic would make cannot move a score."""
    torch = pytest.importorskip("torch")
    from chemteb_eval.scoring import score_pair_classification, score_retrieval

    rng = np.random.default_rng(3)
    a = torch.tensor(rng.standard_normal((40, 24))).to(getattr(torch, dtype))
    b = torch.tensor(rng.standard_normal((40, 24))).to(getattr(torch, dtype))
    labels = rng.integers(0, 2, 40)
    upcast = a.float().numpy(), b.float().numpy()
    assert score_pair_classification(a, b, labels) == score_pair_classification(*upcast, labels)
    ids = [f"d{i}" for i in range(40)]
    qrels = {f"q{i}": {f"d{i}": 1} for i in range(10)}
    qids = [f"q{i}" for i in range(10)]
    low = score_retrieval(a[:10], b, qids, ids, qrels)
    assert low == score_retrieval(upcast[0][:10], upcast[1], qids, ids, qrels)


def test_identity_a_hostile_probe_record_never_matches_every_model(tmp_path: Path) -> None:
    """A record claiming noise 2 matched every model of its dimension: another model got its
    label, its cached vectors and its score."""
    import base64

    from chemteb_eval.models.identity import MOST_NOISE, Probe, ProbeGuard, measure_probe, within

    vectors = np.random.default_rng(0).standard_normal((4, 1536)).astype("<f4")
    raw = base64.b64encode(vectors.tobytes()).decode()
    for noise in (2.0, MOST_NOISE * 1.01, float("nan"), -1.0):
        record = {"rows": 4, "dim": 1536, "float32": raw, "noise": noise}
        assert Probe.from_record(record) is None
    hostile = Probe(vectors, MOST_NOISE)  # the most a record may claim: still far from others
    model = measure_probe(_NoisyApi(seed=1))
    assert not model.matches(hostile) and not within(model, hostile)
    registry = ProbeRegistry(tmp_path / "r.json")
    identity = ApiIdentity("served", "http://h/v1")
    registry.remember(identity, Anchor(hostile, "2026-12-01"))
    guard = ProbeGuard(_NoisyApi(seed=1), identity, registry.anchor(identity), model)  # type: ignore[arg-type]
    with pytest.raises(ChemtebError, match="another model"):
        guard.refuse(model, "at the start of this run")
    with pytest.raises(ChemtebError, match="cannot be told from another"):
        measure_probe(_NoisyApi(noise=0.01))  # 0.55 between calls: no model to name


def test_independent_numbers_renormalising_a_cut_corpus_is_decided_once() -> None:
    """Decided per 50,000-document chunk, one non-unit row at a chunk's start left that chunk
    unnormalised: a document's vector depended on where it sat in the corpus."""
    from chemteb_eval.runner.costs import transform
    from chemteb_eval.scoring.compression import Compression

    rng = np.random.default_rng(2)
    vectors = rng.standard_normal((9_005, 32)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors[4_500] *= 3  # one document not of unit length, first of the second chunk
    variant = Compression(dim=8, precision="float16")
    chunked = transform(vectors, variant, chunk=4_500)
    assert np.array_equal(chunked, transform(vectors, variant))
    assert np.allclose(np.linalg.norm(chunked[4_501:], axis=1), 1, atol=1e-3)


def test_order_and_threads_overlapping_runs_restore_torchs_threads() -> None:
    """Two runs in two Python threads saved and restored the thread count out of order: torch
    stayed on one thread."""
    torch = pytest.importorskip("torch")
    from chemteb_eval.models._threads import one_thread_per_call

    before = torch.get_num_threads()
    a, b = one_thread_per_call(), one_thread_per_call()
    assert a.__enter__() == before and b.__enter__() == before  # both see the real count
    a.__exit__(None, None, None)
    assert torch.get_num_threads() == 1  # b still runs
    b.__exit__(None, None, None)
    assert torch.get_num_threads() == before


def test_faults_what_finished_before_a_failed_call_is_kept(tmp_path: Path) -> None:
    """A call that raised (or Ctrl-C) threw away the vectors of the calls that had finished:
    the resumed run encoded them again."""
    from chemteb_eval.engine import EmbeddingCache, EmbeddingEngine

    from .helpers.hashing_encoder import HashingEncoder

    texts = [f"text {i:03d}" for i in range(40)]
    failing = HashingEncoder(interrupt_at=3)  # Ctrl-C in the third call
    store = EmbeddingCache(tmp_path, "m", "r", "s")
    engine = EmbeddingEngine(failing, store, batch_size=8, progress=False)
    with pytest.raises(KeyboardInterrupt):
        engine.prefetch(("", t) for t in texts)
    engine.close()
    store.close()
    store = EmbeddingCache(tmp_path, "m", "r", "s")
    again = EmbeddingEngine(HashingEncoder(), store, batch_size=8, progress=False)
    again.prefetch(("", t) for t in texts)
    assert again.stats.cache_hits == 16 and again.stats.encoded == 24  # two calls of 8 kept
    assert np.array_equal(
        again.embed(texts, ""), HashingEncoder().encode(texts, prompt="", batch_size=8)
    )
    again.close()
    store.close()
