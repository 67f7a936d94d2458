"""`jp tools ls` as text: one line a tool (names and reasons escaped: a server chose them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from porcelain.domain.escaping import escape_untrusted


class Row(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def offered(self) -> bool: ...
    @property
    def why(self) -> str: ...


def tool_lines(rows: Sequence[Row]) -> list[str]:
    if not rows:
        return ["no tools are configured (docs/tools.md)"]
    names = [escape_untrusted(r.name, one_line=True) for r in rows]
    width = min(max(len(n) for n in names), 48)
    out = []
    for row, name in zip(rows, names, strict=True):
        state = "offered" if row.offered else "not offered"
        out.append(f"{name:<{width}}  {row.kind:<10}  {state:<11}  {escape_untrusted(row.why, one_line=True)}")
    return out
