"""The provider's token counts a chain of events holds, one entry per API call.

Three sources, each read as its tool accounts for it (docs/usage.md):

- an imported Claude Code record (kept whole in ``metadata.source_record`` or a
  ``source_record`` event) that carries ``message.usage`` with numeric
  ``input_tokens`` and ``output_tokens`` and a valid ``timestamp``, whatever its
  type, as ccusage reads them.  Its key is ``message.id`` + ``requestId`` (one
  API message split over several records counts once: the first record read);
  without both, the session and the record's ``uuid`` (the same record imported
  twice counts once), else the event's commit;
- an imported Codex ``token_count`` record: the growth of its
  ``total_token_usage`` since the last one of the session (Codex repeats a count
  unchanged), keyed by the session and that total;
- jp's own answers and summaries: ``metadata.usage`` (an answer's) or
  ``metadata.summary_usage`` (a compaction's summary, a review's opening draft)
  on an event jp wrote (not an imported one), keyed by the event's commit; its
  model is the event's
  ``metadata.model``, else the model the conversation recorded (``config_delta``)
  before it.

An entry is a JSON-able list (``Entry``): key, time (seconds since the epoch),
model, tool, session, project, then input, output, cache creation and cache
read tokens.  Counts come from the store, so anything that is not an integer
from 0 to ``MAX_COUNT`` makes the record count for nothing.  Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gitstore import Event, parse_time
from porcelain.domain.titles import source_record
from porcelain.domain.token_usage import FIELDS, MAX_COUNT, SUMMARY_KEY

Entry = list[Any]  # [key, time, model, tool, session, project, in, out, cache_w, cache_r]
KEY, TIME, MODEL, TOOL, SESSION, PROJECT = range(6)
COUNTS = slice(6, 10)
MAX_NAME = 200  # a model, session or project name as an entry keeps it


def _name(value: Any) -> str | None:
    return value[:MAX_NAME] if isinstance(value, str) and value else None


def _count(value: Any) -> int | None:
    """A token count as the store may hold it: an int in 0..MAX_COUNT, else None."""
    return value if type(value) is int and 0 <= value <= MAX_COUNT else None


def _seconds(stamp: Any) -> float | None:
    if not isinstance(stamp, str) or len(stamp) > 64:
        return None
    try:
        return parse_time(stamp).timestamp()
    except (ValueError, OverflowError):
        return None


class Reader:
    """Entries of one chain, event by event (``entries`` runs it)."""

    def __init__(self, origin: dict[str, Any]) -> None:
        self.tool = origin.get("tool") if origin.get("tool") in ("claude-code", "codex") else None
        self.session = _name(origin.get("session"))
        path = origin.get("path")
        self.project = _name(path.split("/")[0]) if isinstance(path, str) and "/" in path else None
        self.model: str | None = None  # jp's: the conversation's; codex: the turn context's
        self.codex_before = [0, 0, 0, 0]  # the session's last total: input, cached, output, all
        self.out: list[Entry] = []
        self.earliest: float | None = None  # of any kept record (ccusage orders files by it)

    def event(self, event: Event, commit: str) -> None:
        record = source_record(event)
        if record is not None:
            when = _seconds(record.get("timestamp"))
            if when is not None and (self.earliest is None or when < self.earliest):
                self.earliest = when
            if self.tool == "codex":
                self._codex(record)
            else:
                self._claude(record, commit)
            return
        kind = event.get("type")
        if kind == "config_delta":
            model = _delta_model(event.get("delta"))
            if model is not None:
                self.model = model
        meta = event.get("metadata")
        if not isinstance(meta, dict):
            return
        for key in ("usage", SUMMARY_KEY):  # an answer's; a compaction's or a review draft's
            usage = meta.get(key)
            if isinstance(usage, dict):
                self._jp(event, usage, f"{commit}/{key}")

    def _claude(self, record: dict[str, Any], commit: str) -> None:
        message = record.get("message")
        usage = message.get("usage") if isinstance(message, dict) else None
        when = _seconds(record.get("timestamp"))
        if not isinstance(usage, dict) or when is None:
            return
        if not all(isinstance(usage.get(k), int | float) for k in FIELDS[:2]):
            return  # not a usage record to ccusage either
        counts = [_count(usage.get(k, 0)) for k in FIELDS]
        if any(c is None for c in counts):
            return
        assert isinstance(message, dict)
        msg, req = _name(message.get("id")), _name(record.get("requestId"))
        session = _name(record.get("sessionId")) or self.session
        uuid = _name(record.get("uuid"))
        if msg and req:
            key = f"m:{msg}:{req}"
        elif uuid:
            key = f"u:{session}:{uuid}"
        else:
            key = f"c:{commit}"
        model = _name(message.get("model"))
        if model and usage.get("speed") == "fast":
            model += "-fast"
        entry = [key, when, model, "claude-code", session, self.project, *counts]
        self.out.append(entry)

    def _codex(self, record: dict[str, Any]) -> None:
        payload = record.get("payload")
        if not isinstance(payload, dict):
            return
        kind = record.get("type")
        if kind == "session_meta":
            self.session = _name(payload.get("id")) or self.session
            cwd = _name(payload.get("cwd"))
            self.project = cwd or self.project
        elif kind == "turn_context":
            self.model = _name(payload.get("model")) or self.model
        elif kind == "event_msg" and payload.get("type") == "token_count":
            self._token_count(record, payload)

    def _token_count(self, record: dict[str, Any], payload: dict[str, Any]) -> None:
        info = payload.get("info")
        total = info.get("total_token_usage") if isinstance(info, dict) else None
        when = _seconds(record.get("timestamp"))
        if not isinstance(total, dict) or when is None:
            return
        names = ("input_tokens", "cached_input_tokens", "output_tokens", "total_tokens")
        counts = [_count(total.get(k, 0)) for k in names]
        if any(c is None for c in counts):
            return
        now = [int(c or 0) for c in counts]
        if now[3] <= self.codex_before[3]:
            return  # the same count again (Codex repeats it), or one that went back
        grown = [max(0, a - b) for a, b in zip(now, self.codex_before, strict=True)]
        self.codex_before = now
        cached = min(grown[1], grown[0])
        entry = [
            f"x:{self.session}:{now[3]}",
            when,
            self.model,
            "codex",
            self.session,
            self.project,
            grown[0] - cached,  # OpenAI's input includes the cached part
            grown[2],
            0,
            cached,
        ]
        self.out.append(entry)

    def _jp(self, event: Event, usage: dict[str, Any], where: str) -> None:
        when = _seconds(event.get("timestamp"))
        if when is None:
            return
        counts = [_count(usage.get(k, 0)) for k in FIELDS]
        if any(c is None for c in counts) or not any(counts):
            return
        meta = event.get("metadata")
        model = _name(meta.get("model")) if isinstance(meta, dict) else None
        self.out.append([f"c:{where}", when, model or self.model, "jp", None, None, *counts])


def _delta_model(delta: Any) -> str | None:
    if not isinstance(delta, dict):
        return None
    assistant = delta.get("assistant")
    model = assistant.get("model") if isinstance(assistant, dict) else None
    return _name(model.get("id")) if isinstance(model, dict) else None


def read(
    events: Sequence[Event], commits: Sequence[str], origin: dict[str, Any] | None = None
) -> Reader:
    """A chain read: its ``out`` entries, in order, and the ``earliest`` time of a record
    it keeps.  ``origin``: the conversation's ``imported_from`` (tool, session, path),
    None for jp's own."""
    reader = Reader(origin or {})
    for event, commit in zip(events, commits, strict=False):
        reader.event(event, commit)
    return reader


def entries(
    events: Sequence[Event], commits: Sequence[str], origin: dict[str, Any] | None = None
) -> list[Entry]:
    """The usage entries of a chain, in its order (``read``)."""
    return read(events, commits, origin).out


def valid(entries: Any) -> bool:
    """Whether kept entries (read back from the cache, which anyone can write) all have
    the shape: a few passes over the whole list, not a call per entry (10,000
    conversations keep about 50,000 entries)."""
    if type(entries) is not list or not all(type(e) is list and len(e) == 10 for e in entries):
        return False
    counts = [c for e in entries for c in e[COUNTS]]
    names = {type(n) for e in entries for n in e[MODEL : COUNTS.start]}
    return (
        {type(e[KEY]) for e in entries} <= {str}
        and {type(e[TIME]) for e in entries} <= {int, float}
        and names <= {str, type(None)}
        and {type(c) for c in counts} <= {int}
        and (not counts or (min(counts) >= 0 and max(counts) <= MAX_COUNT))
    )
