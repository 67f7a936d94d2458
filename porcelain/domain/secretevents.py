"""Secrets in a conversation's events: every string of an event is scanned (pure).

An event is JSON; its text lives in many fields (a request's ``content``, an
answer's ``message`` and ``reasoning``, a tool call's ``arguments``, a result's
``content``, attachments and imported source records in ``metadata``).  Rather
than list them, ``event_findings`` walks every string of the event, so a field
added later is scanned too.  A located finding says where: the conversation,
the 1-based turn (0 before the first), the event's index in the chain, its type,
the JSON path of the string and the offset in it.  ``redact_event`` gives the
event back with each finding replaced; ``AllowList`` is the user's exceptions.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from porcelain.domain.secretscan import Finding, applicable, redact, scan

# the keys of an event that are jp's own bookkeeping, never user text
_SKIPPED = frozenset({"type", "timestamp", "id", "is_error"})


@dataclass(frozen=True)
class Located:
    """A finding and where it is."""

    conversation: str
    turn: int
    event: int
    event_type: str
    path: str
    finding: Finding

    @property
    def kind(self) -> str:
        return self.finding.kind

    def as_json(self) -> dict[str, Any]:
        f = self.finding
        return {
            "conversation": self.conversation, "turn": self.turn, "event": self.event,
            "event_type": self.event_type, "path": self.path, "kind": f.kind,
            "offset": f.offset, "length": f.length, "preview": f.preview, "hash": f.digest,
        }  # fmt: skip


@dataclass(frozen=True)
class AllowList:
    """What the user said is no secret (``[secrets.allow]`` of the user's own file)."""

    kinds: frozenset[str] = frozenset()
    hashes: frozenset[str] = frozenset()
    conversations: frozenset[str] = frozenset()

    def permits(self, finding: Finding, conversation: str | None = None) -> bool:
        return (
            finding.kind in self.kinds
            or finding.digest in self.hashes
            or (conversation is not None and conversation in self.conversations)
        )

    @classmethod
    def of(cls, table: Any) -> AllowList:
        """From the ``secrets.allow`` table (lists of strings); anything else is ignored
        by the caller's validation, here it gives an empty list."""
        if not isinstance(table, dict):
            return cls()

        def strings(key: str) -> frozenset[str]:
            got = table.get(key)
            return frozenset(v for v in got if isinstance(v, str)) if isinstance(got, list) else frozenset()

        return cls(strings("kinds"), strings("hashes"), strings("conversations"))


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            if not path and key in _SKIPPED:
                continue
            yield from _strings(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _strings(item, f"{path}[{i}]")


def _leaves(event: dict[str, Any]) -> list[str]:
    """The event's strings, without their paths (the common case: no finding)."""
    out: list[str] = []
    stack: list[Any] = [v for k, v in event.items() if k not in _SKIPPED]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return out


def event_findings(event: dict[str, Any]) -> list[tuple[str, Finding]]:
    """Every finding in the event's strings, with the JSON path of each string (the
    rules that can match are chosen once, over all of them; paths are made only for
    an event that has a finding)."""
    leaves = _leaves(event)
    rules = applicable("\x00".join(leaves))
    if not rules or not any(scan(text, rules) for text in leaves):
        return []
    return [(path, f) for path, text in _strings(event, "") for f in scan(text, rules)]


def conversation_findings(
    conversation: str,
    events: Sequence[dict[str, Any]],
    allow: AllowList | None = None,
    first_index: int = 0,
    first_turn: int = 0,
) -> list[Located]:
    """The findings of a run of a conversation's events (the whole chain, or what a
    remote lacks: ``first_index`` and ``first_turn`` say where the run begins)."""
    allow = allow or AllowList()
    if conversation in allow.conversations:
        return []
    out: list[Located] = []
    turn = first_turn
    for i, event in enumerate(events):
        if event.get("type") == "turn_start":
            turn += 1
        for path, f in event_findings(event):
            if not allow.permits(f, conversation):
                out.append(Located(conversation, turn, first_index + i, str(event.get("type")), path, f))
    return out


def _note_values(text: str) -> list[tuple[str, dict[str, Any] | None, dict[str, Any]]]:
    """Each non-blank line of a note: (the line; its metadata item, or None for any
    other line; what is scanned of it)."""
    out: list[tuple[str, dict[str, Any] | None, dict[str, Any]]] = []
    for line in text.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            item = None
        if isinstance(item, dict) and isinstance(item.get("k"), str):
            out.append((line, item, {"meta": {item["k"]: item.get("v")}}))
        elif line.strip():
            out.append((line, None, {"note": line}))
    return out


def note_findings(conversation: str, text: str, allow: AllowList | None = None) -> list[Located]:
    """The findings of a conversation's note (metadata lines ``{"k": key, "v": value}``:
    every value, its key in the path, ``meta.title`` or ``meta.labels[0]``; any other
    line whole, as ``note``), past values included: a push sends every line."""
    return conversation_findings(conversation, [v for _, _, v in _note_values(text)], allow)


def redact_note(text: str, findings: Sequence[Located]) -> str:
    """The note with each of ``findings`` (``note_findings`` of it) replaced; every
    other line, and every other field of a line, as it was."""
    by_line: dict[int, list[Located]] = {}
    for f in findings:
        by_line.setdefault(f.event, []).append(f)
    lines: list[str] = []
    for i, (line, item, scanned) in enumerate(_note_values(text)):
        found = by_line.get(i)
        if not found:
            lines.append(line)
        elif item is None:
            lines.append(redact_event(scanned, found)["note"])
        else:
            value = redact_event(scanned, found)["meta"][item["k"]]
            lines.append(json.dumps({**item, "v": value}, sort_keys=True))
    return "".join(line + "\n" for line in lines)


def _redacted(value: Any, path: str, chosen: dict[str, list[Finding]]) -> Any:
    if isinstance(value, str):
        found = chosen.get(path)
        return redact(value, found) if found else value
    if isinstance(value, dict):
        return {k: _redacted(v, f"{path}.{k}" if path else str(k), chosen) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(v, f"{path}[{i}]", chosen) for i, v in enumerate(value)]
    return value


def redact_event(event: dict[str, Any], findings: Iterable[Located]) -> dict[str, Any]:
    """The event with each of its findings (those of ``conversation_findings`` for it)
    replaced by its placeholder; the other fields as they were."""
    chosen: dict[str, list[Finding]] = {}
    for loc in findings:
        chosen.setdefault(loc.path, []).append(loc.finding)
    if not chosen:
        return event
    return dict(_redacted(event, "", chosen))


def redact_text(text: str, allow: AllowList | None = None, conversation: str | None = None) -> str:
    """``text`` with every finding the allow-list does not permit replaced."""
    allow = allow or AllowList()
    found = [f for f in scan(text) if not allow.permits(f, conversation)]
    return redact(text, found) if found else text


def redact_value(
    value: Any, allow: AllowList | None = None, conversation: str | None = None
) -> tuple[Any, Counter[str]]:
    """Every string of a JSON value (a dict's keys included) with its findings
    replaced (those ``allow`` permits kept), and the kinds replaced.  For what a
    page shows of stored text (titles, labels, summaries, the commands the log
    recorded) and for a session's records written out (``export --redact``)."""
    found: Counter[str] = Counter()

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            hits = [f for f in scan(item) if allow is None or not allow.permits(f, conversation)]
            found.update(f.kind for f in hits)
            return redact(item, hits) if hits else item
        if isinstance(item, dict):
            return {walk(k) if isinstance(k, str) else k: walk(v) for k, v in item.items()}
        if isinstance(item, list | tuple):
            kept = [walk(v) for v in item]
            return tuple(kept) if isinstance(item, tuple) else kept
        return item

    return walk(value), found
