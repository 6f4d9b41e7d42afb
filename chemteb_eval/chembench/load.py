"""Read ChemBench questions: a local folder of question files, a JSON/JSONL file, or the Hub copy.

Local: one JSON file per question; a question's topic is the first folder under the root
(``safety/MSDS/q.json`` -> ``safety``). Hub (``jablonkagroup/ChemBench``): one config per topic,
read with ``datasets.load_dataset`` at a revision you pin. Malformed questions are skipped and
reported, never fatal; keyword problems are reported for questions that still load.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chemteb_eval._files import first_non_utf8
from chemteb_eval.errors import ChemtebError, HubUnavailableError

from .questions import Question, keyword_problems

__all__ = ["CHEMBENCH_HUB_ID", "CHEMBENCH_HUB_REVISION", "QuestionSet", "load_questions"]

CHEMBENCH_HUB_ID = "jablonkagroup/ChemBench"
# No source this project trusts gives a commit to pin; pass revision= (a commit from the
# dataset's history) or revision="main" to read the latest, unpinned.
CHEMBENCH_HUB_REVISION: str | None = None


@dataclass
class QuestionSet:
    """Questions and what was wrong with the input.

    Args:
        questions: the questions that loaded.
        skipped: ``(source, reason)`` for questions that did not load.
        keyword_problems: ``(question name, problem)`` for questions whose keywords are off.
        source: where they came from.
    """

    questions: list[Question] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    keyword_problems: list[tuple[str, str]] = field(default_factory=list)
    source: str = ""

    def add(self, data: Any, origin: str, topic: str | None) -> None:
        try:
            question = Question.from_dict(data, topic=topic)
        except ValueError as exc:
            self.skipped.append((origin, str(exc)))
            return
        self.questions.append(question)
        for problem in keyword_problems(question.keywords):
            self.keyword_problems.append((question.name, problem))


def _load_folder(root: Path, out: QuestionSet) -> None:
    for path in sorted(root.rglob("*.json")):
        rel = path.relative_to(root)
        topic = rel.parts[0] if len(rel.parts) > 1 else None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            out.skipped.append((str(rel), f"not readable JSON ({exc})"))
            continue
        out.add(data, str(rel), topic)


def _load_file(path: Path, out: QuestionSet) -> None:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:  # its message names neither the file nor the line
        found = first_non_utf8(path)
        at, reason = (f"{path}:{found[0]}", found[1]) if found else (f"{path}", exc.reason)
        raise ValueError(f"questions: {at}: not UTF-8 text ({reason}); save it as UTF-8.") from None
    if path.suffix == ".jsonl":
        for n, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    row = json.loads(line)
                except ValueError as exc:
                    out.skipped.append((f"{path.name}:{n}", f"not JSON ({exc})"))
                    continue
                out.add(row, f"{path.name}:{n}", None)
        return
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"questions: {path} is not JSON ({exc}).") from exc
    rows = data if isinstance(data, list) else [data]
    for n, row in enumerate(rows):
        out.add(row, f"{path.name}[{n}]", None)


def _load_hub(repo_id: str, revision: str, configs: list[str] | None, out: QuestionSet) -> None:
    from datasets import get_dataset_config_names, load_dataset
    from huggingface_hub import constants

    from chemteb_eval._env import hub_reachable, offline_unless_reachable

    asked_offline = bool(constants.HF_HUB_OFFLINE)
    try:
        # without a network: the cache at once, not 24 s of retries before the same failure
        with offline_unless_reachable():
            names = configs or get_dataset_config_names(repo_id, revision=revision)
            loaded = [(c, load_dataset(repo_id, c, revision=revision)) for c in names]
    except (OSError, ConnectionError, ValueError) as exc:
        error: type[ChemtebError] = HubUnavailableError
        if asked_offline:
            why = "HF_HUB_OFFLINE is set and it is not in the Hugging Face cache: unset it"
        elif not hub_reachable():
            why = f"the Hub ({constants.ENDPOINT}) cannot be reached and it is not cached: retry"
        else:
            error = ChemtebError
            why = f"{type(exc).__name__}: check the id and the revision, or retry"
        raise error(
            f"questions: cannot read {repo_id}@{revision} ({why} where the Hub can be reached), "
            "or pass a local folder or file of question files."
        ) from None
    for config, dataset in loaded:
        for split in dataset:
            for n, row in enumerate(dataset[split]):
                out.add(row, f"{config}/{split}[{n}]", config)


def load_questions(
    source: str | Path, *, revision: str | None = None, configs: list[str] | None = None
) -> QuestionSet:
    """Questions from a folder, a ``.json``/``.jsonl`` file, or a Hub dataset.

    Args:
        source: a folder of question files, a file, or ``hub:ORG/NAME`` (e.g.
            ``hub:jablonkagroup/ChemBench``).
        revision: for the Hub: the commit to read (required: ``"main"`` reads the latest).
        configs: for the Hub: only these topic configs.

    Returns:
        The ``QuestionSet``.
    """
    out = QuestionSet(source=str(source))
    text = str(source)
    if text.startswith("hub:"):
        repo_id = text[4:]
        if revision is None:
            raise ValueError(
                f"revision: reading {repo_id} needs a pinned commit (revision=...), or "
                "revision='main' for the latest, unpinned."
            )
        _load_hub(repo_id, revision, configs, out)
    else:
        path = Path(source)
        if path.is_dir():
            _load_folder(path, out)
        elif path.is_file():
            _load_file(path, out)
        else:
            raise ValueError(f"questions: {path} is neither a folder nor a file (or hub:ORG/NAME).")
    if not out.questions:
        # The caller never gets the QuestionSet to print the skips from: say the first here.
        first = f"; the first, {out.skipped[0][0]}: {out.skipped[0][1]}" if out.skipped else ""
        raise ValueError(
            f"questions: no question loaded from {source} ({len(out.skipped)} skipped{first})"
        )
    return out
