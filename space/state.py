"""The Space's state: what the page shows, computed once at start (``build_state``), the
filters every view takes (one ``Filters`` record), the URL parameters (``Param``) and the
browser code that keeps the URL in step with the page.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from views import md, md_code

from chemteb_eval.results.board import DEFAULT_BENCHMARK, choose_benchmark
from chemteb_eval.results.inputs import read_model_tables
from chemteb_eval.results.leaderboard import (
    SIZE_BUCKETS,
    Leaderboard,
    build_leaderboard,
    filter_rows,
)
from chemteb_eval.results.model_folder import ScannedModel
from chemteb_eval.results.mteb_scores import MtebScores, resolve_mteb_scores
from chemteb_eval.results.scan import catalog_of, scan_results
from chemteb_eval.tasks import get_benchmark

SHOWN_BENCHMARKS = ("ChemTEB", "ChemTEB(v1.1)", "ChemTEB(paper)")
SHOWN_WITH_RESULTS = ("PipChem", "SciEmbed", "SciText")
OPENNESS = ("all", "open", "proprietary")


@dataclass
class AppState:
    """What the page shows, computed once: one Leaderboard per benchmark, the families."""

    boards: dict[str, Leaderboard]
    default_benchmark: str
    families: list[str]
    source: str = ""
    # why the page opens on default_benchmark when no one named it: the results cover it best
    opened_because: str = ""
    mteb: MtebScores | None = None  # general-domain scores for the "ChemTEB vs MTEB" tab
    mteb_source: str = ""
    min_mteb_coverage: float = 1.0


def build_state(
    results: Sequence[str | Path],
    *,
    model_table: str | Path | None = None,
    default_benchmark: str | None = None,
    source: str = "",
    mteb_scores: str | Path | None = None,
    mteb_results: Sequence[str | Path] = (),
    min_mteb_coverage: float = 1.0,
) -> AppState:
    """Read every result folder once and build each benchmark's leaderboard.

    Args:
        results: result folders.
        model_table: a CSV of model facts (``paper_models.csv``'s columns); default a
            ``paper_models.csv`` beside a results folder.
        default_benchmark: the benchmark shown first; default the one the results cover best
            (``choose_benchmark``: a folder of ``chemteb run``'s PipChem results opens on
            PipChem), with a line saying so.
        source: where the results came from, for the page header.
        mteb_scores: MTEB(eng, v1) scores (``mteb_eng_v1_scores.csv``'s columns); default the
            file of that name in or beside a results folder, if there is one.
        mteb_results: MTEB results folders (MTEB's layout) adding models to those scores.
        min_mteb_coverage: share of a type's MTEB tasks a model needs to be plotted.
    """
    roots = [Path(r) for r in results]
    scanned: list[ScannedModel] = scan_results(roots, model_table=model_table)
    if not 0 < min_mteb_coverage <= 1:
        raise ValueError(f"min_mteb_coverage: must be in (0, 1], got {min_mteb_coverage}.")
    table, mteb, mteb_source = _side_files(roots, model_table, mteb_scores, mteb_results)
    boards = {
        name: build_leaderboard(scanned, get_benchmark(name), model_table=table)
        for name in SHOWN_BENCHMARKS
    }
    # PipChem (what `chemteb run` scores by default) and the scientific-text benchmarks appear
    # only when someone has results on them; a user's own tasks (task files) as Custom, apart.
    catalog = catalog_of(scanned)  # the registered tasks and those these results recorded
    custom = catalog.custom_benchmark()
    for bench in [*map(get_benchmark, SHOWN_WITH_RESULTS), *([custom] if custom else [])]:
        board = build_leaderboard(scanned, bench, model_table=table)
        if board.overall:
            boards[bench.name] = board
    opened_because = ""
    if default_benchmark is None:
        chosen, why = choose_benchmark(scanned, catalog)
        default_benchmark = chosen.name if chosen.name in boards else DEFAULT_BENCHMARK
        opened_because = why if chosen.name in boards else ""
    if default_benchmark not in boards:
        raise ValueError(f"default_benchmark: {default_benchmark!r}; use one of {list(boards)}.")
    return AppState(
        boards=boards,
        default_benchmark=default_benchmark,
        families=sorted({f.family for b in boards.values() for f in b.facts.values()}),
        source=source,
        opened_because=opened_because,
        mteb=mteb,
        mteb_source=mteb_source,
        min_mteb_coverage=min_mteb_coverage,
    )


def _side_files(
    roots: Sequence[Path],
    model_table: str | Path | None,
    mteb_scores: str | Path | None,
    mteb_results: Sequence[str | Path],
) -> tuple[dict[str, dict[str, str]], MtebScores | None, str]:
    """The files read beside the results, by the rule the CLI uses too
    (``chemteb_eval.results.inputs``): the model table and the MTEB scores (the ones named, else
    those in or beside a results folder), and a line on where the scores came from."""
    table = read_model_tables(roots, model_table)
    found = resolve_mteb_scores(
        roots,
        mteb_scores,
        mteb_results,
        scores_arg="mteb_scores (--mteb-scores)",
        folders_arg="mteb_results (--mteb-results)",
    )
    if found.scores is None:
        if not found.problem:
            return table, None, ""
        # found beside the results: the page starts without the comparison and says why
        print(f"[skipped] {found.problem}", file=sys.stderr)
        return table, None, f"the MTEB scores beside the results were not read: {md(found.problem)}"
    mteb = found.scores
    for line in mteb.skipped:
        print(f"[skipped] {line}", file=sys.stderr)
    folders = found.folders
    extra = f" and {', '.join(md_code(f) for f in folders)}" if folders else ""
    left_out = f"; {len(mteb.skipped)} file(s) left out" if mteb.skipped else ""
    assert found.path is not None
    return table, mteb, f"{md_code(found.path.name)} ({len(mteb.scores)} models){extra}{left_out}"


# ---------------------------------------------------------------------------------------------
# URL state: one Param per query parameter; the filters every view takes.


Choices = Collection[str] | Callable[[AppState], Collection[str]] | None


@dataclass(frozen=True)
class Param:
    """A URL query parameter and the control it sets: a value it does not know (not among
    ``choices``, or absent) falls back to ``default``; ``multi``: a comma-separated list, each
    item kept when among ``choices``. ``default`` and ``choices`` may depend on the state."""

    name: str
    default: Any = ""
    choices: Choices = None
    multi: bool = False

    def parse(self, state: AppState, raw: str | None) -> Any:
        choices = self.choices(state) if callable(self.choices) else self.choices
        if self.multi:
            items = [v for v in (raw or "").split(",") if v]
            return [v for v in items if choices is None or v in choices]
        if raw is None or (choices is not None and raw not in choices):
            return self.default(state) if callable(self.default) else self.default
        return raw


# The filter row's controls, in the order every handler takes their values first.
FILTERS = (
    Param("benchmark", lambda s: s.default_benchmark, lambda s: list(s.boards)),
    Param("open", "all", OPENNESS),
    Param("size", (), SIZE_BUCKETS, multi=True),
    Param("family", (), lambda s: s.families, multi=True),
    Param("q", ""),
)


@dataclass(frozen=True)
class Filters:
    """The filter row's values, built once per event (``Filters.of``) and handed to each view."""

    benchmark: str
    openness: str = "all"
    sizes: tuple[str, ...] = ()
    families: tuple[str, ...] = ()
    query: str = ""

    @classmethod
    def of(
        cls,
        benchmark: str,
        openness: str,
        sizes: Sequence[str] | None,
        families: Sequence[str] | None,
        query: str | None,
    ) -> Filters:
        """From the controls' values (in ``FILTERS`` order); unknown values mean no filter."""
        return cls(
            benchmark=benchmark,
            openness=openness if openness in OPENNESS else "all",
            sizes=tuple(s for s in sizes or () if s in SIZE_BUCKETS),
            families=tuple(families or ()),
            query=query or "",
        )

    def board(self, state: AppState) -> Leaderboard:
        """The chosen benchmark's leaderboard (an unknown name: the default one)."""
        return state.boards.get(self.benchmark) or state.boards[state.default_benchmark]

    def rows(
        self, board: Leaderboard, rows: Sequence[Mapping[str, Any]]
    ) -> list[Mapping[str, Any]]:
        """``rows`` whose model passes the filters."""
        return filter_rows(
            rows,
            board.facts,
            openness=self.openness,
            sizes=self.sizes,
            families=self.families,
            query=self.query,
        )

    def names(self, board: Leaderboard) -> set[str]:
        """The models the filters keep."""
        return {str(r["Model"]) for r in self.rows(board, board.overall)}


def url_js(names: Sequence[str]) -> str:
    """Browser code run before a handler: mirror the inputs into the URL, pass them on."""
    return (
        "(...args) => { const names = " + json.dumps(list(names)) + ";"
        " const u = new URL(window.location.href);"
        " names.forEach((n, i) => { const v = args[i];"
        " const s = Array.isArray(v) ? v.join(',') : (v === null || v === undefined ? '' : String(v));"
        " if (s === '' || (n === 'open' && s === 'all')) u.searchParams.delete(n); else u.searchParams.set(n, s); });"
        " window.history.replaceState(null, '', u.toString()); return args; }"
    )


def tab_js(tab: str, first: str) -> str:
    """Browser code run when a tab is opened: name it in the URL (the first tab: no name)."""
    return (
        "() => { const u = new URL(window.location.href);"
        f" if ('{tab}' === '{first}') u.searchParams.delete('tab'); else u.searchParams.set('tab', '{tab}');"
        " window.history.replaceState(null, '', u.toString()); }"
    )


# The URL as the page was opened, kept before any event can rewrite it (launch(head=...)).
# And the tables' headers wrap between words, never inside one ("Classif / ication"): a column
# is at least as wide as its longest header word.
HEAD = (
    "<script>window.chemtebInitialURL = window.location.href;</script>"
    "<style>.gradio-container th span { word-break: normal !important;"
    " overflow-wrap: normal !important; hyphens: none; }</style>"
)
OPEN_TAB_JS = (
    "() => { const t = new URL(window.chemtebInitialURL || window.location.href).searchParams.get('tab');"
    " const b = t && document.getElementById('tab-' + t + '-button'); if (b) b.click(); }"
)
