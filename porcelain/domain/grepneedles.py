"""The strings a search pattern requires: what the cache's index narrows a grep by.

A pattern's needles are the runs of plain characters that every match holds
(a fixed string is one run; a regular expression's runs are the literal
characters outside alternations, repeats and classes).  A line without one
of them cannot match, so a conversation whose text holds none need not be
read.  A pattern with no run of at least three characters has no needles:
every conversation is read.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

SHORTEST = 3


def needles(matcher: re.Pattern[str]) -> list[str]:
    """The runs of at least ``SHORTEST`` characters that every match of ``matcher``
    holds, as written (the index folds case itself); [] when none is known."""
    # re's own parser: what it compiles is what is read here
    parser: Any = importlib.import_module("re._parser")
    try:
        parsed = parser.parse(matcher.pattern, matcher.flags)
    except Exception:  # a pattern re compiled always parses; stay safe: no needles
        return []
    runs: list[str] = []
    _runs(parsed, runs)
    return [r for r in runs if len(r) >= SHORTEST]


def _runs(items: Any, out: list[str]) -> None:
    """Append the literal runs of one sequence (and of its plain groups) to ``out``."""
    constants: Any = importlib.import_module("re._constants")
    run: list[str] = []
    for op, value in items:
        if op is constants.LITERAL:
            run.append(chr(value))
            continue
        out.append("".join(run))
        run = []
        if op is constants.SUBPATTERN:  # (group, add flags, del flags, sequence)
            _runs(value[3], out)
    out.append("".join(run))
