"""The figures the README and the docs print are ``scripts/docs_figures.py``'s, which measured
them by running the very commands the pages show: every marked figure equals its rendering from
``docs/figures.json``, and the scores there are those the run wrote. Cost: < 1 s (the slow
test that reruns the command is ``test_pipchem``'s and the first-hour tests')."""

from __future__ import annotations

import importlib.util
import json
import re
from types import ModuleType

import pytest

from .conftest import REPO_ROOT


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "docs_figures", REPO_ROOT / "scripts" / "docs_figures.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_marked_figure_is_the_record_of_a_run() -> None:
    script = _script()
    figures = json.loads((REPO_ROOT / "docs" / "figures.json").read_text(encoding="utf-8"))
    marked = 0
    for page in script.PAGES:
        text = page.read_text(encoding="utf-8")
        marked += len(script.REGION.findall(text)) + len(script.INLINE.findall(text))
        assert script.rewrite(text, figures) == text, (
            f"{page.relative_to(REPO_ROOT)}: a figure differs from docs/figures.json; run "
            "python scripts/docs_figures.py (or --render after editing the pages)"
        )
    assert marked >= 3  # the README's two times and the run's table


def test_every_marker_is_one_the_script_reads() -> None:
    """A ``<!-- fig:`` the script's pattern does not match is never rendered: the README showed
    "0 word pieces" for weeks because its keys held capitals the pattern refused."""
    script = _script()
    for page in script.PAGES:
        text = re.sub(r"`[^`\n]*`", "", page.read_text(encoding="utf-8"))  # the syntax, shown
        assert text.count("<!-- fig:") == len(script.INLINE.findall(text)), page.name
        assert text.count("<!-- figures:") == len(script.REGION.findall(text)), page.name


def test_the_record_is_one_runs_seven_pipchem_scores() -> None:
    from chemteb_eval.tasks import benchmark_tasks

    figures = json.loads((REPO_ROOT / "docs" / "figures.json").read_text(encoding="utf-8"))
    run = figures["main_run"]
    assert run["command"] == "chemteb run"
    assert list(run["scores"]) == [t.name for t in benchmark_tasks("PipChem")]
    assert run["scores"] == run["warm_scores"]  # a rerun prints the first run's
    assert 0 < run["warm_seconds"] < run["cold_seconds"]


# Issue 50: on the performance pages every measured number is the record's (a region or an
# inline marker) or sits in a block marked ``<!-- history: DATE -->``, a dated record of an
# earlier design. What reads as measured: a number with a unit of time, rate, memory or share,
# a speed ratio (``1.53x``), a score or difference (3+ decimals, ``2e-7``), a numeric table cell.
PERFORMANCE_PAGES = ("runner.md", "onnx.md", "performance.md", "benchmarks.md")
_UNIT = (
    r"s|ms|µs|us|ns|min|h|sec|secs|seconds?|minutes?|hours?|-second|-minute|MB|GB|TB|KB|kB|MiB"
    r"|GiB|GFLOP/s|GFLOPS|TFLOP/s|%|percent|[a-z]+/s|times|-fold"
)
MEASURED = re.compile(
    rf"(?<![\w.])\d[\d,]*(?:\.\d+)?\s?(?:{_UNIT})(?![\w])"  # 4.2 s, 30-second, 12 docs/s
    r"|(?<![\w.])\d+(?:\.\d+)?\s?[x×](?!\w)(?!\s?\d)|(?<!\w)[x×]\d"  # 1.53x, 1.5 ×, x3
    r"|(?<![\w.])[-−+~±]?\d+\.\d{2,}(?![\d.])"  # a score, a difference: 0.73, -0.02
    r"|\d(?:\.\d+)?[eE][-+]?\d+"  # 2e-7, 1.6E-04
)
NUMERIC_CELL = re.compile(r"^\s*[-−+~±*]*[\d,]*\d(?:\.\d+)?\**\s*(?:\(.*\)|±.*)?\s*$")
# a library's version is not a figure: MTEB 2.26, torch 2.13, schema 0.3
VERSION = re.compile(
    r"\b(?:MTEB|mteb|torch|Python|numpy|transformers|sentence-transformers|chembench|EEE|"
    r"schema|version|v)[ =]?\d+(?:\.\d+)+"
)
HISTORY = re.compile(r"<!-- history: (\d{4}-\d{2}-\d{2}) -->")
CODE_SPAN = re.compile(r"`[^`]*`")
# numbers that are not measurements, each with why
NOT_MEASURED = {
    "onnx.md": ["refused above 1e-4"],  # the export check's threshold, a setting
    "runner.md": [
        "| 3 × 10,069 → 10,069 | 20,138 |",  # the deduplication estimate: split sizes in the
        "| ≤ 1,141 + 2,105 → 2,105 | ≤ 1,141 |",  # registry's CSV, arithmetic, not timings
        "| ≤ 444 + 617 → 617 | ≤ 444 |",
        "| ≈ 92,000 |",
        "10 × 8 × 2 = 160",  # the probe's undersampling bound, arithmetic
    ],
}


def _dated(match: re.Match[str]) -> bool:
    """A history marker's date is a real day, not after today's."""
    import datetime

    try:
        day = datetime.date.fromisoformat(match.group(1))
    except ValueError:
        return False
    return day <= datetime.date.today()


def unmarked_figures(page: str, text: str) -> list[str]:
    """Lines of ``text`` with a measured-looking number outside the record and history."""
    found, fence, region, history = [], False, False, False
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            fence = not fence
            continue
        if fence:  # commands and their syntax: no figure, no marker
            continue
        bare = CODE_SPAN.sub("", line)
        if "<!-- figures:" in bare:
            region = True
        if "<!-- /figures -->" in bare:
            region = False
            continue
        if not line.strip():
            history = False
        if region or history:
            continue
        rest = re.sub(r"<!-- fig:[^>]*-->.*?<!-- /fig -->", "", bare)
        marker = HISTORY.search(rest)
        if marker and _dated(marker):  # covers the rest of its block (paragraph, table)
            rest, history = rest[: marker.start()], True
        rest = VERSION.sub("", rest)
        rest = re.sub(r"\(targets?\b[^);]*(?:\)|;|$)|targets?:? [<>≤≥=]+ ?[\d.,]+\S*", "", rest)
        for allowed in NOT_MEASURED.get(page, []):
            rest = rest.replace(allowed, "")
        cells = rest.split("|")[1:-1] if rest.lstrip().startswith("|") else []
        if MEASURED.search(rest) or any(NUMERIC_CELL.match(c) for c in cells):
            found.append(f"docs/{page}:{number}: {line.strip()[:100]}")
    return found


def test_every_measured_number_on_the_performance_pages_is_the_record_or_history() -> None:
    unmarked = [
        hit
        for page in PERFORMANCE_PAGES
        for hit in unmarked_figures(page, (REPO_ROOT / "docs" / page).read_text("utf-8"))
    ]
    assert not unmarked, (
        "measured numbers typed by hand (put them in docs/figures.json through a benchmark's "
        "--record and a <!-- figures:NAME --> region or <!-- fig:KEY --> marker, or mark the "
        "block <!-- history: DATE --> as an earlier design's record):\n" + "\n".join(unmarked)
    )


@pytest.mark.parametrize(
    ("line", "flagged"),
    [
        ("took 4 min 8 s here", True),
        ("ran at 1.53x MTEB's speed", True),
        ("PipChemWikiTopicClassification 0.728549", True),
        ("vectors differ by 2e-7", True),
        ("| bare | 295.4 |", True),
        ("| cache get | 844,644 | — |", True),
        ("3,000 texts/s on 2 cores", True),
        ("<!-- history: 2026-12-01 -->took 4 min 8 s", False),
        ("| <!-- history: 2026-12-01 -->run | 4.2 s |\n| again | 3.1 s |", False),
        ("| run | 4.2 s |\n| <!-- history: 2026-12-01 -->again | 3.1 s |", True),
        ("<!-- history: 2026-12-01 -->took 4 s\n\nthen 3 s", True),
        ("<!-- history: 12/01 -->took 4 s", True),
        ("ran <!-- fig:a.b -->1.53<!-- /fig -->x the time", False),
        ("ran <!-- fig:a.b -->1.53<!-- /fig -->x the time, alone 0.9x", True),
        ("`--texts 128` on 2 cores (target < 10 s)", False),
        ("issue 46, 35 tasks in five types, top 10, nDCG@10, 384-d, 4096x384", False),
        ("MTEB 2.26.24 with torch 2.13.0 and Python 3.11.7", False),
        ("MTEB 2.26 on 200,000 x 384 vectors, 4,096 x 384 blocks", False),
        # what an outside attack found the first version missed
        ("a 30-second smoke run", True),
        ("it took 12 seconds, then 2 hours", True),
        ("1.5× faster, 2.5 times faster, a 1.5-fold gain, 40 percent, x3", True),
        ("350 GFLOPS, 9,000 docs/s, 80 queries/s, 12 µs, 3 MiB, 2 kB", True),
        ("a score of 0.73, a change of -0.02, a difference of 1.6E-04", True),
        ("| run | −0.02 |", True),
        ("| run | ~300 |", True),
        ("| run | 0.73 ± 0.01 |", True),
        ("(target 0.2x both; it ran 5.1x", True),
        ("Regions look like `<!-- figures:NAME -->`.\nThe cold run took 4.2 s", True),
        ("```\n<!-- figures:x -->\n```\nThe cold run took 4.2 s", True),
        ("<!-- history: 2099-01-01 -->float32 now runs at 3.1x MTEB", True),
        ("<!-- history: 2026-13-45 -->float32 now runs at 3.1x MTEB", True),
    ],
)
def test_what_reads_as_a_measured_number(line: str, flagged: bool) -> None:
    assert bool(unmarked_figures("x.md", line + "\n")) is flagged
