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
- a ``/rewind`` (a prompt under the parent of an earlier prompt, not going on
  from the last record) opens a branch of its own (``rewind``);
- anything else (``isMeta``, ``progress``, ``system``, ``file-history-snapshot``,
  ``queue-operation``, ``summary``, types jp does not know) is a kept record.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from gitstore import Event
from porcelain.jpformat.rewind import Fork, Tree
from porcelain.jpformat.sessionmap import (
    INDEX_KEY,
    RECORD_TYPE,
    Builder,
    State,
    arguments_of,
    images_left_out,
    images_of,
    message_text,
    text_of,
)

TOOL = "claude-code"
# what Claude Code writes as a "user" text that nobody typed (slash commands, shell echoes,
# hooks); a <task-notification> (a background task's report) is sent to its model, so it is a
# request here too
_ECHO = re.compile(r"^\s*<(command-|local-command-|bash-|system-reminder|user-prompt-submit-hook)")

_INTERRUPTED = "[Request interrupted by user"  # Claude Code's note of an Esc, as a text block


@dataclass(frozen=True)
class Mapped:
    groups: list[list[Event]]  # one per record, in order
    session: str | None  # the records' ``sessionId``
    agent: str | None  # the records' ``agentId`` (a subagent stream)
    branch_of: list[int] = field(default_factory=list)  # each record's branch (0: the first)
    forks: list[Fork] = field(default_factory=list)  # branch n (a rewind) is forks[n - 1]


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
    """The events of each record, and the branch it is on (a rewind opens one, which
    goes on from the state of its parent branch at the record it went back to; the
    first event of a rewind branch's record notes the record's place in the file)."""
    builders = [Builder()]
    states: dict[int, State] = {}  # record index -> its branch's state after it
    tree = Tree()
    groups, branch_of = [], []
    for index, record in enumerate(records):
        typed = _typed(record)
        branch = tree.place(record, index, typed is not None)
        if branch == len(builders):
            builders.append(Builder.resumed(states[tree.forks[-1].at]))
        builder = builders[branch]
        builder.begin(record)
        _map(builder, record, typed)
        if typed is not None:
            tree.prompt(record)
        produced = any(e.get("type") != RECORD_TYPE for e in builder.group)
        tree.placed(record, index, branch, produced)
        group = builder.finish(record)
        if branch:
            first = group[0]
            first["metadata"] = {**(first.get("metadata") or {}), INDEX_KEY: index}
        if isinstance(record.get("uuid"), str):
            states[index] = builder.snapshot()
        groups.append(group)
        branch_of.append(branch)
    session, agent = identity(records)
    return Mapped(groups, session, agent, branch_of, tree.forks)


def _typed(record: dict[str, Any]) -> str | None:
    """The text of a typed prompt (else None): a ``user`` record, not meta, not a
    compaction summary, whose text is not one of Claude Code's own echoes."""
    message = record.get("message")
    if record.get("type") != "user" or not isinstance(message, dict):
        return None
    if record.get("isCompactSummary") or record.get("isMeta"):
        return None
    content = message.get("content")
    if isinstance(content, str):
        return content if content.strip() and not _ECHO.match(content) else None
    if not isinstance(content, list):
        return None
    texts = [
        b["text"]
        for b in content
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]
    typed = "\n\n".join(t for t in texts if t.strip())
    if typed and not _ECHO.match(typed) and not typed.startswith(_INTERRUPTED):
        return typed
    if not typed and images_of(content):
        return ""  # a prompt of images alone
    return None


def _map(builder: Builder, record: dict[str, Any], typed: str | None) -> None:
    kind = record.get("type")
    message = record.get("message")
    if not isinstance(message, dict):
        return
    content = message.get("content")
    if kind == "user":
        if record.get("isCompactSummary"):
            builder.compaction(message_text(content))
        elif not record.get("isMeta"):
            _results(builder, content)
            if typed is not None:
                left = images_left_out(content)
                text = f"{typed}\n\n{left}" if typed and left else typed or left
                builder.request(text, images_of(content))
    elif kind == "assistant":
        _assistant(builder, content)


def _results(builder: Builder, content: Any) -> None:
    """The tool results of a user record."""
    if not isinstance(content, list):
        return
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            call = block.get("tool_use_id")
            if isinstance(call, str) and call in builder.open_calls:
                images, left = builder.result_images(block.get("content"))
                text = text_of(block.get("content"))
                text = f"{text}\n{left}" if text and left else text or left
                builder.result(call, text, block.get("is_error") is True, images)


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
