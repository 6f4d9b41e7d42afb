"""Convert the usual distribution of a restricted NER set into the files ``--data-path`` reads.

    python -m chemteb_eval.data.convert conll2003 eng.train DIR/train.tsv
    python -m chemteb_eval.data.convert conll2003 eng.testb DIR/test.tsv

CoNLL-2003's files (``eng.train``, ``eng.testa``, ``eng.testb``) hold one token per line as
``token POS chunk NER`` separated by spaces, IOB1 tags (an entity starts with ``I-`` unless it
directly follows one of the same type, which then starts with ``B-``), ``-DOCSTART-`` lines
between documents and blank lines between sentences. The output is ``token<TAB>IOB2-tag`` lines
with a blank line between sentences, documents markers dropped.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

__all__ = ["convert_conll2003", "iob1_to_iob2"]


def iob1_to_iob2(tags: Sequence[str]) -> list[str]:
    """IOB1 tags as IOB2: an ``I-T`` that does not continue a ``T`` entity starts one (``B-T``)."""
    out: list[str] = []
    previous = "O"
    for tag in tags:
        prefix, _, kind = tag.partition("-")
        if prefix == "I" and previous[2:] != kind:
            tag = f"B-{kind}"
        out.append(tag)
        previous = tag
    return out


def _sentences(path: Path) -> Iterator[tuple[list[str], list[str], int]]:
    """``(tokens, tags, first line number)`` per sentence of a CoNLL-2003 file."""
    tokens: list[str] = []
    tags: list[str] = []
    start = 1
    with path.open(encoding="utf-8") as handle:
        for n, line in enumerate(handle, start=1):
            parts = line.split()
            if not parts or parts[0] == "-DOCSTART-":
                if tokens:
                    yield tokens, tags, start
                tokens, tags = [], []
                continue
            if len(parts) < 2:
                raise ValueError(f"{path}: line {n} has no NER tag (expected 'token ... tag').")
            if not tokens:
                start = n
            tokens.append(parts[0])
            tags.append(parts[-1])
    if tokens:
        yield tokens, tags, start


def convert_conll2003(source: str | Path, target: str | Path) -> int:
    """Write ``target`` (token<TAB>IOB2 tag) from a CoNLL-2003 file; returns the sentence count.

    A tag that is neither ``O`` nor ``B-``/``I-`` with a type is an error naming the sentence's
    first line."""
    source, target = Path(source), Path(target)
    count = 0
    lines: list[str] = []
    for tokens, tags, start in _sentences(source):
        for tag in tags:
            prefix, dash, kind = tag.partition("-")
            if tag != "O" and (prefix not in ("B", "I") or not dash or not kind):
                raise ValueError(f"{source}: sentence at line {start}: tag {tag!r} is not IOB.")
        lines += [f"{t}\t{g}" for t, g in zip(tokens, iob1_to_iob2(tags), strict=True)]
        lines.append("")
        count += 1
    if not count:
        raise ValueError(f"{source}: no sentences.")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return count


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 3 or args[0] != "conll2003":
        print(
            "usage: python -m chemteb_eval.data.convert conll2003 SOURCE TARGET",
            file=sys.stderr,
        )
        return 2
    try:
        count = convert_conll2003(args[1], args[2])
    except (OSError, ValueError) as exc:
        print(f"convert: {exc}", file=sys.stderr)
        return 1
    print(f"{args[2]}: {count} sentences")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
