"""``anthropic/*``: Claude through the official SDK, streaming.

This module builds the request and reads the streamed events; the SDK itself
is imported only by ``anthropic_sdk``, which runs the call in this process or
in the warm model process (``calls.Runner``).  The key is read from
``ANTHROPIC_API_KEY`` (or ``ANTHROPIC_AUTH_TOKEN``) when the call is made and
never logged, stored or put into a message; the SDK does the retries.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from gitstore import Event
from porcelain.domain.media import MEDIA_TYPES
from porcelain.errors import ConfigError
from porcelain.models.base import (
    ModelRequest,
    ModelResponse,
    OnDelta,
    message_event,
    reasoning_event,
    tool_call_event,
)
from porcelain.models.calls import Failure, Runner
from porcelain.models.messages import system_blocks, to_messages
from porcelain.models.provider_model import ProviderModel
from porcelain.models.sdks import in_process

MIN_THINKING_BUDGET = 1024
DEFAULT_URL = "https://api.anthropic.com"


def build_params(request: ModelRequest) -> dict[str, Any]:
    """The keyword arguments of ``client.messages.stream`` for one request."""
    thinking = request.thinking_budget
    max_tokens = request.max_tokens
    params: dict[str, Any] = {"model": request.model_name}
    if thinking:
        thinking = max(thinking, MIN_THINKING_BUDGET)
        max_tokens = max(max_tokens, thinking + MIN_THINKING_BUDGET)
        params["thinking"] = {"type": "enabled", "budget_tokens": thinking}
    params["max_tokens"] = max_tokens
    system = system_blocks(request.system, cache=request.cache)
    if system:
        params["system"] = system
    if request.tools:
        params["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in request.tools
        ]
    params["messages"] = to_messages(
        request.events, thinking=bool(thinking), tools=bool(request.tools), cache=request.cache
    )
    return params


class _Blocks:
    """What has streamed so far, block by block, for the display and for a
    partial answer when the stream breaks.  Events are the API's, as dicts."""

    def __init__(self, on_delta: OnDelta) -> None:
        self.on_delta = on_delta
        self.blocks: dict[int, dict[str, Any]] = {}
        self.finished = False

    def feed(self, event: Mapping[str, Any]) -> None:
        kind = event.get("type")
        if kind == "content_block_start":
            block = event.get("content_block") or {}
            entry: dict[str, Any] = {"type": block.get("type"), "text": "", "done": False}
            if block.get("type") == "tool_use":
                entry.update(id=block.get("id"), name=block.get("name"), json="")
                self.on_delta("tool", str(block.get("name")))
            self.blocks[int(event.get("index", 0))] = entry
        elif kind == "content_block_delta":
            self._delta(self.blocks.get(int(event.get("index", 0))), event.get("delta") or {})
        elif kind == "content_block_stop":
            index = int(event.get("index", 0))
            if index in self.blocks:
                self.blocks[index]["done"] = True
        elif kind == "message_stop":
            self.finished = True

    def _delta(self, entry: dict[str, Any] | None, delta: Mapping[str, Any]) -> None:
        if entry is None:
            return
        kind = delta.get("type")
        if kind == "text_delta":
            entry["text"] += str(delta.get("text", ""))
            self.on_delta("text", str(delta.get("text", "")))
        elif kind == "thinking_delta":
            entry["text"] += str(delta.get("thinking", ""))
            self.on_delta("reasoning", str(delta.get("thinking", "")))
        elif kind == "signature_delta":
            entry["signature"] = delta.get("signature")
        elif kind == "input_json_delta":
            entry["json"] += str(delta.get("partial_json", ""))

    def partial_events(self) -> list[Event]:
        """Completed blocks, plus answer text already shown of the one cut off."""
        out: list[Event] = []
        for _, entry in sorted(self.blocks.items()):
            if entry["type"] == "text" and entry["text"]:
                out.append(message_event(entry["text"]))
            elif not entry["done"]:
                continue
            elif entry["type"] == "thinking" and entry.get("signature"):
                out.append(reasoning_event(entry["text"], entry["signature"]))
            elif entry["type"] == "tool_use":
                try:
                    args = json.loads(entry["json"] or "{}")
                except ValueError:
                    continue
                if isinstance(args, dict):
                    out.append(tool_call_event(entry["id"], entry["name"], args))
        return out

    def response(self, final: Any) -> ModelResponse | None:
        """The final message as a response; None if the stream stopped short."""
        if not isinstance(final, Mapping) or not self.finished:
            return None
        return ModelResponse(
            events=response_events(list(final.get("content") or [])),
            stop_reason=str(final.get("stop_reason") or "end_turn"),
            usage=_usage(final),
        )


def response_events(content: list[Mapping[str, Any]]) -> list[Event]:
    """The final message's content blocks as jp events, in order."""
    out: list[Event] = []
    for block in content:
        kind = block.get("type")
        if kind == "thinking":
            out.append(
                reasoning_event(str(block.get("thinking", "")), block.get("signature") or None)
            )
        elif kind == "redacted_thinking":
            event = reasoning_event("")
            event["metadata"] = {"anthropic_redacted_thinking": block.get("data")}
            out.append(event)
        elif kind == "text" and block.get("text"):
            out.append(message_event(str(block["text"])))
        elif kind == "tool_use":
            args = block.get("input")
            out.append(
                tool_call_event(
                    str(block.get("id")),
                    str(block.get("name")),
                    dict(args) if isinstance(args, dict) else {},
                )
            )
    return out


def _usage(message: Mapping[str, Any]) -> dict[str, int]:
    usage = message.get("usage") or {}
    keys = (
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    )
    return {k: v for k in keys if isinstance(v := usage.get(k), int) and not isinstance(v, bool)}


class AnthropicModel(ProviderModel):
    """``anthropic/<name>`` (or an entry of kind anthropic): the Messages API."""

    KIND = "anthropic"
    DEFAULT_PROVIDER = "anthropic"
    DEFAULT_URL = DEFAULT_URL
    PLACE = "the {name} API"
    media_types = MEDIA_TYPES  # image and document content blocks

    def check(self) -> None:
        """A key or token in the environment is enough (no SDK import); without
        one, the SDK is asked whether it finds credentials of its own."""
        point = self._endpoint()
        if point.api_key or point.auth_token:
            return
        # lazy: the SDK module loads only when a provider is called
        from porcelain.models.anthropic_sdk import client, has_credentials

        if self.provider.builtin and has_credentials(client(self._call({}))):
            return
        variable = self.provider.api_key_env or "ANTHROPIC_API_KEY"
        raise ConfigError(
            f"no Anthropic API key for {self.model_id}",
            hint=f"set {variable}, or use the offline model (--model offline/jp)",
        )

    def params(self, request: ModelRequest) -> dict[str, Any]:
        return build_params(request)

    def reader(self, on_delta: OnDelta) -> _Blocks:
        return _Blocks(on_delta)

    def _runner(self) -> Runner:
        point = self._endpoint()
        # credentials the SDK finds itself (a profile) stay in this process
        return self.runner if (point.api_key or point.auth_token) else in_process

    def count_tokens(self, request: ModelRequest) -> int | None:
        """The Messages API's count of ``request`` (its count-tokens endpoint)."""
        self.check()
        call = self._call(build_params(request), "count")
        try:
            found = self._runner()(call, lambda event: None)
        except Failure as exc:
            raise self._errors(call.endpoint).failed(exc) from None
        return int(found) if isinstance(found, int) else None
