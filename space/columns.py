"""The leaderboard's columns, declared once: what each holds and how the page shows it.

Every table the Space shows is rendered from these records (``views.frame``, ``views.display``,
``views.datatypes``): a column's kind decides whether its cells are numbers (sorted as numbers,
missing ones shown as "—") or text kept as written ("1-3", "≈ #1", "0.61-0.66"); its format
decides the digits; ``bold_best`` whether the column's highest value is bold. A column that is
not declared here, nor named by its view as a score column (a task's ``Task [metric]``, a task's
metric keys: names known only at run time), is an error, not a guess.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from chemteb_eval.results.leaderboard import TYPE_LABELS

Kind = Literal["text", "number"]
# score: 4 decimals · int: no decimals (ranks, counts) · fact: 1 decimal, thousands separated ·
# share: a fraction as a percentage, 1 decimal · model: a model id, linked to its Hub page ·
# text: as written
Format = Literal["score", "int", "fact", "share", "model", "text"]

_FORMATTERS: dict[str, Callable[[Any], str]] = {
    "score": lambda v: f"{v:.4f}",
    "int": lambda v: f"{v:.0f}",
    "fact": lambda v: f"{v:,.1f}",
    "share": lambda v: f"{v:.1%}",
}


class UndeclaredColumn(KeyError):
    """A table holds a column that ``COLUMNS`` does not declare."""


@dataclass(frozen=True)
class Column:
    """One column: its header, its kind, how its values are shown."""

    name: str
    kind: Kind = "number"
    format: Format = "score"
    hidden: bool = False  # kept in the frame (and its CSV), not shown on the page
    bold_best: bool = False  # the highest value is bold (scores where higher is better)

    def __post_init__(self) -> None:
        numeric = self.format in _FORMATTERS
        if numeric != (self.kind == "number") or (self.bold_best and not numeric):
            raise ValueError(f"column {self.name!r}: kind {self.kind!r}, format {self.format!r}")

    def show(self, value: Any) -> str:
        """A number cell as the page shows it (``None``: "—")."""
        return "—" if value is None else _FORMATTERS[self.format](value)

    @property
    def datatype(self) -> str:
        """Gradio's column type: numbers sort as numbers; model cells render their links."""
        return "markdown" if self.format == "model" else "str" if self.kind == "text" else "number"


def score(name: str) -> Column:
    """A score: 4 decimals, the best bold."""
    return Column(name, bold_best=True)


def _text(name: str, **kw: Any) -> Column:
    return Column(name, "text", "text", **kw)


def _count(name: str) -> Column:
    return Column(name, format="int")


COLUMNS: dict[str, Column] = {
    c.name: c
    for c in (
        # the overall table (leaderboard._overall_row), per-type and per-task tables' first columns
        _count("Rank"),
        Column("Model", "text", "model"),
        score("RRF"),
        _count("Borda rank"),
        # how sure a rank / a score is (docs/uncertainty.md): intervals, written as text
        _text("Rank 95%"),
        _text("Tied with #1"),
        _text("95% CI"),
        _count("Borda"),
        score("Mean"),
        *(score(label) for label in TYPE_LABELS.values()),  # the per-type means
        _text("Coverage"),
        _text("Complete", hidden=True),
        Column("Params (M)", format="fact"),
        _count("Dim"),
        _count("Max tokens"),
        _text("Open"),
        _text("Family"),
        _text("Size"),
        # the largest share of one side's texts the model cut at its max tokens (docs/costs.md)
        _text("Cut"),
        # a task's table (leaderboard._task_rows) after its metric columns
        Column("Seconds", format="fact"),
        # the efficiency points (leaderboard._efficiency_entries): their CSV
        Column("Samples/s", format="fact"),
        _text("Hardware"),
        _count("Timed tasks"),
        _text("Pareto"),
        # the Frontier tab (results.frontier): quality against bytes per vector and speed
        _text("Precision"),
        _count("Bytes/vector"),
        Column("Index (MB)", format="fact"),
        Column("Texts/s", format="fact"),
        _text("Pareto (size)"),
        _text("Pareto (speed)"),
        # BM25 beside the models (results.lexical): the reference row's badge in the overall
        # table, each row's verdict against BM25 in the Versus BM25 tab
        _text("Reference"),
        _text("Task"),
        Column("Score"),
        Column("Versus", "text", "model"),  # a row's name, as the Model column shows one
        Column("Their score"),
        Column("Difference"),
        _text("Verdict"),
        # the Tokenization tab (results.diagnostics): how each model's tokenizer cuts the
        # benchmark's chemical strings, beside its mean (issue 48)
        _count("SMILES"),
        Column("Tokens/SMILES", format="fact"),
        Column("Unknown (SMILES)", format="share"),
        Column("Tokens/text", format="fact"),
        Column("Unknown (text)", format="share"),
        _text("Tokenizer"),
        # ChemTEB vs MTEB (analysis.DOMAIN_COLUMNS): means and ranks, no "best" among them
        Column("MTEB mean"),
        Column("ChemTEB mean"),
        Column("ChemTEB − MTEB"),
        _count("MTEB rank"),
        _count("ChemTEB rank"),
        _count("Ranks gained"),
    )
}


def declared(names: Iterable[str], *, scores: Collection[str] = ()) -> list[Column]:
    """The columns named ``names``: a score column for a name in ``scores`` (the view's
    run-time names), else ``COLUMNS``'s; any other name raises ``UndeclaredColumn``."""
    out = []
    for name in names:
        if name in scores:
            out.append(score(name))
        elif name in COLUMNS:
            out.append(COLUMNS[name])
        else:
            raise UndeclaredColumn(
                f"column {name!r} is not declared: add it to space/columns.py's COLUMNS "
                "(its kind and format), or name it as one of its view's score columns."
            )
    return out
