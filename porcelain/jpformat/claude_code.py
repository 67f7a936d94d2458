"""Claude Code session files (``~/.claude/projects/<project>/<session>.jsonl``) as jp events.

Pure: records in, one group of events per record out (``sessionmap``).

- a typed prompt (a ``user`` record whose content is text, not ``isMeta``, not
  one of Claude Code's own command or hook echoes) opens a turn and is a
  ``chat_request``;
- an ``assistant`` record's ``text``, ``thinking`` and ``tool_use`` blocks are
  answers, reasoning and tool call requests; one API message that Claude Code
  splits over several lines (same ``message.id``) is thus one run of events of
  one answer;
- a ``tool_result`` block is the response to its call (when that call is open
  in the turn);
- a ``compact_boundary`` with the ``isCompactSummary`` record after it is a
  jp compaction over every turn before it, carrying the summary verbatim;
- anything else (``isMeta``, ``progress``, ``system``, ``file-history-snapshot``,
  ``queue-operation``, ``summary``, types jp does not know) is a kept record.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gitstore import Event
from porcelain.jpformat.rewind import NOTE, Tree
from porcelain.jpformat.sessionmap import RECORD_TYPE, Builder, arguments_of, message_text, text_of

TOOL = "claude-code"
# what Claude Code writes as a "user" text that nobody typed (slash commands, shell echoes, hooks)
_ECHO = re.compile(
    r"^\s*<(command-|local-command-|bash-|system-reminder|user-prompt-submit-hook|task-notification)"
)

_INTERRUPTED = "[Request interrupted by user"  # Claude Code's note of an Esc, as a text block


@dataclass(frozen=True)
class Mapped:
    groups: list[list[Event]]  # one per record, in order
    session: str | None  # the records' ``sessionId``
    agent: str | None  # the records' ``agentId`` (a subagent stream)


def _string(value: Any, limit: int = 200) -> str | None:
    return value[:limit] if isinstance(value, str) and value else None


def identity(records: list[dict[str, Any]]) -> tuple[str | None, str | None]:
    """The session id and agent id the records name (the first of each)."""
    session = next(
        (_string(r.get("sessionId")) for r in records if _string(r.get("sessionId"))), None
    )
    agent = next((_string(r.get("agentId")) for r in records if _string(r.get("agentId"))), None)
    return session, agent


def map_records(records: list[dict[str, Any]]) -> Mapped:
    builder = Builder()
    tree = Tree()
    groups = []
    for record in records:
        builder.begin(record)
        tree.note(record)
        _map(builder, tree, record)
        if any(e.get("type") != RECORD_TYPE for e in builder.group):
            tree.produced(record)
        groups.append(builder.finish(record))
    session, agent = identity(records)
    return Mapped(groups, session, agent)


def _map(builder: Builder, tree: Tree, record: dict[str, Any]) -> None:
    kind = record.get("type")
    message = record.get("message")
    if not isinstance(message, dict):
        return
    content = message.get("content")
    if kind == "user":
        if record.get("isCompactSummary"):
            builder.compaction(message_text(content))
        elif not record.get("isMeta"):
            typed = _user(builder, content)
            if typed:
                _prompt(builder, tree, record, typed)
    elif kind == "assistant":
        _assistant(builder, content)


def _prompt(builder: Builder, tree: Tree, record: dict[str, Any], text: str) -> None:
    """A typed prompt opens a turn; one that rewinds first covers the abandoned turns."""
    start = tree.abandoned_from(record)
    if start is not None and start <= builder.turn:
        builder.abandon(start, NOTE)
    builder.request(text)
    tree.prompted(record, builder.turn)


def _user(builder: Builder, content: Any) -> str | None:
    """Tool results of a user record; returns its typed prompt's text, if it has one."""
    if isinstance(content, str):
        return content if content.strip() and not _ECHO.match(content) else None
    if not isinstance(content, list):
        return None
    texts: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_result":
            call = block.get("tool_use_id")
            if isinstance(call, str):
                builder.result(call, text_of(block.get("content")), block.get("is_error") is True)
        elif block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
    typed = "\n\n".join(t for t in texts if t.strip())
    if typed and not _ECHO.match(typed) and not typed.startswith(_INTERRUPTED):
        return typed
    return None


def _assistant(builder: Builder, content: Any) -> None:
    if isinstance(content, str):
        if content.strip():
            builder.answer(content)
        return
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str) and block["text"].strip():
            builder.answer(block["text"])
        elif kind == "thinking" and isinstance(block.get("thinking"), str) and block["thinking"]:
            builder.reasoning(block["thinking"])
        elif kind == "tool_use" and isinstance(block.get("id"), str):
            name = block.get("name") if isinstance(block.get("name"), str) else "tool"
            builder.call(block["id"], str(name), arguments_of(block.get("input")))
