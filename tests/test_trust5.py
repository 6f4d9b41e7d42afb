"""Trust, round 5 (issue 59): the findings of an outside attack on the block cache, API identity
and the state that outlives a run, one test each, named after the attack's class; each failed
on the code before."""

from __future__ import annotations

import json
import os
import threading
import time
import warnings
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chemteb_eval.engine import EmbeddingCache, text_key

from .helpers.loopback import read_json, reply_json, serving


def _cache(root: Path, **kwargs: Any) -> EmbeddingCache:
    return EmbeddingCache(root, "org/model", "a" * 40, "org/model", **kwargs)


def _keys(n: int, salt: str = "") -> list[str]:
    return [text_key("", f"{salt}text {i}") for i in range(n)]


def _vectors(n: int, dim: int = 8, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)


# -- 15: processes that look alike ---------------------------------------------------------------


def test_processes_that_look_alike_a_writer_with_anothers_pid_never_takes_its_part_file(
    tmp_path: Path,
) -> None:
    """A block's part file was named by the pid alone (``with_suffix`` replaced the random
    token): another writer with the same pid (pid 1 in another container on a shared volume)
    mid-block made every put end in "File exists"."""
    import fcntl

    cache = _cache(tmp_path)
    pid = os.getpid()
    held = []
    for name in (f"{pid}.new", f"{pid}.part"):  # the other writer's files, locked: at work
        file = (cache.path / name).open("wb")
        file.write(b"half a block")
        file.flush()
        fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        held.append(file)
    keys, vectors = _keys(50), _vectors(50)
    assert cache.put(keys, vectors) is True
    assert np.array_equal(_cache(tmp_path).get(keys), vectors)
    assert (cache.path / f"{pid}.part").read_bytes() == b"half a block"  # never touched
    for file in held:
        file.close()


def test_processes_that_look_alike_two_threads_putting_at_once_lose_nothing(
    tmp_path: Path,
) -> None:
    """Two threads of one process calling ``put`` on two caches of one folder (two ``run()``s
    in one notebook) shared the pid-named part file: one's put failed or the cache turned
    read-only mid-run."""
    errors: list[BaseException] = []
    barrier = threading.Barrier(2)

    def writer(salt: str) -> None:
        try:
            cache = _cache(tmp_path)
            barrier.wait()
            for block in range(20):
                keys = _keys(64, f"{salt}{block}")
                assert cache.put(keys, _vectors(64, seed=block)) is True
            assert not cache.read_only
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(s,)) for s in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    assert len(_cache(tmp_path)) == 2 * 20 * 64


# -- 16: identity over time ----------------------------------------------------------------------


def test_identity_over_time_a_damaged_last_blocks_number_is_never_reused(tmp_path: Path) -> None:
    """The highest-numbered block cut short (an interrupted copy) was set aside and its number
    reused by this process's next put, whose block it then never indexed: encoded again."""
    cache = _cache(tmp_path)
    first, second = _keys(10), _keys(10, "b")
    cache.put(first, _vectors(10))
    cache.put(second, _vectors(10, seed=1))
    cache.close()
    last = sorted(cache.path.glob("*.block"))[-1]
    last.write_bytes(last.read_bytes()[:-40])  # cut: damaged
    reopened = _cache(tmp_path)
    with pytest.warns(UserWarning, match="1 stored block"):
        assert reopened.missing(second) == second
    third = _keys(10, "c")
    assert reopened.put(second + third, _vectors(20, seed=2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert reopened.missing(second + third) == []  # indexed by the process that wrote it
        assert len(reopened) == 30
    numbers = sorted(int(p.stem) for p in reopened.path.glob("*.block"))
    assert int(last.stem) not in numbers  # its number was never taken again here


def test_identity_over_time_a_block_another_writer_puts_under_a_set_aside_number_is_read(
    tmp_path: Path,
) -> None:
    """A writer that had not seen the damage may publish under the number set aside: the
    process that set it aside must read that new block, not skip it by its name."""
    keys = _keys(5)
    cache = _cache(tmp_path)
    cache.put(keys, _vectors(5))
    damaged = cache.path / "000000000002.block"
    damaged.write_bytes(b"junk")
    with pytest.warns(UserWarning, match="1 stored block"):
        assert len(cache) == 5
    other = _cache(tmp_path)  # another writer that publishes under number 2 once it is free
    other._next = 2
    more = _keys(5, "x")
    other.put(more, _vectors(5, seed=3))
    assert (cache.path / "000000000002.block").exists()
    assert cache.missing(more) == []


# -- 13: scale -----------------------------------------------------------------------------------


def test_scale_lookup_without_a_width_is_linear_in_the_keys(tmp_path: Path) -> None:
    """``lookup(keys)`` without a width grouped keys by width once per key: 8,000 keys 5 s
    (100k about 15 min) where the same lookup with the width took 0.01 s."""
    cache = _cache(tmp_path)
    keys = _keys(20_000)
    cache.put(keys, _vectors(20_000))
    started = time.perf_counter()
    got = cache.lookup(keys)
    took = time.perf_counter() - started
    assert len(got) == 20_000 and np.array_equal(got[keys[7]], cache.get(keys[7:8])[0])
    started = time.perf_counter()
    cache.lookup(keys, dim=8)
    with_width = time.perf_counter() - started
    assert took < 20 * with_width + 1.0  # quadratic: ~30 s here


# -- 1 and 16: API identity declared, its probe a guard ------------------------------------------


class _Api:
    """A model behind an API: fixed unit vectors per text from ``seed``; ``between`` moves every
    vector by that much per component between runs (a gateway's cache: the same answer within a
    run); after ``switch_after`` calls the server answers with ``then``'s seed (restarted with
    other weights mid-run)."""

    def __init__(
        self,
        name: str = "served",
        seed: int = 0,
        dim: int = 64,
        *,
        between: float = 0.0,
        run: int = 0,
        switch_after: int | None = None,
        then: int = 9,
        until: int | None = None,
    ) -> None:
        from chemteb_eval.models.base import ModelMeta

        self.meta = ModelMeta(name, None, None, dim, None, "openai-compatible-http", "http://h/v1")
        self.seed, self.dim, self.between, self.run = seed, dim, between, run
        self.switch_after, self.then, self.until, self.calls = switch_after, then, until, 0

    def prompt(self, task_type: str, role: object) -> str:
        return ""

    def vector(self, text: str, seed: int) -> np.ndarray:
        import zlib

        base = np.random.default_rng(zlib.crc32(f"{seed}\0{text}".encode())).standard_normal(
            self.dim
        )
        base /= np.linalg.norm(base)
        if self.between:
            base += self.between * np.random.default_rng([99, self.run]).standard_normal(self.dim)
        return base

    def encode(self, texts: list[str], *, prompt: str, batch_size: int) -> np.ndarray:
        self.calls += 1
        switched = self.switch_after is not None and self.calls > self.switch_after
        switched = switched and (self.until is None or self.calls <= self.until)
        seed = self.then if switched else self.seed
        return np.asarray([self.vector(prompt + t, seed) for t in texts], np.float32)


def _pairs_task(folder: Path, rows: int = 40) -> tuple[Any, dict[str, str]]:
    from chemteb_eval.tasks.custom import read_task_file

    lines = ["sentence1,sentence2,label"]
    lines += [f"compound {i} salt,compound {i} hydrate,{i % 2}" for i in range(rows)]
    (folder / "pairs.csv").write_text("\n".join(lines) + "\n")
    (folder / "pairs.yaml").write_text(
        "name: SaltPairs\ntype: PairClassification\nsource: {path: pairs.csv}\n"
    )
    declared = read_task_file(folder / "pairs.yaml")
    return declared.to_task(), {declared.name: str(declared.source)}


def _run(tmp_path: Path, model: Any, cache: str = "cache", **kwargs: Any) -> Any:
    from chemteb_eval.runner import run

    task, paths = _pairs_task(tmp_path)
    return run(
        model,
        tasks=[task],
        data_paths=paths,
        output_dir=tmp_path / kwargs.pop("out", "out"),
        cache_dir=tmp_path / cache,
        progress=False,
        log=kwargs.pop("log", lambda m: None),
        **kwargs,
    )


def _main_score(report: Any) -> float:
    import json

    payload = json.loads((report.results_dir / "SaltPairs.json").read_text())
    return float(payload["scores"]["test"][0]["main_score"])


def test_identity_two_models_whose_probes_match_never_share_a_label(tmp_path: Path) -> None:
    """When a probe matched two models on record, the label that sorted first won: a model
    served with a little noise took another model's label, cache and folder, overwrote its
    model_meta.json and reported that model's score as "skipped"."""
    import json

    first = _run(tmp_path, _Api("alpha"))
    other = _run(tmp_path, _Api("beta"))  # the same vectors under another served name
    assert other.statuses == {"SaltPairs": "done"}  # scored, never "skipped" with alpha's
    assert other.results_dir != first.results_dir
    metas = [json.loads((r.results_dir / "model_meta.json").read_text()) for r in (first, other)]
    assert metas[0]["name"] == "alpha" and metas[1]["name"] == "beta"
    assert metas[0]["weights"] != metas[1]["weights"]
    assert len(list((tmp_path / "cache").glob("*.vectors"))) == 2


def test_identity_over_time_noise_between_runs_only_is_one_model(tmp_path: Path) -> None:
    """Noise that shows between runs but not within one (a gateway's cache, a sticky replica):
    1e-5 per component of a 1,536-d model apart was "another model" on run 2, and run 3 was
    refused."""
    lines: list[str] = []
    reports = [
        _run(tmp_path, _Api(dim=1536, between=1e-5, run=i), log=lines.append) for i in range(3)
    ]
    assert [r.statuses for r in reports] == [{"SaltPairs": "done"}] + [{"SaltPairs": "skipped"}] * 2
    assert len({r.results_dir for r in reports}) == 1
    assert any("moved" in line and "tolerated" in line for line in lines)  # measured, said


def test_identity_over_time_a_server_that_changes_model_mid_run_stores_nothing_of_it(
    tmp_path: Path,
) -> None:
    """The probe was asked once, before encoding: a server restarted with other weights mid-run
    left the other model's vectors in this model's cache, and every later clean run reused
    them (0.0357 where the model scores 0.0519)."""
    from chemteb_eval.errors import ChemtebError

    clean = _main_score(_run(tmp_path, _Api(), cache="clean", out="clean"))
    with pytest.raises(ChemtebError, match="--revision"):
        _run(tmp_path, _Api(switch_after=4, then=5))  # 3 probe calls, then the texts
    assert not list((tmp_path / "out").rglob("SaltPairs.json"))  # nothing scored
    assert not list((tmp_path / "cache").glob("*.vectors/*.block"))  # nothing stored
    again = _run(tmp_path, _Api())  # the server back to its model: a clean run's number
    assert again.statuses == {"SaltPairs": "done"} and _main_score(again) == clean


def test_identity_over_time_calls_cleared_before_a_switch_are_kept_and_no_later_one(
    tmp_path: Path,
) -> None:
    """Every call of a watched API model is checked before its vectors are used: the blocks of
    the model are kept, the call the other model answered never is (within a block too)."""
    from chemteb_eval.engine import EmbeddingEngine
    from chemteb_eval.models.identity import (
        Anchor,
        ApiIdentity,
        ProbeGuard,
        ProbeMoved,
        measure_probe,
    )

    # 3 probe calls, then each 16-text call and its check: one block of 512 texts, then 5 calls
    model = _Api(switch_after=3 + 2 * (32 + 5))
    start = measure_probe(model)
    guard = ProbeGuard(model, ApiIdentity("served", "http://h/v1"), Anchor(start, "today"), start)
    engine = EmbeddingEngine(guard.watch(model), _cache(tmp_path), batch_size=16, progress=False)
    texts = [f"text {i}" for i in range(2_000)]
    with pytest.raises(ProbeMoved, match="after a call"):
        engine.prefetch(("", t) for t in texts)
    engine.close()
    stored = list(_cache(tmp_path).keys())
    assert len(stored) == 512 + 5 * 16  # the first block, and the 5 calls cleared in the next
    by_key = {text_key("", t): t for t in texts}
    kept = _cache(tmp_path).get(stored)
    assert np.array_equal(kept, np.asarray([model.vector(by_key[k], 0) for k in stored], "f4"))


# -- 15: two machines with other CPUs sharing a cache folder --------------------------------------

_AMX = frozenset(
    "avx avx2 fma avx512f avx512bw avx512vl avx512dq avx512_vnni avx512_bf16 amx_tile amx_bf16 "
    "amx_int8".split()
)
_AVX2 = frozenset("avx avx2 fma sse4_1".split())


def test_processes_that_look_alike_a_cache_filled_on_one_cpu_is_never_served_on_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key held the library versions but not the kernel set torch and oneDNN pick: a cache
    filled on one CPU was served bit for bit on another (84 of 110 MiniLM vectors differ)."""
    from chemteb_eval.models import _kernels
    from chemteb_eval.models.base import ModelMeta
    from chemteb_eval.models.variant import ModelVariant
    from chemteb_eval.runner.encode import open_cache

    class Local:
        meta = ModelMeta("m", "a" * 40, 1, 8, 8, "sentence-transformers", "src")

    keys = _keys(10)
    monkeypatch.setattr(_kernels, "_cpu_flags", lambda: _AVX2)
    epyc = open_cache(tmp_path, Local(), ModelVariant(), None)  # type: ignore[arg-type]
    assert epyc is not None and epyc.put(keys, _vectors(10))
    assert json.loads(epyc.ident)[-1]["cpu-kernels"].startswith("avx2")
    monkeypatch.setattr(_kernels, "_cpu_flags", lambda: _AMX)
    with pytest.warns(UserWarning, match=r"1 other cache\(s\) of this model .* rm -r"):
        xeon = open_cache(tmp_path, Local(), ModelVariant(), None)  # type: ignore[arg-type]
    assert xeon is not None and xeon.path != epyc.path
    assert json.loads(xeon.ident)[-1]["cpu-kernels"].startswith("avx512_core_amx")
    assert xeon.missing(keys) == keys  # encoded anew on this CPU, never the other's bits
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")  # oneDNN capped: the AVX2 kernels
    assert _kernels._isa(_AMX) == "avx2"


def test_processes_that_look_alike_rank_says_when_results_come_from_two_kernel_sets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from chemteb_eval.cli import main
    from chemteb_eval.models._kernels import KERNELS
    from chemteb_eval.results import software
    from chemteb_eval.results.runs import read_runs
    from chemteb_eval.tasks.custom import read_task_file

    from .test_custom_tasks import write_pairs
    from .test_identity import _score

    assert software.KERNELS == KERNELS  # the results room names the entry without importing it
    declared = read_task_file(write_pairs(tmp_path))
    for name, kernels in (
        ("org/a", "avx2; torch AVX2"),
        ("org/b", "avx512_core_amx; torch AVX512"),
    ):
        report = _score(declared, tmp_path / "out", name=name, framework="sentence-transformers")
        path = report.results_dir / "SynonymPairs.json"
        data = json.loads(path.read_text())
        assert KERNELS in data["software"]  # recorded with every result
        (run,), _ = read_runs(report.results_dir)
        assert run["software"][KERNELS] == data["software"][KERNELS]  # and in the run's record
        data["software"][KERNELS] = kernels
        path.write_text(json.dumps(data))
    assert main(["rank", str(tmp_path / "out"), "-b", "Custom"]) == 0
    err = capsys.readouterr().err
    assert (
        "computed on 2 kernel sets (CPU instruction sets or GPUs): avx2; torch AVX2 (org/a)" in err
    )


# -- 14: state that lives beside the data --------------------------------------------------------


def test_state_beside_the_data_an_old_layout_cache_of_a_local_model_is_named_once(
    tmp_path: Path,
) -> None:
    """A local model's cache of the layout before block files was never converted (the
    versions changed its name), nor removed, nor mentioned."""
    software = {"torch": "2.13.0", "cpu-kernels": "avx2"}
    args = (tmp_path, "org/model", "a" * 40, "org/model")
    before, _ = EmbeddingCache.path_for(*args, None, None)
    before.with_suffix(".sqlite").write_bytes(b"SQLite format 3\0" + bytes(4000))
    with pytest.warns(UserWarning, match=r"1 other cache\(s\) .*\(0\.0 MB.*\.sqlite'"):
        cache = EmbeddingCache(*args, software=software)
    other = EmbeddingCache(tmp_path, "org/other", "a" * 40, "org/other", software=software)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # another model's cache is not this one's to name
        EmbeddingCache(tmp_path, "org/other", "a" * 40, "org/other", software=software)
    assert cache.path != other.path and before.with_suffix(".sqlite").exists()  # never deleted


# -- the CLI: repeated options -------------------------------------------------------------------


def test_collisions_two_dash_t_options_run_both_tasks() -> None:
    """``chemteb run -t A -t B`` silently ran only B: the second ``-t`` replaced the first."""
    from chemteb_eval.cli import build_parser
    from chemteb_eval.cli.run import _selected

    args = build_parser().parse_args(
        [
            "run",
            "-t",
            "PipChemWikiRetrieval",
            "-t",
            "PipChemNameSMILESPC",
            "PipChemWikiTopicClassification",
        ]
    )
    chosen, _ = _selected(args)
    assert chosen is not None
    assert [t.name for t in chosen] == [
        "PipChemWikiRetrieval",
        "PipChemNameSMILESPC",
        "PipChemWikiTopicClassification",
    ]


# -- the outside attack on issue 59 --------------------------------------------------------------

_GATEWAY = {"new": False, "all": False}


class _Gateway(BaseHTTPRequestHandler):
    """An OpenAI-compatible server behind a gateway that answers a request made of probe texts
    alone (or the start's filler) from the old model, everything else from the new one once
    ``_GATEWAY['new']``."""

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        from chemteb_eval.models.identity import FILLER, PROBE_TEXTS

        texts = read_json(self)["input"]
        probe_only = set(texts) <= {*PROBE_TEXTS, *FILLER} and not _GATEWAY.get("all")
        seed = 9 if _GATEWAY["new"] and not probe_only else 0
        rows = [_Api().vector(t, seed).tolist() for t in texts]
        reply_json(self, {"data": [{"index": i, "embedding": v} for i, v in enumerate(rows)]})


def test_identity_over_time_a_gateway_answering_the_probe_from_the_old_model_is_caught(
    tmp_path: Path,
) -> None:
    """A server that answered the probe request from the old model (a gateway's cache keyed by
    the body, a replica not yet upgraded) and every other text from the new one scored 80 of
    one model's vectors beside 80 of another's, said nowhere."""
    from chemteb_eval.models.identity import ProbeMoved

    _GATEWAY["new"] = False
    with serving(_Gateway) as url:
        first = _run(tmp_path, "openai:served", api_base=url)
        assert first.statuses == {"SaltPairs": "done"}
        _GATEWAY["new"] = True
        with pytest.raises(ProbeMoved, match="in a request of this run"):
            _run(tmp_path, "openai:served", api_base=url, cache="fresh", out="fresh")
        with pytest.raises(ProbeMoved):  # nor are the cached vectors served as its own
            _run(tmp_path, "openai:served", api_base=url, out="other")


def test_identity_over_time_a_direct_call_outside_the_engine_is_checked(tmp_path: Path) -> None:
    """NER embeds its words by calling the encoder directly, past the engine and the cache:
    a model swapped after the start probe scored a whole NER task, said nowhere."""
    from chemteb_eval.models.identity import (
        Anchor,
        ApiIdentity,
        ProbeGuard,
        ProbeMoved,
        measure_probe,
    )

    model = _Api(switch_after=3)
    start = measure_probe(model)
    guard = ProbeGuard(model, ApiIdentity("served", "http://h/v1"), Anchor(start, "now"), start)
    with pytest.raises(ProbeMoved, match="after a call"):
        guard.watch(model).encode(["benzene ring"], prompt="", batch_size=8)


def test_identity_over_time_a_swap_without_a_cache_is_caught(tmp_path: Path) -> None:
    """With --no-cache the vectors never reached a put, where the guard was asked: a model
    answering 21 calls mid-run was scored."""
    from chemteb_eval.models.identity import ProbeMoved

    with pytest.raises(ProbeMoved):  # another model for three calls, then the model again
        _run(tmp_path, _Api(switch_after=3 + 1, until=3 + 3), use_cache=False, batch_size=8)
    assert not list((tmp_path / "out").rglob("SaltPairs.json"))


def test_state_beside_the_data_a_lost_anchor_never_serves_another_models_cache(
    tmp_path: Path,
) -> None:
    """With api-models.json lost (a sync without it, a wipe) and a fresh --output-dir, a changed
    server's first run took the old model's cache as its own: 0.7143, the old model's score,
    where its own is 0.6786."""
    from chemteb_eval.models.identity import ProbeMoved

    _run(tmp_path, _Api(seed=0))
    (tmp_path / "cache" / "api-models.json").unlink()
    with pytest.raises(ProbeMoved, match=r"embedding cache holds .*rm -r"):
        _run(tmp_path, _Api(seed=9), out="fresh")
    assert not list((tmp_path / "fresh").rglob("SaltPairs.json"))


def test_identity_an_adopted_cache_of_the_layout_before_is_checked_before_it_is_served(
    tmp_path: Path,
) -> None:
    """The cache keyed by the URL alone (before probes) was adopted as "the model that answered
    then" whatever answers now: another model's score came back."""
    from chemteb_eval.engine import EmbeddingEngine
    from chemteb_eval.models.identity import ProbeMoved

    old = EmbeddingCache(tmp_path / "cache", "served", None, "http://h/v1")
    engine = EmbeddingEngine(_Api(seed=0), old, progress=False)
    engine.prefetch(("", t) for t in [f"compound {i} salt" for i in range(40)])
    engine.close()
    old.close()
    with pytest.raises(ProbeMoved, match="embedding cache holds"):
        _run(tmp_path, _Api(seed=9))


def test_faults_two_runs_remembering_at_once_keep_both_and_a_damaged_registry_is_kept(
    tmp_path: Path,
) -> None:
    """``remember`` read, changed and replaced the file with no lock: two runs at once kept
    150 of 300 anchors; one stray comma made the next run rewrite the file with its own anchor
    alone, every other model's gone."""
    from chemteb_eval.models.identity import Anchor, ApiIdentity, Probe, ProbeRegistry

    path = tmp_path / "api-models.json"
    probe = Probe(np.eye(4, 8))

    def remember(prefix: str) -> None:
        for i in range(40):
            ProbeRegistry(path).remember(
                ApiIdentity(f"{prefix}{i}", "http://h/v1"), Anchor(probe, "d")
            )

    threads = [threading.Thread(target=remember, args=(p,)) for p in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert len(json.loads(path.read_text())) == 80
    damaged = path.read_text()[:-1] + ",}"  # not JSON any more
    path.write_text(damaged)
    ProbeRegistry(path).remember(ApiIdentity("c", "http://h/v1"), Anchor(probe, "d"))
    assert path.read_text() == damaged  # left for the user, never wiped


def test_collisions_a_hub_model_never_takes_an_api_models_folder(tmp_path: Path) -> None:
    """``openai:BAAI/bge-small-en-v1.5 --revision <commit>`` and then the Hub model at that
    commit: the second run was "skipped" with the server's score and rewrote model_meta.json."""
    from chemteb_eval.errors import ChemtebError
    from chemteb_eval.models.base import ModelMeta

    from .helpers.hashing_encoder import HashingEncoder

    commit = "b" * 40
    _run(tmp_path, _Api("org/model"), revision=commit)
    hub = HashingEncoder()
    hub.meta = ModelMeta("org/model", commit, 1, hub.meta.embedding_dim, 8, "test", "org/model")
    with pytest.raises(ChemtebError, match="served by an API"):
        _run(tmp_path, hub)


def test_processes_that_look_alike_the_kernel_set_names_the_gpu_the_model_runs_on() -> None:
    from chemteb_eval.models._kernels import encoder_device

    class Device:
        type, index = "cuda", 1

    class Encoder:
        device = Device()

    assert encoder_device(Encoder()) == "cuda:1"  # "cuda" named GPU 0 on a mixed node


def test_scale_the_other_caches_line_stays_one_short_line(tmp_path: Path) -> None:
    software = {"torch": "2.13.0", "cpu-kernels": "avx2"}
    with warnings.catch_warnings():  # six environments' caches of one model
        warnings.simplefilter("ignore")
        for i in range(6):
            args = (tmp_path, "org/model", "a" * 40, "org/model")
            EmbeddingCache(*args, software={"numpy": str(i)}).put(_keys(1), _vectors(1))
    with pytest.warns(UserWarning) as said:
        EmbeddingCache(tmp_path, "org/model", "a" * 40, "org/model", software=software)
    (line,) = [str(w.message) for w in said]
    assert "6 other cache(s)" in line and "and 3 more" in line and len(line) < 1_000


def test_hostile_files_a_block_numbered_past_the_names_never_hides_later_puts(
    tmp_path: Path,
) -> None:
    """A block renamed to a 29-digit number made the next put take a 30-digit name, which no
    reader lists: every later put was invisible, even to its writer."""
    cache = _cache(tmp_path)
    cache.put(_keys(4), _vectors(4))
    (block,) = cache.path.glob("*.block")
    block.rename(cache.path / f"{'9' * 29}.block")
    fresh = _cache(tmp_path)
    more = _keys(8, "more")
    fresh.put(more, _vectors(8))
    assert fresh.missing(more) == [] and _cache(tmp_path).missing(more) == []


def test_identity_one_server_written_two_ways_is_one_identity() -> None:
    from chemteb_eval.models.identity import ApiIdentity

    same = [ApiIdentity("m", u).label for u in ("HTTP://Host:80/v1/", "http://host/v1")]
    assert same[0] == same[1]
    assert ApiIdentity("m", "http://host:8000/v1").label != same[0]


class _Batching(BaseHTTPRequestHandler):
    """A server that computes a text otherwise beside others (bfloat16 batching): 0.002 per
    component more than alone, a little else for each request size."""

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        texts = read_json(self)["input"]
        rows = np.asarray([_Api().vector(t, 0) for t in texts])
        if len(texts) > 4:
            rows += 0.002 * np.random.default_rng(len(texts)).standard_normal(rows.shape)
        data = [{"index": i, "embedding": v.tolist()} for i, v in enumerate(rows)]
        reply_json(self, {"data": data})


def test_threads_and_load_a_server_that_batches_is_no_other_model(tmp_path: Path) -> None:
    """A server whose answer to a text moves beside other texts must not be "another model"
    now that each request carries a probe text: the start measures its noise among others."""
    with serving(_Batching) as url:
        report = _run(tmp_path, "openai:served", api_base=url, batch_size=8)
    assert report.statuses == {"SaltPairs": "done"}


# -- the second outside attack on issue 59 -------------------------------------------------------


class _Tei(BaseHTTPRequestHandler):
    """TEI's default: at most 32 inputs a request (413 beyond)."""

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        texts = read_json(self)["input"]
        if len(texts) > 32:
            body = json.dumps({"error": f"batch size {len(texts)} > maximum allowed 32"}).encode()
            self.send_response(413)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        data = [
            {"index": i, "embedding": _Api().vector(t, 0).tolist()} for i, t in enumerate(texts)
        ]
        reply_json(self, {"data": data})


def test_faults_the_probe_text_never_pushes_a_request_past_the_servers_limit(
    tmp_path: Path,
) -> None:
    """Each request carries a probe text: at --batch-size 32 a TEI server (32 inputs at most)
    refused every full request of a setup that had worked."""
    with serving(_Tei) as url:
        report = _run(tmp_path, "openai:served", api_base=url, batch_size=32)
    assert report.statuses == {"SaltPairs": "done"}


def test_identity_a_wrapper_that_delegates_attributes_is_still_guarded(tmp_path: Path) -> None:
    """``watch`` took a delegating wrapper's ``probe_watch`` for its own: it set it on the
    wrapper, the HTTP encoder inside never carried the probe, another model's vectors were
    stored."""
    from chemteb_eval.models.identity import Anchor, ApiIdentity, ProbeGuard, measure_probe

    class Logged:
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def __getattr__(self, name: str) -> Any:
            return getattr(self.inner, name)

    class Http(_Api):
        def __init__(self) -> None:
            super().__init__()
            self.probe_watch = None

    wrapper = Logged(Http())
    start = measure_probe(wrapper)
    guard = ProbeGuard(wrapper, ApiIdentity("served", "http://h/v1"), Anchor(start, "d"), start)
    watched = guard.watch(wrapper)
    assert watched is not wrapper and "probe_watch" not in vars(wrapper)
    assert watched.pipelined is False  # vectors come back through encode, checked


def test_identity_each_task_checks_the_cached_vectors_one_from_each_block(tmp_path: Path) -> None:
    """Only 8 cached rows of the first task with hits were compared: a cache whose second block
    another model wrote (after a swap, before the guard) served it."""
    from chemteb_eval.engine import EmbeddingEngine
    from chemteb_eval.models.identity import (
        Anchor,
        ApiIdentity,
        ProbeGuard,
        ProbeMoved,
        measure_probe,
    )

    cache = _cache(tmp_path)
    texts = sorted((f"compound {i}" for i in range(61)), key=lambda t: text_key("", t))
    for seed, part in ((0, texts[:-1]), (9, texts[-1:])):  # two puts, two models
        cache.put([text_key("", t) for t in part], np.stack([_Api().vector(t, seed) for t in part]))
    model = _Api()
    start = measure_probe(model)
    guard = ProbeGuard(model, ApiIdentity("served", "http://h/v1"), Anchor(start, "d"), start)
    engine = EmbeddingEngine(guard.watch(model), cache, progress=False, verify=guard.compare)
    engine.prefetch(("", t) for t in texts[:30])  # the first task: its cached vectors hold
    with pytest.raises(ProbeMoved, match="embedding cache holds"):  # the second's do not
        engine.prefetch(("", t) for t in texts[30:])


def test_hostile_files_a_damaged_cached_row_is_left_out_of_the_check_not_a_traceback(
    tmp_path: Path,
) -> None:
    from chemteb_eval.engine import EmbeddingEngine
    from chemteb_eval.models.identity import Anchor, ApiIdentity, ProbeGuard, measure_probe

    texts = [f"compound {i}" for i in range(20)]
    cache = _cache(tmp_path)
    cache.put([text_key("", t) for t in texts], np.stack([_Api().vector(t, 0) for t in texts]))
    (block,) = cache.path.glob("*.block")
    data = bytearray(block.read_bytes())
    data[-100] ^= 0xFF  # one flipped byte: the block fails its checksum
    block.write_bytes(bytes(data))
    model = _Api()
    start = measure_probe(model)
    guard = ProbeGuard(model, ApiIdentity("served", "http://h/v1"), Anchor(start, "d"), start)
    engine = EmbeddingEngine(
        guard.watch(model), _cache(tmp_path), progress=False, verify=guard.compare
    )
    with pytest.warns(UserWarning, match="damaged"):
        engine.prefetch(("", t) for t in texts)  # KeyError before
    engine.close()


def test_what_people_see_a_recorded_date_with_control_characters_is_no_anchor() -> None:
    from chemteb_eval.models.identity import Anchor, ApiIdentity, Probe

    identity = ApiIdentity("m", "http://h/v1")
    record = Anchor(Probe(np.eye(4, 8)), "2026-12-04").to_record(identity)
    assert Anchor.from_record(record, identity) is not None
    record["since"] = "2025\n\x1b[31mchemteb: OK\x1b[0m"
    assert Anchor.from_record(record, identity) is None


def test_identity_an_encoder_object_run_again_with_a_revision_is_not_held_to_its_last_guard(
    tmp_path: Path,
) -> None:
    """An encoder object reused by a second ``run`` kept the first run's guard: following the
    message (``--revision v2``) after a server change still failed against the old anchor."""
    from chemteb_eval.models.http import HTTPEmbeddingEncoder

    _GATEWAY["new"] = False
    with serving(_Gateway) as url:
        model = HTTPEmbeddingEncoder("served", api_base=url)
        assert _run(tmp_path, model).statuses == {"SaltPairs": "done"}
        _GATEWAY.update(new=True, all=True)  # the server restarted with another model
        report = _run(tmp_path, model, revision="v2", cache="v2")
    _GATEWAY.update(new=False, all=False)
    assert report.statuses == {"SaltPairs": "done"}
