"""Every code block a newcomer copies from README.md, docs/ and the metric cards works as written.

Each Python or shell block is preceded by a marker, ``<!-- block: KIND (what it needs) -->``:

- ``offline``: runs here as written, offline (the Python is run; from the checkout's root);
- ``hub``: needs the Hugging Face Hub — the Python is run against the loopback Hub with the metric
  Spaces published there; each ``chemteb`` line's arguments are checked, and offline it must
  fail at once in one line that says what to do;
- ``slow``: offline but minutes long (``chemteb run``): its arguments are checked;
- ``yours``: needs what only the user has (their model folder, API key, data copies, a clone of
  MTEB's results): its arguments are checked;
- ``setup``: the install commands (``.ci/run`` runs the README's test command itself).

No block may read ``../shared``: a user never has it. Cost: ~3 s; the loopback-Hub half ~25 s
(slow: publishing eight Spaces, then one process running the blocks).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

KINDS = ("offline", "hub", "slow", "yours", "setup")
MARKER = re.compile(r"^<!-- block: (\w+)(?: \((.+)\))? -->$")
# Commands besides chemteb (and torchrun -m chemteb_eval) a block may ask a user to run.
OTHER_COMMANDS = {"git"}


@dataclass(frozen=True)
class Block:
    path: Path
    line: int
    lang: str
    kind: str | None
    text: str

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(REPO_ROOT)}:{self.line}"


def _documents() -> list[Path]:
    return [
        REPO_ROOT / "README.md",
        *sorted((REPO_ROOT / "docs").glob("*.md")),
        *sorted((REPO_ROOT / "metrics").glob("*/README.md")),
    ]


def _blocks() -> list[Block]:
    found = []
    for path in _documents():
        lines = path.read_text(encoding="utf-8").splitlines()
        i = 0
        while i < len(lines):
            fence = re.match(r"^```(\w*)$", lines[i])
            if not fence:
                i += 1
                continue
            end = next(j for j in range(i + 1, len(lines)) if lines[j] == "```")
            marker = MARKER.match(lines[i - 1]) if i else None
            found.append(
                Block(
                    path,
                    i + 1,
                    fence.group(1),
                    marker.group(1) if marker else None,
                    "\n".join(lines[i + 1 : end]) + "\n",
                )
            )
            i = end + 1
    return [b for b in found if b.lang in ("python", "bash")]


BLOCKS = _blocks()


def _of(kind: str, lang: str) -> list[Block]:
    return [b for b in BLOCKS if b.kind == kind and b.lang == lang]


def test_every_block_says_what_it_needs() -> None:
    assert len(BLOCKS) >= 20
    unmarked = [b.where for b in BLOCKS if b.kind not in KINDS]
    assert not unmarked, f"blocks without a <!-- block: KIND --> marker ({KINDS}): {unmarked}"
    for kind in ("offline", "hub", "slow", "yours", "setup"):
        assert any(b.kind == kind for b in BLOCKS), kind


def test_no_block_reads_the_shared_folder() -> None:
    reading = [b.where for b in BLOCKS if "../shared" in b.text]
    assert not reading, f"../shared is the developers' folder, never a user's: {reading}"


def _commands(block: Block) -> list[list[str]]:
    text = block.text.replace("\\\n", " ")
    out = []
    for line in text.splitlines():
        words = shlex.split(line, comments=True)
        if words:
            out.append(words)
    return out


def _chemteb_args(words: list[str]) -> list[str] | None:
    if words[0] == "srun":  # Slurm starts the torchrun: its own options, then the command
        words = words[words.index("torchrun") :] if "torchrun" in words else words
    if words[0] == "chemteb":
        return words[1:]
    if words[0] == "torchrun" and "-m" in words:
        at = words.index("-m")
        assert words[at + 1] == "chemteb_eval", words
        _check_torchrun(words[1:at])
        return words[at + 2 :]
    return None


def _check_torchrun(options: list[str]) -> None:
    """torchrun's own options as torch's parser reads them (a misspelt --rdzv flag fails)."""
    from torch.distributed.run import get_args_parser

    try:
        get_args_parser().parse_args([*options, "-m", "chemteb_eval"])
    except SystemExit:
        pytest.fail(f"`torchrun {shlex.join(options)}`: options torchrun does not take")


def _sets_variables(words: list[str]) -> bool:
    """``export NAME=VALUE ...``: a block setting the environment the next command reads."""
    return words[0] == "export" and all(re.fullmatch(r"[A-Z_]+=\S*", w) for w in words[1:])


@pytest.mark.parametrize(
    "block", [b for b in BLOCKS if b.lang == "bash" and b.kind != "setup"], ids=lambda b: b.where
)
def test_every_command_is_one_chemteb_takes(block: Block) -> None:
    from chemteb_eval.cli import build_parser

    for words in _commands(block):
        args = _chemteb_args(words)
        if args is None and _sets_variables(words):
            continue
        if args is None:
            assert words[0] in OTHER_COMMANDS, f"{block.where}: {words[0]} is not a command here"
            continue
        try:
            build_parser().parse_args(args)
        except SystemExit:
            pytest.fail(f"{block.where}: `{shlex.join(words)}` is not a valid chemteb command")


_HUB_COMMANDS = [
    (b, words)
    for b in BLOCKS
    if b.lang == "bash" and b.kind == "hub"
    for words in _commands(b)
    if words[0] == "chemteb"  # torchrun adds its own report of a failed child
]


@pytest.mark.slow
@pytest.mark.parametrize(
    "block, words", _HUB_COMMANDS, ids=[f"{b.where}:{w[1]}" for b, w in _HUB_COMMANDS]
)
def test_hub_commands_offline_fail_fast_in_one_line(
    block: Block, words: list[str], tmp_path: Path
) -> None:
    """What a newcomer without the Hub (or a token) meets: one line saying what to do, at once."""
    import time

    env = _env(HF_HUB_OFFLINE="1", HF_HOME=str(tmp_path / "hf"), CHEMTEB_CACHE=str(tmp_path))
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "chemteb_eval.cli", *words[1:]],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    seconds = time.perf_counter() - started
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert done.returncode in (1, 2), f"{block.where}: {shlex.join(words)}\n{done.stderr[-2000:]}"
    assert len(lines) == 1 and "Traceback" not in done.stderr, (block.where, lines[-5:])
    assert seconds < 15, f"{block.where}: {shlex.join(words)} took {seconds:.1f} s to fail"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(HF_HUB_DISABLE_TELEMETRY="1", **extra)
    return env


@pytest.mark.parametrize("block", _of("offline", "python"), ids=lambda b: b.where)
def test_offline_python_runs_as_written(block: Block, tmp_path: Path) -> None:
    env = _env(HF_HUB_OFFLINE="1", HF_EVALUATE_OFFLINE="1", HF_HOME=str(tmp_path / "hf"))
    done = subprocess.run(
        [sys.executable, "-c", block.text],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, f"{block.where}:\n{done.stderr[-3000:]}"


_RUN_BLOCKS = """
import json, sys, traceback
failed = {}
for where, code in json.loads(sys.argv[1]).items():
    try:
        exec(compile(code, where, "exec"), {"__name__": "__main__"})
    except BaseException:
        failed[where] = traceback.format_exc()[-2000:]
print("RESULT " + json.dumps(failed))
"""


@pytest.mark.slow
def test_hub_python_runs_as_written_against_the_loopback_hub(tmp_path: Path) -> None:
    from tests.helpers.fake_hub import FakeHub

    hub = FakeHub()
    try:
        hub.add_token("hf_write", "chemteb-bot", orgs=("chemteb",))
        env = _env(
            HF_ENDPOINT=hub.url,
            HF_HOME=str(tmp_path / "hf"),
            HF_TOKEN="hf_write",
            HF_HUB_DISABLE_XET="1",
        )
        published = subprocess.run(
            [sys.executable, "-m", "chemteb_eval.cli", "publish-metrics", "--namespace", "chemteb"],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )
        assert published.returncode == 0, published.stderr[-2000:]
        code = {b.where: b.text for b in _of("hub", "python")}
        assert len(code) >= 10  # the eight cards and docs/hub.md's two
        done = subprocess.run(
            [sys.executable, "-c", _RUN_BLOCKS, json.dumps(code)],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=600,
        )
    finally:
        hub.close()
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))
    failed = json.loads(line.removeprefix("RESULT "))
    assert not failed, "\n\n".join(f"{where}:\n{tb}" for where, tb in failed.items())
