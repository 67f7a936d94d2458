"""``openai/*`` and OpenAI-compatible servers: Chat Completions, streamed.

This module builds the request and reads the streamed chunks; the SDK itself
is imported only by ``openai_sdk``, which runs the call in this process or in
the warm model process.  ``openai/NAME`` goes to ``OPENAI_BASE_URL`` with
``OPENAI_API_KEY``, as the SDK reads them; a provider entry (``ollama/``,
``openrouter/``, the user's ``[providers.NAME]``) names its own URL and key
variable.  The key is read when the call is made and never stored.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from gitstore import Event
from porcelain.domain.media import IMAGE_TYPES
from porcelain.models.base import (
    ModelRequest,
    ModelResponse,
    OnDelta,
    message_event,
    reasoning_event,
    tool_call_event,
)
from porcelain.models.catalog import BUILTIN, Provider, missing_key
from porcelain.models.openai_messages import REASONING_META, to_chat_messages, tool_name
from porcelain.models.provider_model import ProviderModel

STOP_REASONS = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}
REASONING_FIELDS = ("reasoning_content", "reasoning")
MAX_DESCRIPTION = 1024


def build_params(request: ModelRequest, provider: Provider = BUILTIN["openai"]) -> dict[str, Any]:
    """The keyword arguments of ``client.chat.completions.create`` for one request."""
    params: dict[str, Any] = {
        "model": request.model_name,
        "messages": to_chat_messages(
            request.events,
            system=request.system,
            tools=bool(request.tools),
            provider=provider.name,
        ),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    # api.openai.com's newer models take only max_completion_tokens; servers
    # that speak the API know max_tokens
    limit = "max_completion_tokens" if provider.name == "openai" else "max_tokens"
    params[limit] = request.max_tokens
    if request.tools:
        params["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": tool_name(t.name),
                    "description": t.description[:MAX_DESCRIPTION],
                    "parameters": t.input_schema,
                },
            }
            for t in request.tools
        ]
    return params


class _Chunks:
    """What has streamed so far: reasoning, text, and tool calls by index."""

    def __init__(self, on_delta: OnDelta, provider: str) -> None:
        self.on_delta = on_delta
        self.provider = provider
        self.reasoning = ""
        self.reasoning_field = ""
        self.text = ""
        self.calls: dict[int, dict[str, str]] = {}
        self.finish_reason: str | None = None
        self.usage: dict[str, int] = {}

    def feed(self, chunk: Mapping[str, Any]) -> None:
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self.usage = _usage(usage)
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            self._delta(choice.get("delta") or {})
            if choice.get("finish_reason"):
                self.finish_reason = str(choice["finish_reason"])

    def _delta(self, delta: Mapping[str, Any]) -> None:
        for field in REASONING_FIELDS:
            piece = delta.get(field)
            if isinstance(piece, str) and piece:
                self.reasoning += piece
                self.reasoning_field = self.reasoning_field or field
                self.on_delta("reasoning", piece)
        piece = delta.get("content")
        if isinstance(piece, str) and piece:
            self.text += piece
            self.on_delta("text", piece)
        for part in delta.get("tool_calls") or []:
            if not isinstance(part, dict):
                continue
            entry = self.calls.setdefault(
                int(part.get("index") or 0), {"id": "", "name": "", "arguments": ""}
            )
            if part.get("id"):
                entry["id"] = str(part["id"])
            function = part.get("function") or {}
            if function.get("name"):
                if not entry["name"]:
                    self.on_delta("tool", str(function["name"]))
                entry["name"] += str(function["name"])
            if function.get("arguments"):
                entry["arguments"] += str(function["arguments"])

    def events(self, complete: bool) -> list[Event]:
        """The answer as jp events; ``complete`` False: only what a break leaves whole."""
        out: list[Event] = []
        if self.reasoning and complete:
            event = reasoning_event(self.reasoning)
            event["metadata"] = {
                REASONING_META: {"provider": self.provider, "field": self.reasoning_field}
            }
            out.append(event)
        if self.text:
            out.append(message_event(self.text))
        if not complete:
            return out
        for index, entry in sorted(self.calls.items()):
            out.append(_call_event(entry, index))
        return out

    def partial_events(self) -> list[Event]:
        return self.events(complete=False)

    def response(self, final: Any) -> ModelResponse | None:
        """The answer once the stream said it finished, and why; else None."""
        finished = isinstance(final, dict) and final.get("finished")
        if not finished or self.finish_reason is None:
            return None
        reason = self.finish_reason
        return ModelResponse(
            events=self.events(complete=True),
            stop_reason=STOP_REASONS.get(reason, reason),
            usage=self.usage,
        )


def _call_event(entry: Mapping[str, str], index: int) -> Event:
    """One streamed tool call; arguments that are not a JSON object are kept aside."""
    try:
        args = json.loads(entry["arguments"] or "{}")
    except ValueError:
        args = None
    call_id = entry["id"] or f"call_{index}"
    event = tool_call_event(call_id, entry["name"], args if isinstance(args, dict) else {})
    if not isinstance(args, dict):
        event["metadata"] = {"invalid_arguments": entry["arguments"][:2000]}
    return event


def _usage(usage: Mapping[str, Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for ours, theirs in (("input_tokens", "prompt_tokens"), ("output_tokens", "completion_tokens")):
        value = usage.get(theirs)
        if isinstance(value, int) and not isinstance(value, bool):
            out[ours] = value
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
    if isinstance(cached, int) and cached:
        out["cache_read_input_tokens"] = cached
    return out


class OpenAIModel(ProviderModel):
    """``PROVIDER/<name>`` for a provider of kind openai: sends ``<name>`` as the model."""

    KIND = "openai"
    DEFAULT_PROVIDER = "openai"
    media_types = IMAGE_TYPES  # image_url parts (data URLs); no PDFs

    def check(self) -> None:
        """The key is in its variable (a provider without one needs none)."""
        if self.provider.api_key_env and not self._endpoint().api_key:
            raise missing_key(self.provider, self.model_id)

    def params(self, request: ModelRequest) -> dict[str, Any]:
        return build_params(request, self.provider)

    def reader(self, on_delta: OnDelta) -> _Chunks:
        return _Chunks(on_delta, self.provider.name)
