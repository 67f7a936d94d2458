"""The one rule for what a conversation is called, and the facts of an imported
session's own records that feed it (the tool's summary, the working folder).

A conversation is shown by its explicit title, else by the summary its tool
wrote of it (a Claude Code ``summary`` record whose ``leafUuid`` is one of this
session's records), else by its first prompt, cut.  `ls`, `show`, `use` and
every page of `jp serve` call ``shown_title``; none of them words it itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gitstore import Event

CUT = 80  # characters of a first prompt or a tool's summary shown as a title
UNTITLED = "(untitled)"
_RECORD = "source_record"  # the event type, and the metadata key, of a kept source record


def shown_title(title: Any, tool_title: Any = None, first_prompt: Any = None) -> str:
    """The explicit ``title`` as it is, else ``tool_title``, else ``first_prompt``,
    cut to one line; else "(untitled)"."""
    if isinstance(title, str) and title.strip():
        return title
    for value in (tool_title, first_prompt):
        if isinstance(value, str) and value.strip():
            return cut(value)
    return UNTITLED


def cut(text: str, limit: int = CUT) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1].rstrip() + "…"


def source_record(event: Event) -> dict[str, Any] | None:
    """The record of another tool's session an event was made from (None: none)."""
    if event.get("type") == _RECORD:
        record = event.get("record")
    else:
        meta = event.get("metadata")
        record = meta.get(_RECORD) if isinstance(meta, dict) else None
    return record if isinstance(record, dict) else None


def session_facts(events: Iterable[Event]) -> dict[str, Any]:
    """``tool_title``: the latest summary record about this session's own records;
    ``project``: the working folder its first record names (Claude Code's ``cwd``,
    Codex's ``payload.cwd``); ``agents``: each subagent the session started, by
    its id, with its type (the ``subagent_type`` of the call whose result names
    it).  None and {} for a conversation jp wrote."""
    uuids: set[str] = set()
    summaries: list[tuple[str, str]] = []
    project: str | None = None
    calls: dict[str, str] = {}  # tool_use id -> subagent_type
    started: dict[str, str] = {}  # agent id -> tool_use id
    for event in events:
        record = source_record(event)
        if record is None:
            continue
        kind = record.get("type")
        if kind == "summary":
            text, leaf = record.get("summary"), record.get("leafUuid")
            if isinstance(text, str) and text.strip() and isinstance(leaf, str):
                summaries.append((leaf, text))
            continue
        uuid = record.get("uuid")
        if isinstance(uuid, str):
            uuids.add(uuid)
        if project is None:
            project = _folder(record)
        _agents(record, calls, started)
    own = [text for leaf, text in summaries if leaf in uuids]
    agents = {a: calls[u] for a, u in started.items() if u in calls}
    return {"tool_title": cut(own[-1], 200) if own else None, "project": project, "agents": agents}


def agent_type(agent: str, agents: dict[str, str]) -> str | None:
    """A subagent's type: as its session's call named it, else Claude Code's own
    compaction agent (``acompact-...``), else unknown (None)."""
    found = agents.get(agent) if isinstance(agents, dict) else None
    if isinstance(found, str):
        return found
    return "compact" if agent.startswith("acompact") else None


def _agents(record: dict[str, Any], calls: dict[str, str], started: dict[str, str]) -> None:
    """Note the subagent calls (Claude Code's Task or Agent tool) and the results
    that name the agent each started."""
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return
    result = record.get("toolUseResult")
    agent = result.get("agentId") if isinstance(result, dict) else None
    for block in content:
        if not isinstance(block, dict):
            continue
        given = block.get("input")
        kind = given.get("subagent_type") if isinstance(given, dict) else None
        if block.get("type") == "tool_use" and isinstance(kind, str):
            calls[str(block.get("id"))] = kind[:100]
        elif block.get("type") == "tool_result" and isinstance(agent, str):
            started[agent[:100]] = str(block.get("tool_use_id"))


def _folder(record: dict[str, Any]) -> str | None:
    cwd = record.get("cwd")
    payload = record.get("payload")
    if not isinstance(cwd, str) and isinstance(payload, dict):
        cwd = payload.get("cwd")
    return cwd[:500] if isinstance(cwd, str) and cwd.startswith("/") else None
