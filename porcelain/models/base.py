"""What every model provider shares: the request, the streamed deltas, the
response, the events a model makes, and the sizes of model ids.

This is the floor of ``porcelain.models``: it imports no other module of the
package (``factory`` picks an implementation for an id, ``provider_model`` is
the skeleton every SDK-backed provider fills in).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from gitstore import Event, Kind, make
from porcelain import clock
from porcelain.errors import ProviderError, UserError

DeltaKind = Literal["text", "reasoning", "tool", "note"]
OnDelta = Callable[[DeltaKind, str], None]
"""Called while a response streams: ``("text", chunk)`` for answer text,
``("reasoning", chunk)`` for thinking, ``("tool", name)`` once when a tool call
starts (its arguments arrive whole in the response), ``("note", text)`` for a
remark to the person that is no part of the answer and is never stored (jp's
offline model explaining itself; shown on stderr)."""

Task = Literal["chat", "summary"]

DEFAULT_WINDOW = 200_000
OFFLINE_WINDOW = 1_000_000
# family prefix of the model name → tokens (longest prefix first)
_KNOWN_WINDOWS = {
    "claude": 200_000,
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-5": 400_000,
    "o1": 200_000,
    "o3": 200_000,
    "o4": 200_000,
}


@dataclass(frozen=True)
class ToolSpec:
    """A tool the model may call: a name, what it does, a JSON schema (object)."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class ModelRequest:
    """One call to a model.

    ``events`` are already projected and filtered to the provider-visible kinds
    (chat_request, chat_response, tool_call_request, tool_call_response), in
    order; the provider maps them to its own message format.
    """

    model_id: str
    system: str
    events: list[Event]
    tools: list[ToolSpec] = field(default_factory=list)
    max_tokens: int = 8192
    thinking_budget: int | None = None
    task: Task = "chat"
    cache: bool = True

    @property
    def model_name(self) -> str:
        """The part after ``provider/``."""
        return split_model_id(self.model_id)[1]


@dataclass
class ModelResponse:
    """The new events a model produced, in the order it produced them.

    ``stop_reason`` is the provider's (``end_turn``, ``tool_use``,
    ``max_tokens``, ...); ``usage`` holds token counts when the provider
    reports them (``input_tokens``, ``output_tokens``, cache counters).
    """

    events: list[Event]
    stop_reason: str
    usage: dict[str, int] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """All answer text, concatenated (what a summarizer keeps)."""
        return "".join(e["message"] for e in self.events if isinstance(e.get("message"), str))

    @property
    def tool_calls(self) -> list[Event]:
        return [e for e in self.events if e.get("type") == Kind.TOOL_CALL_REQUEST]


class StreamInterrupted(ProviderError):
    """The answer stopped part way (connection dropped, error mid-stream).

    ``partial_events`` holds what completed before the break (and the answer
    text already shown), so the caller can keep it.
    """

    def __init__(self, message: str, partial_events: list[Event], hint: str | None = None) -> None:
        super().__init__(message, hint)
        self.partial_events = partial_events


class AnswerInterrupted(KeyboardInterrupt):
    """Ctrl-C while an answer streamed: ``partial_events`` is what completed."""

    def __init__(self, partial_events: list[Event]) -> None:
        super().__init__()
        self.partial_events = partial_events


class Model(Protocol):
    """A language model (or the offline stand-in) behind one provider."""

    def respond(self, request: ModelRequest, on_delta: OnDelta) -> ModelResponse: ...

    def check(self) -> None:
        """Raise the error ``respond`` would raise before sending anything (credentials).

        Never imports an SDK when the credentials are in the environment."""

    def count_tokens(self, request: ModelRequest) -> int | None:
        """The provider's own count of the request's input tokens, or None when
        it offers none (then callers use ``estimate_tokens``)."""


def ignore_delta(kind: DeltaKind, text: str) -> None:
    """An ``on_delta`` for callers that do not display the stream."""


# -- events a model produces ----------------------------------------------------


def reasoning_event(text: str, signature: str | None = None) -> Event:
    event = make.chat_reasoning(clock.now_text(), text)
    if signature:
        event["metadata"] = {"anthropic_thinking_signature": signature}
    return event


def message_event(text: str) -> Event:
    return make.chat_message(clock.now_text(), text)


def tool_call_event(call_id: str, name: str, arguments: dict[str, Any]) -> Event:
    return make.tool_call_request(clock.now_text(), call_id, name, arguments)


# -- ids, windows, sizes --------------------------------------------------------


def split_model_id(model_id: str) -> tuple[str, str]:
    """``"anthropic/claude-x"`` → ``("anthropic", "claude-x")``; refuses other shapes."""
    provider, sep, name = model_id.strip().partition("/")
    if not sep or not provider or not name:
        raise UserError(
            f"model id {model_id!r} is not of the form provider/name",
            hint='for example assistant.model.id = "anthropic/claude-sonnet-4-5"',
        )
    return provider, name


def context_window(model_id: str, configured: int | None) -> int:
    """Tokens the model can read: the configured value wins, then what jp knows."""
    if configured is not None and configured > 0:
        return configured
    provider, _, name = model_id.partition("/")
    if provider == "offline":
        return OFFLINE_WINDOW
    name = name.lower().rpartition("/")[2]  # openrouter/openai/gpt-4o: the last part
    for family, window in sorted(_KNOWN_WINDOWS.items(), key=lambda kv: -len(kv[0])):
        if name.startswith(family):
            return window
    return DEFAULT_WINDOW
