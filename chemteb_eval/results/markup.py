"""Recorded text (model names, families, task names and descriptions, file names) as Markdown,
Plotly and code spans show it literally: the one escaper of every page and card that renders
text someone else wrote (the Space's tabs and plots, a model card's heading).

A recorded string may hold ``<img src=x onerror=...>``, ``[link](javascript:...)``, a ``|``
that would end a Markdown table's cell, or line breaks that would end the table; escaped, it
renders as its own characters and nothing else.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

__all__ = ["md", "md_code", "plot_text", "printable", "shown"]

# ":" too: "http\://" is not autolinked (GitHub-flavoured Markdown links bare URLs)
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()!|<>~&$:])")
_MD_LINE_START = re.compile(r"^(?=[#+\-=>])")  # a heading, list or quote marker
_MD_ORDERED = re.compile(r"^(\d+)([.)])")  # "1. " starts an ordered list


def _shown(char: str) -> str:
    if char == "\t":
        return " "
    return "?" if unicodedata.category(char) == "Cc" else char


def printable(text: Any) -> str:
    """``text`` with every character a screen would not show as itself — a terminal escape
    (ESC), a right-to-left override (U+202E, which reverses what follows it, so one model's
    row could read as another's), any other control or format character — as ``?``; a tab
    as a space. What the CLI's lines do too."""
    return "".join(c if c.isprintable() else " " if c == "\t" else "?" for c in str(text))


def shown(text: object) -> str:
    """Untrusted text (a model name, a file path) as a terminal line shows it: control
    characters — an escape sequence recolouring the screen or setting the title, a newline
    breaking a table row — become "?" (a tab too: the CLI's tables)."""
    return "".join(c if c.isprintable() else "?" for c in str(text))


def md(text: Any) -> str:
    """``text`` as literal Markdown: every character Markdown (or the HTML in it) would act on
    is backslash-escaped, and line breaks become spaces, so a contributed model name, family or
    file name can neither link, embed a remote image, nor start a list."""
    # control characters (a terminal escape) as "?": never meant to be shown
    flat = "".join(_shown(c) for c in " ".join(str(text).splitlines())).strip()
    # (4 leading spaces would start code: stripped)
    text = _MD_SPECIAL.sub(r"\\\1", flat)
    text = re.sub(r"(?i)\bwww\.", r"www\\.", text)
    return _MD_ORDERED.sub(r"\1\\\2", _MD_LINE_START.sub("\\\\", text))


def plot_text(text: Any) -> str:
    """``text`` as Plotly shows it literally: Plotly reads ``<a href>``, ``<b>``, ``<br>`` and
    ``<span style>`` in trace names, tick labels and hover text, and decodes ``&lt;``/``&gt;``/
    ``&amp;``, so escaping those three keeps a contributed name from becoming a link."""
    return printable(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def md_code(text: Any) -> str:
    """``text`` as a Markdown code span, shown literally whatever it holds: the fence is one
    backtick longer than any run of backticks inside (CommonMark's rule), lines joined."""
    flat = " ".join(str(text).splitlines())
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"
