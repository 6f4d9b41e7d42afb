"""Merge results into a model card's ``model-index`` without touching anything else.

The front matter is found as the Hub finds it, our entry is written into it (comments, quoting
and every other byte of the card kept), and the card is read back as huggingface_hub reads cards
before anything is pushed. ``model_card`` builds the entries; this module only merges them.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from chemteb_eval.results.markup import md

if TYPE_CHECKING:
    from huggingface_hub import EvalResult

__all__ = ["CardMergeError", "card_with_results"]


# What a writer meant as front matter though the Hub's pattern (huggingface_hub's
# REGEX_YAML_BLOCK, "the exact same regex as in the Hub server") does not read it: an opening
# '---' with trailing blanks, no line between the markers, or YAML's document end marker '...'
# as the closing line. Such a card's licence and tags are invisible on the Hub; we rewrite its
# two marker lines as '---' so that they, and our results, are read.
_LOOSE_FRONT = re.compile(
    r"\A(\s*)---[ \t]*(\r\n|\r|\n)(?:(.*?)(?:\r\n|\r|\n))??(?:---|\.\.\.)[ \t]*(?:\r\n|\r|\n|\Z)",
    re.S,
)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_DOCUMENT_END = re.compile(r"^\.\.\.[ \t]*\r?$", re.M)


class CardMergeError(ValueError):
    """The card's metadata cannot take our results without rewriting what is not ours."""


def _metric_key(result: Mapping[str, Any]) -> tuple[Any, ...]:
    # Same task type, dataset, subset and split: one result block; a metric within it by type.
    task, data = result.get("task"), result.get("dataset")
    task = task if isinstance(task, Mapping) else {}
    data = data if isinstance(data, Mapping) else {}
    return (task.get("type"), data.get("type"), data.get("config"), data.get("split"))


def _merge_results(old: list[Any], new: list[dict[str, Any]]) -> list[Any]:
    """``old`` results with ``new`` ones merged in: a metric of the same block and type gets the
    new value (its other keys stay); new blocks and metrics are appended; nothing is removed."""
    merged = copy.deepcopy(old)
    blocks = {_metric_key(r): r for r in merged if isinstance(r, dict)}
    for block in new:
        target = blocks.get(_metric_key(block))
        if target is None:
            merged.append(copy.deepcopy(block))
            blocks[_metric_key(block)] = merged[-1]
            continue
        if not isinstance(target.get("dataset"), dict) or not isinstance(
            target.get("metrics"), list
        ):
            raise CardMergeError("a model-index result block has no dataset or metrics list")
        if block["dataset"].get("revision") is not None:
            target["dataset"]["revision"] = block["dataset"]["revision"]
        metrics = {m.get("type"): m for m in target["metrics"] if isinstance(m, dict)}
        for metric in block["metrics"]:
            if metric["type"] in metrics:
                metrics[metric["type"]]["value"] = metric["value"]
            else:
                target["metrics"].append(dict(metric))
    return merged


@dataclass(frozen=True)
class _Card:
    """A card cut where the Hub cuts it: ``head`` (a BOM, blank lines, the opening ``---``
    line), ``front`` (the YAML we merge into; empty or ending with a line break) and ``tail``
    (from the closing marker on: the body). ``normalized``: the markers were rewritten."""

    head: str
    front: str
    tail: str
    normalized: bool = False

    @property
    def text(self) -> str:
        return self.head + self.front + self.tail


def _split_card(text: str) -> _Card:
    """The card cut as the Hub reads it (a card without front matter gets an empty one)."""
    from huggingface_hub.repocard import REGEX_YAML_BLOCK

    # huggingface_hub reads cards as utf-8-sig (the Hub server's JavaScript \s takes a BOM too).
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    body = text[len(bom) :]
    hub = REGEX_YAML_BLOCK.search(body)
    if hub is not None:
        return _hub_block(bom, body, hub)
    loose = _LOOSE_FRONT.match(body)
    if loose is not None:
        nl = loose.group(2)
        front = "" if loose.group(3) is None else loose.group(3) + nl
        tail = "---" + nl + body[loose.end() :]
        return _Card(bom + loose.group(1) + "---" + nl, front, tail, normalized=True)
    return _Card(bom + "---\n", "", "---\n" + body)


def _hub_block(bom: str, body: str, match: re.Match[str]) -> _Card:
    """The card around the Hub's match; a document end marker ``...`` inside the block ends
    the YAML we write into (what follows it up to ``---`` may only be comments, else the Hub
    cannot read the block at all)."""
    # The Hub's pattern starts its closing group with the line break that ends the YAML.
    found = _LINE_BREAK.match(match.group(3))
    nl = found.group() if found is not None else ""
    front = match.group(2) + nl
    tail = body[match.start(3) + len(nl) :]
    end = _DOCUMENT_END.search(front)
    if end is not None:
        after = front[end.end() :].splitlines()
        if any(line.strip() and not line.lstrip().startswith("#") for line in after):
            line = body[: match.start(2) + end.start()].count("\n") + 1
            raise CardMergeError(
                f"the card's metadata goes on after YAML's end marker '...' (line {line}), so "
                "the Hub cannot read it; end the metadata with '---' there, then retry."
            )
        front, tail = front[: end.start()], front[end.start() :] + tail
    return _Card(bom + body[: match.start(2)], front, tail)


def _check_lossless(yaml_text: str, start: int, end: int) -> None:
    """Raise ``CardMergeError`` if re-writing ``yaml_text[start:end]`` from its data would lose
    something: a comment, an anchor or alias, or a plain value whose text would change
    (``0755`` is read as 493, ``no`` as false, by the YAML 1.1 the Hub's tools use)."""
    import yaml

    scalars: list[tuple[int, int]] = []
    for token in yaml.scan(yaml_text, Loader=yaml.SafeLoader):
        if token.end_mark.index <= start or token.start_mark.index >= end:
            continue
        if isinstance(token, (yaml.AnchorToken, yaml.AliasToken, yaml.TagToken)):
            raise CardMergeError("our model-index entry uses YAML anchors, aliases or tags")
        if isinstance(token, yaml.ScalarToken):
            scalars.append((token.start_mark.index, token.end_mark.index))
            if token.plain and not _reads_alike(token.value):
                raise CardMergeError(
                    f"the value {token.value!r} in our model-index entry would be rewritten as "
                    f"{_dump_scalar(yaml.safe_load(token.value))!r}"
                )
    # A comment: '#' at a line start or after white space, outside every scalar.
    for i, char in enumerate(yaml_text[start:end], start):
        if (
            char == "#"
            and (i == 0 or yaml_text[i - 1] in " \t\n")
            and not any(a <= i < b for a, b in scalars)
        ):
            raise CardMergeError("our model-index entry holds YAML comments")


# Plain scalars that YAML 1.1 (PyYAML, which we write with) and YAML 1.2 (the Hub's reader) read
# as the same value, so re-writing them changes no meaning: decimal numbers, true/false, null.
_PORTABLE_NUMBER = re.compile(r"[-+]?(0|[1-9][0-9]*)(\.[0-9]*)?([eE][-+]?[0-9]+)?|[-+]?\.[0-9]+")
_PORTABLE_WORDS = {"true", "false", "True", "False", "TRUE", "FALSE", "null", "Null", "NULL", "~"}


def _reads_alike(text: str) -> bool:
    import yaml

    value = yaml.safe_load(text)
    if isinstance(value, str):
        return True  # a string stays that string (perhaps quoted when written back)
    if isinstance(value, bool) or value is None:
        return text in _PORTABLE_WORDS
    return isinstance(value, (int, float)) and _PORTABLE_NUMBER.fullmatch(text) is not None


def _dump_scalar(value: Any) -> str:
    import yaml

    return str(yaml.safe_dump(value, default_flow_style=True)).removesuffix("\n...\n").strip()


def _dump_block(data: Any, indent: int) -> str:
    import yaml

    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False)
    pad = " " * indent
    return "".join(pad + line if line.strip() else line for line in text.splitlines(True))


def card_with_results(
    old_card: str | None,
    model_name: str,
    new: list[EvalResult],
    *,
    aliases: Iterable[str] = (),
) -> str | None:
    """The card text with ``new`` merged into its ``model-index``, or ``None`` when the card
    already holds exactly these values (nothing to commit).

    The front matter is found as the Hub finds it (huggingface_hub's ``REGEX_YAML_BLOCK``);
    one it would not read (closed by ``...``, an opening ``---`` with trailing blanks) gets its
    two marker lines rewritten as ``---``. Only our ``model-index`` entry is written: the one
    named ``model_name`` (or one of ``aliases``, e.g. the repo id), or a new entry. Every other
    byte of the card stays as it was: other entries, other metadata (comments, quoting,
    ``0755``, ``no``), the text, a BOM. Within our entry, metrics of other tools and unknown
    keys are kept; a metric we computed again gets the new value. The result is read back the
    way huggingface_hub reads cards and must equal the old metadata with our entry merged in.

    Raises:
        CardMergeError: (a ``ValueError``) the front matter is not valid YAML, not a mapping,
            repeats a key, its ``model-index`` is not a list, several entries are ours, or
            rewriting ours would lose comments or change how values are written: merge by hand.
    """
    from huggingface_hub.repocard_data import eval_results_to_model_index

    ours = eval_results_to_model_index(model_name, new)[0]["results"] if new else []
    new_entry = {"name": model_name, "results": _merge_results([], ours)}
    if old_card is None:
        # the name is recorded text (model_meta.json): escaped as the Space escapes it
        heading = f"# {md(model_name)}\n"
        fresh = "---\nmodel-index:\n" + _dump_block([new_entry], 0) + f"---\n\n{heading}"
        _check_reads_back(fresh, {"model-index": [new_entry]})
        return fresh
    card = _split_card(old_card)
    nodes, data = _parse_front(card.front, lines_before=card.head.count("\n"))
    merged = _merged_front(card.front, nodes, data, model_name, new_entry, {model_name, *aliases})
    if merged is None and not card.normalized:
        return None
    front, index = merged if merged is not None else (card.front, data.get("model-index"))
    text = card.head + front + card.tail
    _check_reads_back(text, {**data, "model-index": index})
    return text


def _merged_front(
    front: str,
    nodes: Any,
    data: dict[str, Any],
    model_name: str,
    new_entry: dict[str, Any],
    names: set[str],
) -> tuple[str, list[Any]] | None:
    """``front`` with our entry merged and the ``model-index`` it then holds, or ``None`` when
    our entry already holds these values."""
    index = data.get("model-index")
    if index is None:
        return _with_index(front, nodes, "model-index" in data, new_entry), [new_entry]
    if not isinstance(index, list):
        raise CardMergeError("the card's model-index is not a list; fix it on the Hub first.")
    mine = [i for i, e in enumerate(index) if isinstance(e, dict) and str(e.get("name")) in names]
    if len(mine) > 1:
        raise CardMergeError(
            f"the card has {len(mine)} model-index entries named {model_name}; merge them by "
            "hand first."
        )
    seq = _top_level_value_node(nodes, "model-index")
    if seq.flow_style or any(getattr(item, "flow_style", False) for item in seq.value):
        raise CardMergeError(
            "the card's model-index is written in flow style ([...] / {...}); merge by hand."
        )
    if not mine:
        return _append_entry(front, seq.value[-1], new_entry), [*index, new_entry]
    entry = index[mine[0]]
    results = entry.get("results", [])
    if not isinstance(results, list):
        raise CardMergeError(f"model-index entry {model_name}: results is not a list.")
    merged = _merge_results(results, new_entry["results"])
    if merged == results:
        return None
    ours = {**entry, "results": merged}
    index = [*index[: mine[0]], ours, *index[mine[0] + 1 :]]
    return _replace_entry(front, seq.value[mine[0]], ours), index


def _hub_metadata(card: str) -> Any:
    """The card's metadata as huggingface_hub reads it (``metadata_load``, ``ModelCard``: the
    Hub's pattern, YAML's safe loader, a BOM dropped); ``None`` when it finds no block."""
    import yaml
    from huggingface_hub.repocard import REGEX_YAML_BLOCK

    match = REGEX_YAML_BLOCK.search(card.removeprefix("\ufeff"))
    if match is None:
        return None
    return yaml.safe_load(match.group(2))


def _check_reads_back(card: str, expected: dict[str, Any]) -> None:
    """Raise ``CardMergeError`` unless the Hub would read ``card``'s metadata as ``expected``
    (the old metadata, every key of it, with our entry merged): never commit a card the Hub
    reads differently from what we meant."""
    import yaml

    try:
        read = _hub_metadata(card)
    except (yaml.YAMLError, RecursionError):
        read = None

    def canonical(value: Any) -> str:
        # JSON text compares NaN equal to itself and ignores key order, as meaning does.
        return json.dumps(value, sort_keys=True, default=str)

    if not isinstance(read, dict) or canonical(read) != canonical(expected):
        raise CardMergeError(
            "the merged card would not read back on the Hub as its metadata plus our results; "
            "merge the new scores by hand (see --dry-run)."
        )


def _parse_front(front: str, lines_before: int = 1) -> tuple[Any, dict[str, Any]]:
    """The front matter's node tree (with positions) and its data, or ``CardMergeError``
    (``lines_before``: the card's lines above ``front``, for line numbers)."""
    import yaml

    try:
        nodes = yaml.compose(front, Loader=yaml.SafeLoader) if front.strip() else None
        data = yaml.safe_load(front) if front.strip() else {}
    except (yaml.YAMLError, RecursionError) as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" (line {where.line + 1 + lines_before})" if where is not None else ""
        raise CardMergeError(
            f"the card's metadata is not valid YAML{line}: "
            f"{getattr(exc, 'problem', None) or exc}; fix it on the Hub first."
        ) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise CardMergeError("the card's metadata is not a YAML mapping; fix it on the Hub first.")
    twice = _repeated_key(nodes)
    if twice is not None:
        key, first, second = twice
        raise CardMergeError(
            f"the card's metadata has the key {key!r} twice (lines {first + 1 + lines_before} "
            f"and {second + 1 + lines_before}); YAML readers keep only one of them (or refuse "
            "the card): delete the other on the Hub, then retry."
        )
    return nodes, data


def _repeated_key(root: Any) -> tuple[str, int, int] | None:
    """The first key some mapping of the node tree repeats, with both (0-based) lines: a safe
    loader keeps the last silently, so merging into one of them would lose the other."""
    import yaml

    stack, seen_nodes = [root], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen_nodes:  # aliases share nodes
            continue
        seen_nodes.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            lines: dict[tuple[str, str], int] = {}
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
                    if (key.tag, key.value) in lines:
                        return key.value, lines[key.tag, key.value], key.start_mark.line
                    lines[key.tag, key.value] = key.start_mark.line
                stack.append(value)
    return None


def _with_index(front: str, nodes: Any, empty_key: bool, entry: dict[str, Any]) -> str:
    """``front`` with a new ``model-index`` holding ``entry``: appended at the end, or in place
    of a ``model-index:`` line that has no value."""
    block = "model-index:\n" + _dump_block([entry], 0)
    if empty_key:
        start, end = _top_level_value_span(nodes, "model-index")
        line_start = front.rfind("\n", 0, start) + 1
        return front[:line_start] + block + front[end:].lstrip(" \t")
    sep = "" if not front or front.endswith("\n") else "\n"
    return front + sep + block


def _append_entry(front: str, last: Any, entry: dict[str, Any]) -> str:
    """``front`` with ``entry`` added after the last ``model-index`` item, at its indentation."""
    dash = front.rfind("-", 0, last.start_mark.index)
    column = dash - (front.rfind("\n", 0, dash) + 1)
    end = _line_end(front, last.end_mark.index)
    sep = "" if end == 0 or front[end - 1] == "\n" else "\n"
    return front[:end] + sep + _dump_block([entry], column) + front[end:]


def _replace_entry(front: str, node: Any, entry: dict[str, Any]) -> str:
    """``front`` with our entry's text (``node``'s span) written anew from ``entry``, if that
    loses nothing (see ``_check_lossless``)."""
    start, end = node.start_mark.index, _line_end(front, node.end_mark.index)
    try:
        _check_lossless(front, start, end)
    except CardMergeError as exc:
        raise CardMergeError(f"{exc}; merge the new scores by hand (see --dry-run).") from None
    column = node.start_mark.column
    text = _dump_block(entry, column)[column:]  # the first line continues after "- "
    return front[:start] + text + front[end:]


def _line_end(text: str, index: int) -> int:
    """``index`` moved back over trailing blank space to just after the last line break."""
    while index > 0 and text[index - 1] in " \t\n\r":
        index -= 1
    newline = text.find("\n", index)
    return len(text) if newline < 0 else newline + 1


def _top_level_value_node(nodes: Any, key: str) -> Any:
    for k, v in nodes.value:
        if k.value == key:
            return v
    raise KeyError(key)


def _top_level_value_span(nodes: Any, key: str) -> tuple[int, int]:
    for k, v in nodes.value:
        if k.value == key:
            return k.start_mark.index, v.end_mark.index
    raise KeyError(key)
