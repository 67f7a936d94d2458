"""Codex rollouts (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``) as jp events.

Pure: ``{timestamp, type, payload}`` records in, one group of events per record
out (``sessionmap``).

- ``response_item`` messages: the user's are requests (the context Codex adds,
  such as ``<environment_context>`` or AGENTS.md, is kept as a record), the
  assistant's are answers; ``developer`` messages are kept records;
- the same text as an ``event_msg`` (``user_message``, ``agent_message``,
  ``agent_reasoning``) and as a ``response_item`` is one event: whichever comes
  first, the other is a kept record;
- ``reasoning``: its summary text is reasoning; ``encrypted_content`` stays
  opaque, inside the kept record;
- ``function_call`` / ``custom_tool_call`` / ``local_shell_call`` and their
  outputs are tool call requests and responses; a ``web_search_call`` is a
  call with its result in one;
- ``turn_context`` names the model of the answers after it (``metadata.model``);
- ``compacted`` is a jp compaction over the turns before it, with its summary;
- anything else is a kept record.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from gitstore import Event
from porcelain.jpformat.sessionmap import MAX_NAME, Builder, arguments_of, message_text, text_of

TOOL = "codex"
_CONTEXT = re.compile(
    r"^\s*(<environment_context|<user_instructions|<permissions|<INSTRUCTIONS|<user_shell_command"
    r"|<turn_aborted|# AGENTS\.md|<skill)"
)


@dataclass(frozen=True)
class Mapped:
    groups: list[list[Event]]
    session: str | None  # ``session_meta.payload.id``
    agent: str | None = None


@dataclass
class _State:
    model: str | None = None
    # texts stored from one kind of record, waiting for their twin from the other
    waiting: dict[str, Counter[tuple[str, str]]] = field(
        default_factory=lambda: {"event": Counter(), "item": Counter()}
    )
    searches: int = 0


def session_of(records: list[dict[str, Any]]) -> str | None:
    for record in records:
        payload = record.get("payload")
        if record.get("type") == "session_meta" and isinstance(payload, dict):
            found = payload.get("id")
            if isinstance(found, str) and found:
                return found[:200]
    return None


def map_records(records: list[dict[str, Any]]) -> Mapped:
    builder = Builder()
    state = _State()
    groups = []
    for record in records:
        builder.begin(record)
        payload = record.get("payload")
        if isinstance(payload, dict):
            _map(builder, state, str(record.get("type")), payload)
        groups.append(builder.finish(record))
    return Mapped(groups, session_of(records))


def _map(builder: Builder, state: _State, kind: str, payload: dict[str, Any]) -> None:
    if kind == "response_item":
        _item(builder, state, payload)
    elif kind == "event_msg":
        _event(builder, state, payload)
    elif kind == "turn_context":
        model = payload.get("model")
        state.model = model[:MAX_NAME] if isinstance(model, str) and model else state.model
    elif kind == "compacted":
        message = payload.get("message")
        builder.compaction(message if isinstance(message, str) else "")


def _once(builder: Builder, state: _State, source: str, role: str, text: str) -> None:
    """``text`` said by ``role``, stored unless its twin from the other source was."""
    other = "item" if source == "event" else "event"
    key = (role, text.strip())
    if state.waiting[other][key]:
        state.waiting[other][key] -= 1
        return
    state.waiting[source][key] += 1
    if role == "user":
        builder.request(text)
    elif role == "assistant":
        builder.answer(text, {"model": state.model} if state.model else None)
    else:
        builder.reasoning(text)


def _item(builder: Builder, state: _State, payload: dict[str, Any]) -> None:
    kind = payload.get("type")
    if kind == "message":
        role = payload.get("role")
        text = message_text(payload.get("content"))
        if (
            role in ("user", "assistant")
            and text.strip()
            and not (role == "user" and _CONTEXT.match(text))
        ):
            _once(builder, state, "item", str(role), text)
    elif kind == "reasoning":
        text = message_text(payload.get("summary"))
        if text.strip():
            _once(builder, state, "item", "reasoning", text)
    elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
        _call(builder, kind, payload)
    elif kind in ("function_call_output", "custom_tool_call_output"):
        call = payload.get("call_id")
        if isinstance(call, str):
            content, failed = _output(payload.get("output"))
            builder.result(call, content, failed)
    elif kind == "web_search_call":
        state.searches += 1
        call = (
            payload.get("id")
            if isinstance(payload.get("id"), str)
            else f"web_search_{state.searches}"
        )
        action = payload.get("action")
        if builder.call(str(call), "web_search", arguments_of(action)):
            status = payload.get("status")
            builder.result(str(call), json.dumps({"status": status}), status == "failed")


def _call(builder: Builder, kind: Any, payload: dict[str, Any]) -> None:
    call = payload.get("call_id") or payload.get("id")
    if not isinstance(call, str):
        return
    name = payload.get("name") if isinstance(payload.get("name"), str) else "local_shell"
    if kind == "function_call":
        raw = payload.get("arguments")
        try:
            arguments = arguments_of(json.loads(raw) if isinstance(raw, str) else raw)
        except ValueError:
            arguments = arguments_of(raw)
    elif kind == "custom_tool_call":
        arguments = arguments_of(payload.get("input"))
    else:
        arguments = arguments_of(payload.get("action"))
    builder.call(call, str(name), arguments)


def _output(output: Any) -> tuple[str, bool]:
    """A tool output's text, and whether it says it failed."""
    if isinstance(output, dict):
        failed = output.get("success") is False
        return text_of(output.get("content", output)), failed
    return text_of(output), False


def _event(builder: Builder, state: _State, payload: dict[str, Any]) -> None:
    kind = payload.get("type")
    roles = {"user_message": "user", "agent_message": "assistant", "agent_reasoning": "reasoning"}
    text = payload.get("message") if kind != "agent_reasoning" else payload.get("text")
    if kind in roles and isinstance(text, str) and text.strip():
        if kind == "user_message" and _CONTEXT.match(text):
            return
        _once(builder, state, "event", roles[str(kind)], text)
