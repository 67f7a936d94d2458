"""Turning events into text for people (pure: events in, lines out).

Every event's text is untrusted.  Multi-line text becomes lines of its own
here; names and times that share a line with jp's own words go through
``untrusted_field``, and ``Output`` escapes what is left on a terminal.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from gitstore import PROPOSE_COMPACTION, Event, Kind, turns
from porcelain.domain.attachments import attachments_of
from porcelain.domain.interrupted import is_interrupted
from porcelain.domain.media import media_of
from porcelain.render.output import escape_untrusted, untrusted_field

STYLES = ("user", "chat", "brief", "full")
INTERRUPTED_LINE = "[interrupted: the answer was cut off here]"
PREVIEW_LINES = 4  # a tool result's first lines, in the styles that do not show it whole
PREVIEW_WIDTH = 100


def _clip(text: str, width: int) -> str:
    one = " ".join(text.split())
    return one if len(one) <= width else one[: width - 3] + "..."


def _preview(prefix: str, text: str) -> list[str]:
    """A tool result's first lines, each clipped, and how many more there are (the
    way an agent's own terminal shows a command's output folded)."""
    rows = text.rstrip().splitlines() or [""]
    lines = [prefix + _clip(rows[0], PREVIEW_WIDTH)]
    lines += ["  " + _clip(row, PREVIEW_WIDTH) for row in rows[1:PREVIEW_LINES]]
    if len(rows) > PREVIEW_LINES:
        lines.append(f"  ... ({len(rows) - PREVIEW_LINES:,} more lines; --style full shows all)")
    return lines


def _block(prefix: str, text: str) -> list[str]:
    lines = text.rstrip().splitlines() or [""]
    return [prefix + lines[0], *("  " + ln for ln in lines[1:])]


def _cut_off(event: Event) -> list[str]:
    """The line after an answer that a broken stream or Ctrl-C cut off."""
    return [INTERRUPTED_LINE] if is_interrupted(event) else []


def _proposal(args: dict[str, object]) -> list[str]:
    lo, hi = args.get("from_turn"), args.get("to_turn")
    what = f"proposal: turn {lo}" if lo == hi else f"proposal: turns {lo}-{hi}"
    parts = []
    if args.get("summary"):
        parts.append("summarize")
    if args.get("reasoning"):
        parts.append(f"reasoning {args['reasoning']}")
    if args.get("tool_calls"):
        parts.append(f"tools {args['tool_calls']}")
    lines = [f"{what} ({', '.join(parts) or 'no policy'})"]
    if args.get("summary"):
        lines += ["  " + ln for ln in str(args["summary"]).splitlines()]
    return lines


def _attachment_lines(event: Event, style: str) -> list[str]:
    """``[attached] file notes.md (1,234 bytes)`` per attachment (its text too in full)."""
    lines: list[str] = []
    for item in attachments_of(event):
        media = media_of(item)
        content = str(item["content"])
        size = item.get("size") if media else len(content.encode("utf-8", "replace"))
        what = f"{media[0]}, {size:,} bytes" if media else f"{size:,} bytes"
        kind = untrusted_field(str(item.get("kind", "file")))
        lines.append(f"[attached] {kind} {untrusted_field(item['source'])} ({what})")
        if style == "full" and not media:
            lines += ["  " + ln for ln in content.rstrip("\n").splitlines()]
    return lines


def event_lines(event: Event, style: str, names: dict[str, str]) -> list[str]:
    kind = event.get("type")
    if kind == Kind.CHAT_REQUEST:
        lines = _block("> ", str(event.get("content", "")))
        if style != "user":
            lines += _attachment_lines(event, style)
        system = (event.get("metadata") or {}).get("system")
        if style == "full" and isinstance(system, str):
            lines += _block("[system, this query] ", system)
        return lines
    if style == "user":
        return []
    if kind == Kind.CHAT_RESPONSE:
        if "message" in event:
            return _block("", str(event["message"])) + _cut_off(event)
        if "reasoning" in event and style != "chat":
            text = str(event["reasoning"])
            return _block("[reasoning] ", text if style == "full" else _clip(text, 100))
        if "data" in event:
            return _block("", json.dumps(event["data"], indent=2))
        return []
    if style == "chat":
        return []
    if kind == Kind.TOOL_CALL_REQUEST:
        args = event.get("arguments") or {}
        if event.get("name") == PROPOSE_COMPACTION:
            return _proposal(args)
        shown = json.dumps(args, ensure_ascii=False)
        shown = shown if style == "full" else _clip(shown, 100)
        return [f"[tool] {untrusted_field(event.get('name'))} {untrusted_field(shown)}"]
    if kind == Kind.TOOL_CALL_RESPONSE:
        name = untrusted_field(names.get(str(event.get("id")), "tool"))
        label = "error" if event.get("is_error") else "result"
        text = str(event.get("content", ""))
        if style == "full" or name == PROPOSE_COMPACTION:
            return _block(f"[{label}] {name}: ", text)
        return _preview(f"[{label}] {name}: ", text)
    if kind == Kind.INQUIRY_REQUEST and style == "full":
        return _block("[inquiry] ", str((event.get("question") or {}).get("text", "")))
    return []


def transcript(
    events: Sequence[Event],
    style: str = "brief",
    headers: Sequence[str] | None = None,
    keep: set[int] | None = None,
    markdown: Callable[[str], str] | None = None,
) -> list[str]:
    """Lines of a conversation, a header before each turn.

    ``headers`` gives each turn's header (default `turn N`); ``keep`` limits
    the output to those 0-based turns.  With ``markdown`` (a renderer that
    escapes what it renders), answers are rendered and every other line is
    escaped here: the lines are then ready for a terminal as they are.
    """
    names = {
        str(e.get("id")): str(e.get("name")) for e in events if e.get("type") == Kind.TOOL_CALL_REQUEST
    }
    out: list[str] = []
    current = -1
    for event, turn in zip(events, turns.turn_indices(events), strict=True):
        if keep is not None and turn not in keep:
            continue
        body = _body(event, style, names, markdown)
        if not body:
            continue
        if turn != current:
            current = turn
            header = headers[turn] if headers and turn < len(headers) else f"turn {turn + 1}"
            when = untrusted_field(str(event.get("timestamp", ""))[:16].replace("T", " "))
            if out:
                out.append("")
            line = f"--- {header} ({when}) ---"
            out.append(escape_untrusted(line) if markdown else line)
        out += body
    out.append("")
    return out


def _body(
    event: Event, style: str, names: dict[str, str], markdown: Callable[[str], str] | None
) -> list[str]:
    if markdown is None:
        return event_lines(event, style, names)
    if event.get("type") == Kind.CHAT_RESPONSE and "message" in event and style != "user":
        return (markdown(str(event["message"])).splitlines() or [""]) + _cut_off(event)
    return [escape_untrusted(line) for line in event_lines(event, style, names)]
