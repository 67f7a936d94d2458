"""Read back a conversation that was sent as a transcript in one user message.

A summarizer may send its range as text (so the request declares no tools):
``<conversation>`` … ``</conversation>`` holding entries separated by blank
lines, each opening with a speaker label — ``USER:``, ``ASSISTANT:``,
``ASSISTANT (thinking):``, ``ASSISTANT (data):``, ``TOOL CALL name:``,
``TOOL RESULT name:``, ``TOOL ERROR name:`` — followed by the instruction.
The offline summarizer turns such a transcript back into events, so that it
reads the same conversation either way.
"""

from __future__ import annotations

import json
import re
from typing import Any

from gitstore import Event, Kind

_BODY = re.compile(r"<conversation>\n?(.*?)\n?</conversation>", re.DOTALL)
_LABEL = r"USER|ASSISTANT(?: \((?:thinking|data)\))?|TOOL (?:CALL|RESULT|ERROR) [^\s:]+"
_ENTRY = re.compile(r"\n\n(?=(?:" + _LABEL + r"):)")
_HEAD = re.compile(r"^(" + _LABEL + r"):[ \n]?", re.DOTALL)
T = "1970-01-01T00:00:00.000000Z"  # entries carry no time; nothing reads it


def _arguments(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {"input": text}
    return value if isinstance(value, dict) else {"input": value}


def _event(label: str, text: str, position: int) -> Event | None:
    if label == "USER":
        return {"timestamp": T, "type": "chat_request", "content": text}
    if label in ("ASSISTANT", "ASSISTANT (data)"):
        return {"timestamp": T, "type": "chat_response", "message": text}
    if label == "ASSISTANT (thinking)":
        return {"timestamp": T, "type": "chat_response", "reasoning": text}
    kind, _, name = label.removeprefix("TOOL ").partition(" ")
    call_id = f"transcript_{position}"
    if kind == "CALL":
        arguments = _arguments(text)
        return {
            "timestamp": T,
            "type": "tool_call_request",
            "id": call_id,
            "name": name,
            "arguments": arguments,
        }
    return {
        "timestamp": T,
        "type": "tool_call_response",
        "id": call_id,
        "content": text,
        "is_error": kind == "ERROR",
    }


def parse_transcript(message: str) -> tuple[list[Event], str] | None:
    """(events, the text after the transcript), or None when there is no transcript."""
    found = _BODY.search(message)
    if found is None:
        return None
    events: list[Event] = []
    waiting: dict[str, list[str]] = {}  # tool name -> ids of its calls without a result
    for position, entry in enumerate(_ENTRY.split(found.group(1))):
        head = _HEAD.match(entry)
        if head is None:
            continue
        event = _event(head.group(1), entry[head.end() :].strip(), position)
        if event is None:
            continue
        name = head.group(1).partition(" ")[2].partition(" ")[2]
        if event["type"] == Kind.TOOL_CALL_REQUEST:
            waiting.setdefault(name, []).append(event["id"])
        elif event["type"] == Kind.TOOL_CALL_RESPONSE and waiting.get(name):
            event["id"] = waiting[name].pop(0)  # a result answers its call
        events.append(event)
    return events, message[found.end() :]
