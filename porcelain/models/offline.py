"""``offline/*``: jp's built-in stand-in for a model.  Not a language model.

Deterministic and network-free, so every command works on a fresh machine and
in tests of the product itself:

- ``task="summary"``: an extractive summary (``offline_summary``);
- a review (the ``propose_compaction`` tool is offered): plain directives in
  the last user message become a proposal (``offline_review``);
- a compacted view (the ``recall`` tool is offered): ``recall turns 3-5`` or
  ``recall "text"`` becomes a call, and its result the answer (``offline_recall``);
- any other chat: an honest note that it is not a language model, quoting the
  request and saying how to configure a real one.

Text streams through ``on_delta`` in small chunks, like a real model's.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from gitstore import Event, Kind
from porcelain.domain.attachments import attachments_of
from porcelain.domain.compaction.coverage import WARNING
from porcelain.domain.media import MEDIA_TYPES, media_of
from porcelain.domain.recall import RECALL
from porcelain.models.base import (
    ModelRequest,
    ModelResponse,
    OnDelta,
    message_event,
    tool_call_event,
)
from porcelain.models.offline_range import follow_range
from porcelain.models.offline_recall import after_recall, answer_to, directive
from porcelain.models.offline_review import (
    PROPOSE,
    describe,
    highest_marker,
    latest_proposal,
    merge,
    parse_directives,
    proposal_calls,
)
from porcelain.models.offline_summary import summarize

CHUNK = 24
IDENTITY = "This is jp's offline model, built into jp. It is not a language model"
ANSWER = f"{IDENTITY}, so it cannot answer."
CONFIGURE = (
    'To talk to a real model, set assistant.model.id = "anthropic/claude-sonnet-4-5" '
    "(or another anthropic/claude-... id) in $XDG_CONFIG_HOME/jp/config.toml or with "
    "--cfg, and export ANTHROPIC_API_KEY."
)
HELP = """\
In a compaction review I follow plain directives, one or more per message:
- turns 4-17 (also: turns 4 to 17, from 4 to 17, start at 4, stop at 17)
- keep the last 3 / keep the first 2 (counted with the [turn N] markers)
- summary: TEXT (replaces the summary) or add: TEXT (adds a sentence); put it last
- no summary
- strip reasoning / keep reasoning
- tools strip | strip-requests | strip-responses | omit | keep"""


def _stream(text: str, on_delta: OnDelta) -> None:
    for start in range(0, len(text), CHUNK):
        on_delta("text", text[start : start + CHUNK])


def _last_request(events: Sequence[Event]) -> str:
    for event in reversed(events):
        if event.get("type") == Kind.CHAT_REQUEST:
            return str(event.get("content") or "")
    return ""


def _unseen(events: Sequence[Event]) -> str:
    """A sentence naming the images and documents of the last request, which it cannot see."""
    last = next((e for e in reversed(events) if e.get("type") == Kind.CHAT_REQUEST), {})
    named = [
        f"{_tail(str(a['source']))} ({a['media_type']}, {a.get('size', 0):,} bytes)"
        for a in attachments_of(last)
        if media_of(a) is not None
    ]
    return f" It cannot see images or documents: {', '.join(named)}." if named else ""


def _tail(name: str, limit: int = 60) -> str:
    """A file name cut from the left, so its last part (the file's own name) stays."""
    line = " ".join(name.split())
    return line if len(line) <= limit else "…" + line[-(limit - 1) :]


def _quote(text: str, limit: int = 80) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _call_id(arguments: dict[str, Any], position: int) -> str:
    raw = json.dumps(arguments, sort_keys=True, ensure_ascii=False) + f"#{position}"
    return "toolu_offline_" + hashlib.sha256(raw.encode()).hexdigest()[:20]


def _reasoning_value(request: ModelRequest) -> Any:
    """``"strip"``, or ``True`` when the tool's schema types ``reasoning`` as boolean."""
    for tool in request.tools:
        if tool.name == PROPOSE:
            spec = (tool.input_schema.get("properties") or {}).get("reasoning") or {}
            kinds = spec.get("type")
            if kinds == "boolean" or (isinstance(kinds, list) and "string" not in kinds):
                return True
    return "strip"


class OfflineModel:
    """``offline/<name>``: every name behaves the same."""

    # it takes images and PDFs, and says it cannot see them (naming each)
    media_types = MEDIA_TYPES

    def __init__(self, name: str = "default") -> None:
        self.name = name

    def check(self) -> None:
        """The offline model needs nothing."""

    def count_tokens(self, request: ModelRequest) -> int | None:
        """No tokenizer: callers estimate."""
        return None

    def respond(self, request: ModelRequest, on_delta: OnDelta) -> ModelResponse:
        if request.task == "summary":
            return self._say(summarize(request.events), on_delta)
        if any(tool.name == PROPOSE for tool in request.tools):
            return self._review(request, on_delta)
        if any(tool.name == RECALL for tool in request.tools):
            recalled = self._recall(request.events, on_delta)
            if recalled is not None:
                return recalled
        return self._chat(request.events, on_delta)

    def _recall(self, events: Sequence[Event], on_delta: OnDelta) -> ModelResponse | None:
        """A `recall ...` directive becomes a call; its result becomes the answer."""
        result = after_recall(events)
        if result is not None:
            return self._say(answer_to(result), on_delta)
        last = events[-1] if events else {}
        args = directive(str(last.get("content") or "")) if last.get("type") == Kind.CHAT_REQUEST else None
        if args is None:
            return None
        text = "Reading the compacted turns back from the store."
        _stream(text, on_delta)
        on_delta("tool", RECALL)
        call = tool_call_event(_call_id(args, len(events)), RECALL, args)
        return ModelResponse(events=[message_event(text), call], stop_reason="tool_use")

    @staticmethod
    def _say(text: str, on_delta: OnDelta, stop_reason: str = "end_turn") -> ModelResponse:
        _stream(text, on_delta)
        return ModelResponse(events=[message_event(text)], stop_reason=stop_reason)

    @staticmethod
    def _chat(events: Sequence[Event], on_delta: OnDelta) -> ModelResponse:
        """A short stored answer; the explanation goes to the person only (stderr), so
        that it never becomes history that later summaries quote."""
        asked = _quote(_last_request(events))
        heard = f"You wrote: “{asked}”.\n" if asked else ""
        on_delta("note", f"{heard}{CONFIGURE}\n")
        return OfflineModel._say(ANSWER + _unseen(events), on_delta)

    def _review(self, request: ModelRequest, on_delta: OnDelta) -> ModelResponse:
        events = request.events
        last = events[-1] if events else {}
        if last.get("type") == Kind.TOOL_CALL_RESPONSE and str(last.get("id")) in proposal_calls(
            events
        ):
            return self._say(self._after_result(last), on_delta)
        found = parse_directives(_last_request(events))
        current = latest_proposal(events)
        if not found.any:
            on_delta("note", f"{IDENTITY}.\n{HELP}\n")
            standing = f" The current proposal: {describe(current)}." if current else ""
            return self._say(f"No directive found in that message.{standing}", on_delta)
        args, notes = merge(
            current,
            found,
            highest=highest_marker(events),
            reasoning_value=_reasoning_value(request),
        )
        merged = args
        args = follow_range(events, current, merged, found)
        if args.get("summary") is not None and args.get("summary") != merged.get("summary"):
            notes.append("wrote the summary again for the new range")
        heard = "; ".join(dict.fromkeys(found.understood))
        extra = "".join(f"\nNote: {note}." for note in dict.fromkeys(notes))
        if "from_turn" not in args or "to_turn" not in args:
            text = f"Understood: {heard}.{extra}\nI still need a range: say `turns A-B`."
            return self._say(text, on_delta)
        text = f"Understood: {heard}.{extra}\nProposing {describe(args)}."
        _stream(text, on_delta)
        on_delta("tool", PROPOSE)
        call = tool_call_event(_call_id(args, len(events)), PROPOSE, args)
        return ModelResponse(events=[message_event(text), call], stop_reason="tool_use")

    @staticmethod
    def _after_result(result: Event) -> str:
        content = str(result.get("content") or "").strip()
        if result.get("is_error"):
            return (
                f"The proposal was refused: {content}\n"
                "Send a corrected directive, for example `turns 2-15` or `keep the last 3`."
            )
        lines = content.splitlines()
        head = lines[0] if lines else "the proposal"
        warned = [line for line in lines if line.startswith(WARNING)]
        if warned:
            return f"Recorded. {head}. {' '.join(warned)}"
        return f"Recorded. {head}. Apply it with `jp conversation compact --continue`."
