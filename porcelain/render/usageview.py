"""The text of `jp usage`: one line per period, columns aligned, a total line."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from porcelain.domain.escaping import escape_untrusted

HEAD = ("INPUT", "OUTPUT", "CACHE WRITE", "CACHE READ", "TOTAL", "COST")
COUNTS = ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens")


def cost(value: Any) -> str:
    """``$12.34`` (``$0.0023`` under a dollar), or ``?`` when a model of the row has no
    price."""
    if value is None:
        return "?"
    if value >= 1 or value == 0:
        return f"${value:,.2f}"
    return f"${value:.4f}" if value >= 0.0001 else "<$0.0001"


def _cells(row: dict[str, Any]) -> list[str]:
    counts = [f"{row[k]:,}" for k in COUNTS]
    return [*counts, f"{row['total_tokens']:,}", cost(row["cost_usd"])]


def _models(row: dict[str, Any]) -> str:
    names = [escape_untrusted(str(m), one_line=True) for m in row.get("models", [])]
    return ", ".join(names)


def table(report: dict[str, Any], columns: int | None = None) -> list[str]:
    """The lines of the report (``usage_report.report``)."""
    by = report["by"]
    key = "period" if by in ("day", "week", "month") else by
    rows: Sequence[dict[str, Any]] = report["rows"]
    if not rows:
        return ["no usage recorded" + (" in that range" if report.get("filtered") else "")]
    labels = [escape_untrusted(str(r[key]), one_line=True) for r in rows]
    body = [[label, *_cells(r), _models(r)] for label, r in zip(labels, rows, strict=True)]
    total = ["TOTAL", *_cells(report["total"]), ""]
    head = [by.upper(), *HEAD, "MODELS"]
    widths = [max(len(line[i]) for line in (head, *body, total)) for i in range(len(head) - 1)]

    def line(cells: list[str]) -> str:
        first = cells[0].ljust(widths[0])
        numbers = [c.rjust(w) for c, w in zip(cells[1:-1], widths[1:], strict=True)]
        text = "  ".join([first, *numbers, cells[-1]]).rstrip()
        return text if columns is None or len(text) <= columns else text[: columns - 1] + "…"

    out = [line(head), *(line(cells) for cells in body), line(total)]
    unpriced = report["total"].get("unpriced_models") or []
    if unpriced:
        names = ", ".join(escape_untrusted(str(m), one_line=True) for m in unpriced)
        out.append(f'? no price for {names}: set one in [usage.prices."MODEL"] (docs/usage.md)')
    return out
