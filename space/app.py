"""The ChemTEB leaderboard: a Gradio app over result folders (ours and MTEB's layout).

Locally:   python space/app.py --results results/ [more folders] [--models models.csv] [--port 7860]
On the Hub: set CHEMTEB_RESULTS_REPO (a dataset repo of result folders) and
            CHEMTEB_RESULTS_REVISION (the commit to show); the app downloads that snapshot.

Every table and figure input is computed once at start (``build_state``); the event handlers only
filter, style and plot, so each answers in well under half a second (benchmarks/bench_space.py).
The page state (benchmark, filters, tab, task, chosen models) lives in the URL's query string.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from chemteb_eval.errors import MissingExtraError, require_extra

try:  # one line naming the extra, not a traceback from `import gradio`
    require_extra("space", "gradio", "plotly", "pandas", what="the leaderboard Space")
except MissingExtraError as exc:
    raise SystemExit(f"space/app.py: {exc}") from None

import gradio as gr
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))  # views.py, when run as a script

from analysis import (
    DOMAIN_LABELS,
    MATRICES,
    METHODS,
    correlation_view,
    domain_view,
    names_of,
)
from views import (
    datatypes,
    display,
    distribution_figure,
    efficiency_figure,
    filtered,
    frame,
    md,
    md_code,
    radar_figure,
    write_body,
    write_csv,
)

from chemteb_eval.results.domains import MtebScores, read_mteb_csv, read_mteb_folder
from chemteb_eval.results.leaderboard import (
    SIZE_BUCKETS,
    TYPE_LABELS,
    Leaderboard,
    build_leaderboard,
    read_model_table,
    task_size,
)
from chemteb_eval.results.ranking import (
    DEFAULT_BENCHMARK,
    ScannedModel,
    choose_benchmark,
    scan_results,
)
from chemteb_eval.tasks import get_benchmark, main_score
from chemteb_eval.tasks.kinds import CHEMTEB_TYPES as TASK_TYPES

SHOWN_BENCHMARKS = ("ChemTEB", "ChemTEB(v1.1)", "ChemTEB(paper)")
SHOWN_WITH_RESULTS = ("PipChem", "SciEmbed", "SciText")
OPENNESS = ("all", "open", "proprietary")
TABS = (
    "overall",
    *(t.lower() for t in TASK_TYPES),
    "task",
    "efficiency",
    "distribution",
    "radar",
    "domains",
    "correlations",
    "about",
)
# URL parameter -> control, in the order the handlers take them.
PARAMS = (
    "benchmark",
    "open",
    "size",
    "family",
    "q",
    "task",
    "type",
    "models",
    "vs_type",
    "matrix",
    "method",
)
# The MTEB(eng, v1) scores file looked for in (and beside) each results folder, as
# paper_models.csv is: ../shared/reference/ has one, and a results repo can hold one at its root.
MTEB_SCORES_FILE = "mteb_eng_v1_scores.csv"


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
    table: dict[str, dict[str, str]] = {}
    tables = [Path(model_table)] if model_table else [r.parent / "paper_models.csv" for r in roots]
    for path in tables:
        if path.is_file():
            try:
                table.update(read_model_table(path))
            except ValueError:
                if model_table:
                    raise
                # found beside the results: scan_results already listed it as a notice
    names = list(SHOWN_BENCHMARKS)
    boards = {
        name: build_leaderboard(scanned, get_benchmark(name), model_table=table) for name in names
    }
    # PipChem (what `chemteb run` scores by default) and the scientific-text benchmarks appear
    # only when someone has results on them.
    for name in SHOWN_WITH_RESULTS:
        board = build_leaderboard(scanned, get_benchmark(name), model_table=table)
        if board.overall:
            boards[name] = board
    opened_because = ""
    if default_benchmark is None:
        chosen, why = choose_benchmark(scanned)
        default_benchmark = chosen.name if chosen.name in boards else DEFAULT_BENCHMARK
        opened_because = why if chosen.name in boards else ""
    if default_benchmark not in boards:
        raise ValueError(f"default_benchmark: {default_benchmark!r}; use one of {list(boards)}.")
    families = sorted({f.family for b in boards.values() for f in b.facts.values()})
    if not 0 < min_mteb_coverage <= 1:
        raise ValueError(f"min_mteb_coverage: must be in (0, 1], got {min_mteb_coverage}.")
    mteb, mteb_source = _mteb_scores(roots, mteb_scores, mteb_results)
    return AppState(
        boards=boards,
        default_benchmark=default_benchmark,
        families=families,
        source=source,
        opened_because=opened_because,
        mteb=mteb,
        mteb_source=mteb_source,
        min_mteb_coverage=min_mteb_coverage,
    )


def _mteb_scores(
    roots: Sequence[Path], path: str | Path | None, folders: Sequence[str | Path]
) -> tuple[MtebScores | None, str]:
    """The MTEB scores and where they came from (``None`` when there are none)."""
    if path is not None and not Path(path).is_file():
        raise ValueError(
            f"mteb_scores (--mteb-scores): {path} is not a file; pass {MTEB_SCORES_FILE}'s path."
        )
    candidates = (
        [Path(path)] if path else [p / MTEB_SCORES_FILE for r in roots for p in (r, r.parent)]
    )
    found = next((c for c in candidates if c.is_file()), None)
    if found is None:
        if folders:
            raise ValueError(
                "mteb_results (--mteb-results): needs the MTEB(eng, v1) scores too (their task "
                f"list and types); pass mteb_scores (--mteb-scores {MTEB_SCORES_FILE})."
            )
        return None, ""
    for folder in folders:
        if not Path(folder).is_dir():
            raise ValueError(f"mteb_results (--mteb-results): {folder} is not a folder.")
    try:
        mteb = read_mteb_csv(found)
    except (OSError, ValueError) as exc:
        if path is not None:  # asked for by name: say so before the page starts
            raise ValueError(f"mteb_scores (--mteb-scores): {exc}") from None
        # found beside the results: the page starts without the comparison and says why
        print(f"[skipped] {exc}", file=sys.stderr)
        return None, f"the MTEB scores beside the results were not read: {md(exc)}"
    for folder in folders:
        mteb = read_mteb_folder(folder, mteb)
    for line in mteb.skipped:
        print(f"[skipped] {line}", file=sys.stderr)
    extra = f" and {', '.join(md_code(f) for f in folders)}" if folders else ""
    left_out = f"; {len(mteb.skipped)} file(s) left out" if mteb.skipped else ""
    return mteb, f"{md_code(found.name)} ({len(mteb.scores)} models){extra}{left_out}"


# ---------------------------------------------------------------------------------------------
# Handlers: pure functions of the controls' values (tested without a browser).


def _filters(
    openness: str, sizes: Sequence[str], families: Sequence[str], query: str
) -> dict[str, Any]:
    return {
        "openness": openness if openness in OPENNESS else "all",
        "sizes": [s for s in sizes or () if s in SIZE_BUCKETS],
        "families": list(families or ()),
        "query": query or "",
    }


def _board(state: AppState, bench: str) -> Leaderboard:
    """The chosen benchmark's leaderboard (an unknown name: the default one)."""
    return state.boards.get(bench) or state.boards[state.default_benchmark]


def _shown(
    board: Leaderboard, openness: str, sizes: Sequence[str], families: Sequence[str], query: str
) -> set[str]:
    """The models the filters keep."""
    return names_of(filtered(board, board.overall, _filters(openness, sizes, families, query)))


def _table(df: pd.DataFrame) -> Any:
    # An update dict, not a new component: Gradio then styles the table once, not twice.
    return gr.update(value=display(df), datatype=datatypes(df))


def _notice(state: AppState, board: Leaderboard) -> str:
    skipped = sorted(set(board.notices))
    lines = []
    if skipped:
        shown = "\n".join(f"- {md_code(s)}" for s in skipped[:200])
        more = f"\n- … and {len(skipped) - 200} more" if len(skipped) > 200 else ""
        lines.append(
            f"⚠️ **{len(skipped)} result file(s) skipped** (malformed, or without the "
            f"benchmark's main score):\n\n{shown}{more}"
        )
    lines += [f"Note: {md(note)}" for note in board.notes]
    if board.revision_note:
        lines.append(f"Note: {board.revision_note}")
    return "\n\n".join(lines)


def _summary(board: Leaderboard, shown: Sequence[Mapping[str, Any]]) -> str:
    if not board.overall:
        return (
            f"**{board.benchmark.name}**: no model has results on its {len(board.tasks)} tasks "
            "yet. The About tab says how to submit some."
        )
    complete = sum(1 for r in shown if r["Complete"])
    agg = board.benchmark.aggregation
    order = (
        f"ranked by Reciprocal Rank Fusion over task types (k = {agg.rrf_k or 10})"
        if agg.kind == "rrf"
        else "ranked by the mean over tasks"
    )
    return (
        f"**{board.benchmark.name}** — {len(board.tasks)} tasks, {order}. Showing "
        f"{len(shown)} of {len(board.overall)} models ({complete} complete; models marked "
        "⚠ lack tasks and are listed after the ranked ones)."
    )


def view_tables(
    state: AppState,
    bench: str,
    openness: str,
    sizes: Sequence[str],
    families: Sequence[str],
    query: str,
) -> list[Any]:
    """The overall table, the five per-type tables, their CSVs, the summary and the notice."""
    board = _board(state, bench)
    filters = _filters(openness, sizes, families, query)
    overall_rows = filtered(board, board.overall, filters)
    overall = frame(overall_rows, columns=list(board.overall[0]) if board.overall else None)
    summary = _summary(board, overall_rows)
    if state.opened_because and board.benchmark.name == state.default_benchmark:
        summary += (
            f"\n\nOpened on **{md(board.benchmark.name)}**, {md(state.opened_because)}; "
            "choose another under *Benchmark*."
        )
    out: list[Any] = [summary, _notice(state, board), _table(overall)]
    out.append(
        write_csv(
            overall.drop(columns=["Complete"], errors="ignore"), f"{board.benchmark.name}-overall"
        )
    )
    for t in TASK_TYPES:
        rows = filtered(board, board.by_type.get(t, []), filters)
        columns = list(board.by_type[t][0]) if board.by_type.get(t) else ["Rank", "Model", "Mean"]
        df = frame(rows, columns=columns)
        out.append(_table(df))
        out.append(write_csv(df, f"{board.benchmark.name}-{t}"))
    return out


def view_task(
    state: AppState,
    bench: str,
    openness: str,
    sizes: Sequence[str],
    families: Sequence[str],
    query: str,
    task: str,
) -> list[Any]:
    """The task picker (choices follow the benchmark), the task's card and its table."""
    board = _board(state, bench)
    names = [t.name for t in board.tasks]
    name = task if task in names else names[0]
    record = next(t for t in board.tasks if t.name == name)
    size = task_size(record)
    info = (
        f"**{record.name}** · {record.type} · scored by `{main_score(board.benchmark, record)}` "
        f"on {', '.join(record.eval_splits)}\n\n"
        f"Dataset: `{record.hf_path or record.builder}`"
        + (f" @ `{record.revision[:10]}`" if record.revision else "")
        + f" · samples: {size if size is not None else 'unknown'}"
        + (f"\n\n{record.description}" if record.description else "")
    )
    rows = filtered(board, board.per_task.get(name, []), _filters(openness, sizes, families, query))
    columns = list(board.per_task[name][0]) if board.per_task.get(name) else ["Rank", "Model"]
    df = frame(rows, columns=columns)
    return [
        gr.Dropdown(choices=names, value=name, allow_custom_value=True),
        info,
        _table(df),
        write_csv(df, f"{board.benchmark.name}-{name}"),
    ]


def view_efficiency(
    state: AppState,
    bench: str,
    openness: str,
    sizes: Sequence[str],
    families: Sequence[str],
    query: str,
) -> list[Any]:
    """The efficiency plot and its CSV."""
    board = _board(state, bench)
    rows = filtered(board, board.efficiency, _filters(openness, sizes, families, query))
    df = frame(rows, columns=list(board.efficiency[0]) if board.efficiency else ["Model"])
    return [efficiency_figure(board, rows), write_csv(df, f"{board.benchmark.name}-efficiency")]


def view_distribution(
    state: AppState,
    bench: str,
    openness: str,
    sizes: Sequence[str],
    families: Sequence[str],
    query: str,
    type_label: str,
) -> Any:
    """Score distribution per family for one task type."""
    board = _board(state, bench)
    label = type_label if type_label in TYPE_LABELS.values() else TYPE_LABELS[board.types[0]]
    return distribution_figure(
        board, filtered(board, board.scores, _filters(openness, sizes, families, query)), label
    )


def view_radar(
    state: AppState,
    bench: str,
    openness: str,
    sizes: Sequence[str],
    families: Sequence[str],
    query: str,
    models: Sequence[str],
) -> list[Any]:
    """The radar's model picker (choices follow the filters; default the top three) and plot."""
    board = _board(state, bench)
    rows = filtered(board, board.overall, _filters(openness, sizes, families, query))
    choices = [r["Model"] for r in rows]
    chosen = [m for m in models or () if m in choices] or choices[:3]
    return [
        gr.Dropdown(choices=choices, value=chosen, multiselect=True, allow_custom_value=True),
        radar_figure(board, rows, chosen),
    ]


def view_domains(
    state: AppState,
    bench: str,
    openness: str,
    sizes: Sequence[str],
    families: Sequence[str],
    query: str,
    vs_type: str,
) -> list[Any]:
    """ChemTEB vs MTEB for one task type: the scatter, its note, the points' table and CSV."""
    board = _board(state, bench)
    names = _shown(board, openness, sizes, families, query)
    figure, note, df = domain_view(
        board,
        state.mteb,
        names,
        vs_type,
        min_mteb_coverage=state.min_mteb_coverage,
        source=state.mteb_source,
    )
    label = vs_type if vs_type in DOMAIN_LABELS else DOMAIN_LABELS[0]
    name = f"{board.benchmark.name}-vs-MTEB-{label}"
    return [figure, note, _table(df), write_csv(df, name)]


def view_correlations(
    state: AppState,
    bench: str,
    openness: str,
    sizes: Sequence[str],
    families: Sequence[str],
    query: str,
    matrix: str,
    method: str,
) -> list[Any]:
    """The correlation heatmap (tasks or models; Spearman or Pearson), its note and CSV."""
    board = _board(state, bench)
    names = _shown(board, openness, sizes, families, query)
    matrix = matrix if matrix in dict(MATRICES).values() else "tasks"
    method = method if method in dict(METHODS).values() else "spearman"
    figure, note, body = correlation_view(board, names, matrix, method)
    return [figure, note, write_body(body, f"{board.benchmark.name}-{matrix}_{method}")]


def view_all(state: AppState, *values: Any) -> list[Any]:
    """Every output, from the controls' values in ``PARAMS`` order."""
    bench, openness, sizes, families, query, task, type_label, models = values[:8]
    vs_type, matrix, method = values[8:]
    base = (state, bench, openness, sizes, families, query)
    return [
        *view_tables(*base),
        *view_task(*base, task),
        *view_efficiency(*base),
        view_distribution(*base, type_label),
        *view_radar(*base, models),
        *view_domains(*base, vs_type),
        *view_correlations(*base, matrix, method),
    ]


def parse_query(state: AppState, params: Mapping[str, str]) -> dict[str, Any]:
    """Control values from URL query parameters; unknown values fall back to the defaults."""
    bench = params.get("benchmark", state.default_benchmark)
    bench = bench if bench in state.boards else state.default_benchmark

    def listed(name: str) -> list[str]:
        return [v for v in params.get(name, "").split(",") if v]

    tab = params.get("tab", "overall")
    matrices, methods = dict(MATRICES).values(), dict(METHODS).values()
    return {
        "benchmark": bench,
        "open": params.get("open", "all") if params.get("open") in OPENNESS else "all",
        "size": [s for s in listed("size") if s in SIZE_BUCKETS],
        "family": [f for f in listed("family") if f in state.families],
        "q": params.get("q", ""),
        "task": params.get("task", ""),
        "type": params.get("type", TYPE_LABELS["Classification"]),
        "models": listed("models"),
        "vs_type": params["vs_type"]
        if params.get("vs_type") in DOMAIN_LABELS
        else DOMAIN_LABELS[0],
        "matrix": params["matrix"] if params.get("matrix") in matrices else "tasks",
        "method": params["method"] if params.get("method") in methods else "spearman",
        "tab": tab if tab in TABS else "overall",
    }


def _url_js(names: Sequence[str]) -> str:
    """Browser code run before a handler: mirror the inputs into the URL, pass them on."""
    return (
        "(...args) => { const names = " + json.dumps(list(names)) + ";"
        " const u = new URL(window.location.href);"
        " names.forEach((n, i) => { const v = args[i];"
        " const s = Array.isArray(v) ? v.join(',') : (v === null || v === undefined ? '' : String(v));"
        " if (s === '' || (n === 'open' && s === 'all')) u.searchParams.delete(n); else u.searchParams.set(n, s); });"
        " window.history.replaceState(null, '', u.toString()); return args; }"
    )


# The URL as the page was opened, kept before any event can rewrite it (launch(head=...)).
# And the tables' headers wrap between words, never inside one ("Classif / ication"): a column
# is at least as wide as its longest header word.
HEAD = (
    "<script>window.chemtebInitialURL = window.location.href;</script>"
    "<style>.gradio-container th span { word-break: normal !important;"
    " overflow-wrap: normal !important; hyphens: none; }</style>"
)
_OPEN_TAB_JS = (
    "() => { const t = new URL(window.chemtebInitialURL || window.location.href).searchParams.get('tab');"
    " const b = t && document.getElementById('tab-' + t + '-button'); if (b) b.click(); }"
)


def _tab_js(tab: str) -> str:
    return (
        "() => { const u = new URL(window.location.href);"
        f" if ('{tab}' === 'overall') u.searchParams.delete('tab'); else u.searchParams.set('tab', '{tab}');"
        " window.history.replaceState(null, '', u.toString()); }"
    )


ABOUT = """
### What is scored
ChemTEB asks how well a text embedding model serves chemistry. Each task type has one metric:
**classification** — macro F1 of a logistic-regression probe on the embeddings (10 experiments of
8 samples per label, MTEB's protocol; MTEB's ChemTEB reports accuracy); **clustering** — V-measure
of mini-batch k-means; **pair classification** — the best F1 over thresholds on cosine, dot,
Euclidean and Manhattan scores (`max_f1`; MTEB 2.x reports `max_ap`); **bitext mining** — F1 of
nearest-neighbour matching between SMILES and names, descriptions or formulas; **retrieval** —
nDCG@10. Column headers name the key each task is scored by. The numbers are computed by
chemteb-eval, which reproduces MTEB's evaluators exactly.

### How models are ranked
Per task type, a model's score is the mean of its task scores, and complete models are ranked per
type. **ChemTEB(paper)** fuses those ranks by **Reciprocal Rank Fusion**: RRF = Σ over types of
1 / (10 + rank), so a model must do well on every kind of task to lead. **ChemTEB** and
**ChemTEB(v1.1)** rank by the mean over tasks, as MTEB's leaderboard does; RRF is still shown.
**Borda** counts, over all tasks, the models each model beats (its rank among complete models is
*Borda rank*). Models without every task of a benchmark are marked ⚠ and listed after the
ranked models, without a rank: their means cover fewer tasks and are not comparable.

### How sure is a rank?
*Rank 95%* is the range of ranks a model takes in 95% of 1,000 resamples of the benchmark's tasks
(drawn with replacement within each task type, the aggregate recomputed each time; for runs that
wrote per-item evidence, the items of retrieval and accuracy tasks are resampled too). *≈ #1*
marks the models that rank first in at least 2.5% of resamples: not separable from the top. Per-task
tables show a *95% CI* of the score where the run's items allow it. Method and assumptions:
`docs/uncertainty.md` in the repository.

### Speed
*Samples per second* is the sum of the tasks' sizes (as their references state them) over the
sum of the result files' `evaluation_time`. That time is MTEB's: encoding the task's texts plus
scoring them (chemteb-eval's runs record each vector's encoding cost in their cache, so a rerun
served from the cache reports what encoding cost, and split the cost of a text several tasks share
between them; earlier chemteb-eval files that timed scoring alone are left out). Speeds are only
comparable on the same machine: the plot has one panel per hardware (the paper's files: one V100;
our runs: the GPU or CPU model that the run's record in `runs.jsonl` names), each with its own Pareto front. API
models' times are network calls.

### ChemTEB vs MTEB, and the correlations
*ChemTEB vs MTEB* puts each model's general-domain MTEB(eng, v1) mean next to its ChemTEB mean,
per task type both benchmarks have (the paper's Figure 3), with the same metric on both axes —
MTEB's leaderboard metric for the type: accuracy, V-measure, AP, nDCG@10 — and Spearman's rho
between the two rankings with a 95% bootstrap interval (1,000 resamples of the models). A model
is plotted only with every ChemTEB task of the type and every MTEB task of the type; the others
are listed with what they lack. *Correlations* shows how the models' scores on two tasks move
together (task × task, grouped by type: a negative value inside a type means its tasks reward
different abilities) and how two models' scores over the tasks move together (model × model,
ordered by hierarchical clustering, families named). Both follow the filters, and
`chemteb compare-domains` / `chemteb rank --correlations` compute the same numbers.

### Submitting results
Run `pip install "chemteb-eval[run]" && chemteb run --model <your model> --benchmark "ChemTEB(paper)"`
(or `ChemTEB`), which writes `results/<org__model>/<revision>/<Task>.json` in MTEB's layout with a
`model_meta.json`. Open a pull request adding that folder to the results dataset repo this Space
reads (named in its settings as `CHEMTEB_RESULTS_REPO`); once merged and the Space's pinned
revision moves, your model appears here. MTEB result folders are read as they are.
"""


@dataclass
class _Page:
    """The page's components, as the layout functions create them and the wiring reads them."""

    filters: list[Any] = field(default_factory=list)  # bench, openness, sizes, families, query
    summary: Any = None
    notice: Any = None
    overall: Any = None
    overall_csv: Any = None
    type_tables: list[Any] = field(default_factory=list)
    type_csvs: list[Any] = field(default_factory=list)
    tabs: dict[str, Any] = field(default_factory=dict)
    task: Any = None
    task_info: Any = None
    task_table: Any = None
    task_csv: Any = None
    eff_plot: Any = None
    eff_csv: Any = None
    type_pick: Any = None
    dist_plot: Any = None
    radar_models: Any = None
    radar_plot: Any = None
    vs_type: Any = None
    vs_plot: Any = None
    vs_note: Any = None
    vs_table: Any = None
    vs_csv: Any = None
    matrix: Any = None
    method: Any = None
    corr_plot: Any = None
    corr_note: Any = None
    corr_csv: Any = None

    @property
    def controls(self) -> list[Any]:
        return [
            *self.filters,
            self.task,
            self.type_pick,
            self.radar_models,
            self.vs_type,
            self.matrix,
            self.method,
        ]

    @property
    def domain_outputs(self) -> list[Any]:
        return [self.vs_plot, self.vs_note, self.vs_table, self.vs_csv]

    @property
    def correlation_outputs(self) -> list[Any]:
        return [self.corr_plot, self.corr_note, self.corr_csv]

    @property
    def task_outputs(self) -> list[Any]:
        return [self.task, self.task_info, self.task_table, self.task_csv]

    @property
    def all_outputs(self) -> list[Any]:
        tables = [self.summary, self.notice, self.overall, self.overall_csv]
        for table, csv_button in zip(self.type_tables, self.type_csvs, strict=True):
            tables += [table, csv_button]
        plots = [self.eff_plot, self.eff_csv, self.dist_plot, self.radar_models, self.radar_plot]
        return [
            *tables,
            *self.task_outputs,
            *plots,
            *self.domain_outputs,
            *self.correlation_outputs,
        ]


def build_demo(state: AppState) -> gr.Blocks:
    """The page. Initial values are the default view, so it is useful before any event runs."""
    default = parse_query(state, {})
    page = _Page()
    demo: gr.Blocks
    with gr.Blocks(title="ChemTEB leaderboard") as demo:
        gr.Markdown(
            "# ChemTEB leaderboard\nWhich embedding model should sit behind chemistry search, "
            "RAG or classification? Scores of the Chemical Text Embedding Benchmark."
            + (f"\n\nResults: {state.source}" if state.source else "")
        )
        _filter_row(state, default, page)
        page.summary = gr.Markdown(elem_id="summary")
        page.notice = gr.Markdown(elem_id="notice")
        with gr.Tabs():
            _table_tabs(page)
            _view_tabs(state, default, page)
            _analysis_tabs(default, page)
            with gr.Tab("About", id="about", elem_id="tab-about") as page.tabs["about"]:
                gr.Markdown(ABOUT)
        _wire(demo, state, page)
    return demo


def _filter_row(state: AppState, default: dict[str, Any], page: _Page) -> None:
    with gr.Row():
        page.filters = [
            gr.Dropdown(
                list(state.boards),
                value=default["benchmark"],
                label="Benchmark",
                scale=2,
                elem_id="benchmark",
            ),
            gr.Radio(list(OPENNESS), value="all", label="Weights", scale=2, elem_id="weights"),
            gr.CheckboxGroup(
                list(SIZE_BUCKETS), label="Size (parameters)", scale=3, elem_id="size"
            ),
            gr.Dropdown(
                state.families, multiselect=True, label="Family", scale=2, elem_id="family"
            ),
            gr.Textbox(label="Search models", placeholder="e.g. bge", scale=2, elem_id="search"),
        ]


def _table_tabs(page: _Page) -> None:
    """The overall table and one table per task type, each with its CSV."""
    with gr.Tab("Overall", id="overall", elem_id="tab-overall") as page.tabs["overall"]:
        page.overall = gr.Dataframe(
            elem_id="overall-table", interactive=False, max_height=900, pinned_columns=2, wrap=True
        )
        page.overall_csv = gr.DownloadButton("Download CSV", elem_id="overall-csv", size="sm")
    for t in TASK_TYPES:
        name = t.lower()
        with gr.Tab(TYPE_LABELS[t], id=name, elem_id=f"tab-{name}") as page.tabs[name]:
            page.type_tables.append(
                gr.Dataframe(
                    elem_id=f"{name}-table", interactive=False, max_height=900, pinned_columns=2
                )
            )
            page.type_csvs.append(
                gr.DownloadButton("Download CSV", elem_id=f"{name}-csv", size="sm")
            )


def _view_tabs(state: AppState, default: dict[str, Any], page: _Page) -> None:
    """Per task, efficiency, distribution and radar."""
    board = state.boards[state.default_benchmark]
    # Every name any benchmark can offer, so that updated choices always validate.
    all_models = sorted({r["Model"] for b in state.boards.values() for r in b.overall})
    all_tasks = sorted({t.name for b in state.boards.values() for t in b.tasks})
    with gr.Tab("Per task", id="task", elem_id="tab-task") as page.tabs["task"]:
        page.task = gr.Dropdown(
            all_tasks, value=board.tasks[0].name, allow_custom_value=True, label="Task"
        )
        page.task_info = gr.Markdown()
        page.task_table = gr.Dataframe(elem_id="task-table", interactive=False, max_height=900)
        page.task_csv = gr.DownloadButton("Download CSV", elem_id="task-csv", size="sm")
    with gr.Tab("Efficiency", id="efficiency", elem_id="tab-efficiency") as page.tabs["efficiency"]:
        page.eff_plot = gr.Plot(elem_id="efficiency-plot")
        page.eff_csv = gr.DownloadButton("Download CSV", elem_id="efficiency-csv", size="sm")
    with gr.Tab("Distribution", id="distribution", elem_id="tab-distribution") as page.tabs[
        "distribution"
    ]:
        page.type_pick = gr.Radio(
            [TYPE_LABELS[t] for t in TASK_TYPES], value=default["type"], label="Task type"
        )
        page.dist_plot = gr.Plot(elem_id="distribution-plot")
    with gr.Tab("Radar", id="radar", elem_id="tab-radar") as page.tabs["radar"]:
        page.radar_models = gr.Dropdown(
            all_models,
            multiselect=True,
            allow_custom_value=True,
            label="Models (default: the top three)",
        )
        page.radar_plot = gr.Plot(elem_id="radar-plot")


def _analysis_tabs(default: dict[str, Any], page: _Page) -> None:
    """The paper's analysis views: ChemTEB vs MTEB per task type, the correlation matrices."""
    with gr.Tab("ChemTEB vs MTEB", id="domains", elem_id="tab-domains") as page.tabs["domains"]:
        gr.Markdown(
            "Does a model's rank on general-domain MTEB carry over to chemistry? Each point is "
            "a model: its MTEB(eng, v1) mean against its ChemTEB mean for one task type, the "
            "same metric on both axes."
        )
        page.vs_type = gr.Radio(
            list(DOMAIN_LABELS), value=default["vs_type"], label="Task type", elem_id="vs-type"
        )
        page.vs_plot = gr.Plot(elem_id="domains-plot")
        page.vs_note = gr.Markdown(elem_id="domains-note")
        page.vs_table = gr.Dataframe(elem_id="domains-table", interactive=False, max_height=600)
        page.vs_csv = gr.DownloadButton("Download CSV", elem_id="domains-csv", size="sm")
    with gr.Tab("Correlations", id="correlations", elem_id="tab-correlations") as page.tabs[
        "correlations"
    ]:
        with gr.Row():
            page.matrix = gr.Radio(
                list(MATRICES), value=default["matrix"], label="Matrix", elem_id="matrix"
            )
            page.method = gr.Radio(
                list(METHODS), value=default["method"], label="Correlation", elem_id="method"
            )
        page.corr_note = gr.Markdown(elem_id="correlations-note")
        page.corr_plot = gr.Plot(elem_id="correlations-plot")
        page.corr_csv = gr.DownloadButton("Download CSV", elem_id="correlations-csv", size="sm")


def _wire(demo: gr.Blocks, state: AppState, page: _Page) -> None:
    """The events: filters redraw everything; each picker its own view; tabs and load follow
    the URL."""

    def on_filters(*values: Any) -> list[Any]:
        return view_all(state, *values)

    for control in page.filters:
        control.input(
            on_filters,
            inputs=page.controls,
            outputs=page.all_outputs,
            js=_url_js(PARAMS),
            trigger_mode="always_last",
            show_progress="hidden",
        )
    # The task, distribution, radar and analysis pickers: same wiring, each with its own view.
    corr_controls = [page.matrix, page.method]
    pickers: tuple[tuple[Any, Any, Any, list[Any], list[str], str], ...] = (
        (page.task, view_task, page.task_outputs, [page.task], ["task"], "task"),
        (
            page.type_pick,
            view_distribution,
            page.dist_plot,
            [page.type_pick],
            ["type"],
            "distribution",
        ),
        (
            page.radar_models,
            view_radar,
            [page.radar_models, page.radar_plot],
            [page.radar_models],
            ["models"],
            "radar",
        ),
        (page.vs_type, view_domains, page.domain_outputs, [page.vs_type], ["vs_type"], "domains"),
        (
            page.matrix,
            view_correlations,
            page.correlation_outputs,
            corr_controls,
            ["matrix", "method"],
            "correlations",
        ),
        (
            page.method,
            view_correlations,
            page.correlation_outputs,
            corr_controls,
            ["matrix", "method"],
            "correlation_method",
        ),
    )
    for control, view, outputs, inputs, params, api_name in pickers:
        control.input(
            partial(view, state),
            inputs=[*page.filters, *inputs],
            outputs=outputs,
            js=_url_js([*PARAMS[:5], *params]),
            api_name=api_name,
            show_progress="hidden",
        )
    for name, tab in page.tabs.items():
        tab.select(None, js=_tab_js(name))

    def on_load(request: gr.Request) -> list[Any]:
        values = parse_query(state, dict(request.query_params) if request else {})
        controls_out = [values[p] for p in PARAMS]
        return [*controls_out, *view_all(state, *controls_out)]

    demo.load(
        on_load, inputs=None, outputs=[*page.controls, *page.all_outputs], show_progress="hidden"
    )
    # The tab is the browser's business: click the one the URL names.
    demo.load(None, js=_OPEN_TAB_JS)


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="The ChemTEB leaderboard (Gradio).")
    parser.add_argument(
        "--results", nargs="+", metavar="DIR", help="result folders (ours or MTEB's layout)"
    )
    parser.add_argument(
        "--models", metavar="CSV", help="model facts table (paper_models.csv's columns)"
    )
    parser.add_argument(
        "--benchmark",
        help="the benchmark shown first (default: the one the results cover best)",
    )
    parser.add_argument(
        "--mteb-scores",
        metavar="CSV",
        help=f"MTEB(eng, v1) scores for the ChemTEB vs MTEB tab (default: {MTEB_SCORES_FILE} in "
        "or beside a results folder)",
    )
    parser.add_argument(
        "--mteb-results",
        action="append",
        default=[],
        metavar="DIR",
        help="MTEB results folder(s) (MTEB's layout) adding your models to those scores",
    )
    parser.add_argument(
        "--min-mteb-coverage",
        type=float,
        default=1.0,
        help="share of a type's MTEB tasks a model needs to be plotted (default 1: all)",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=7860)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = _parse_args(argv)
    from chemteb_eval.errors import ChemtebError

    if args.results:
        roots, source = args.results, ", ".join(args.results)
    elif os.environ.get("CHEMTEB_RESULTS_REPO"):
        from chemteb_eval.hub import download_results

        repo = os.environ["CHEMTEB_RESULTS_REPO"]
        revision = os.environ.get("CHEMTEB_RESULTS_REVISION") or None
        try:
            roots = [str(download_results(repo, revision=revision))]
        except (ValueError, ChemtebError) as exc:  # the message says what to do
            sys.exit(str(exc))
        source = f"`{repo}` @ `{revision or 'main (unpinned: set CHEMTEB_RESULTS_REVISION)'}`"
    else:
        sys.exit(
            "No results: pass --results DIR [DIR ...], or set CHEMTEB_RESULTS_REPO (and CHEMTEB_RESULTS_REVISION)."
        )
    try:
        state = build_state(
            roots,
            model_table=args.models,
            default_benchmark=args.benchmark,
            source=source,
            mteb_scores=args.mteb_scores,
            mteb_results=args.mteb_results,
            min_mteb_coverage=args.min_mteb_coverage,
        )
    except ValueError as exc:
        sys.exit(str(exc))
    build_demo(state).launch(
        server_name=args.host, server_port=args.port, show_error=True, head=HEAD
    )


if __name__ == "__main__":
    main()
