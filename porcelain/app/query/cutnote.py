"""A tool result cut twice says so once, with its true size.

A command tool's or an MCP server's output is cut first where it is read
(``[jp: the output was T bytes; only the first K were kept]``); a result
still over the store's per-event limit is cut again by ``fit_to_limits``, whose
marker counts only the bytes that second cut dropped and whose cut removes the
first marker.  ``fit_result`` makes that one marker again: the output's true
size (the first cut's, else the content's), the bytes the model is sent, and
the limit that cut them.
"""

from __future__ import annotations

import re

from gitstore import Event, Limits, fit_to_limits

FIRST_CUT = re.compile(r"\n\[jp: the output was (\d+) bytes; only the first (\d+) were kept\]")
SECOND_CUT = re.compile(
    r"\n\n\[jp: [0-9,]+ bytes of this tool result were dropped: over ([^\]]+)\]$"
)


def cut_note(total: int, kept: int, limit: str) -> str:
    return (
        f"\n\n[jp: the output was {total:,} bytes; only the first {kept:,} were kept "
        f"(over {limit})]"
    )


def fit_result(event: Event, limits: Limits) -> Event:
    """``event`` (a tool result) within the store's limit, one cut marker at most."""
    fitted = fit_to_limits(event, limits)
    content, cut = event.get("content"), fitted.get("content")
    if fitted is event or not isinstance(content, str) or not isinstance(cut, str):
        return fitted
    second = SECOND_CUT.search(cut)
    if second is None:
        return fitted
    first = FIRST_CUT.search(content)
    total = int(first.group(1)) if first else len(content.encode("utf-8"))
    kept = cut[: second.start()]
    if first is not None:  # the second cut may have kept the start of the first's marker
        kept = kept[: first.start()] if len(kept) > first.start() else kept
    raw = kept.encode("utf-8")
    note = cut_note(total, len(raw), second.group(1))
    room = len(raw) - max(0, len(note.encode("utf-8")) - len(cut[second.start() :].encode()))
    text = raw[: max(0, room)].decode("utf-8", "ignore")
    note = cut_note(total, len(text.encode("utf-8")), second.group(1))
    return {**fitted, "content": text + note}
