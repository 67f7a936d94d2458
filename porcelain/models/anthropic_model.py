"""``anthropic/*``: Claude through the official SDK, streaming.

The only module that imports ``anthropic``, and only inside the functions that
talk to the API, so that loading jp never loads the SDK.  The SDK reads
``ANTHROPIC_API_KEY`` and ``ANTHROPIC_BASE_URL`` itself and does the retries;
the key is never logged, stored or put into a message.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gitstore import Event
from porcelain.errors import ConfigError, ProviderError
from porcelain.models.base import (
    AnswerInterrupted,
    ModelRequest,
    ModelResponse,
    OnDelta,
    StreamInterrupted,
    message_event,
    reasoning_event,
    tool_call_event,
)
from porcelain.models.messages import system_blocks, to_messages

if TYPE_CHECKING:
    import anthropic  # lazy: the SDK loads when a request is made (start-up)

MIN_THINKING_BUDGET = 1024
_USERINFO = re.compile(r"//[^/@]*@")


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
    partial answer when the stream breaks."""

    def __init__(self, on_delta: OnDelta) -> None:
        self.on_delta = on_delta
        self.blocks: dict[int, dict[str, Any]] = {}
        self.finished = False

    def feed(self, event: Any) -> None:
        kind = getattr(event, "type", None)
        if kind == "content_block_start":
            block = event.content_block
            entry: dict[str, Any] = {"type": block.type, "text": "", "done": False}
            if block.type == "tool_use":
                entry.update(id=block.id, name=block.name, json="")
                self.on_delta("tool", block.name)
            self.blocks[event.index] = entry
        elif kind == "content_block_delta":
            self._delta(self.blocks.get(event.index), event.delta)
        elif kind == "content_block_stop":
            if event.index in self.blocks:
                self.blocks[event.index]["done"] = True
        elif kind == "message_stop":
            self.finished = True

    def _delta(self, entry: dict[str, Any] | None, delta: Any) -> None:
        if entry is None:
            return
        if delta.type == "text_delta":
            entry["text"] += delta.text
            self.on_delta("text", delta.text)
        elif delta.type == "thinking_delta":
            entry["text"] += delta.thinking
            self.on_delta("reasoning", delta.thinking)
        elif delta.type == "signature_delta":
            entry["signature"] = delta.signature
        elif delta.type == "input_json_delta":
            entry["json"] += delta.partial_json

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


def response_events(content: list[Any]) -> list[Event]:
    """The final message's content blocks as jp events, in order."""
    out: list[Event] = []
    for block in content:
        if block.type == "thinking":
            out.append(reasoning_event(block.thinking, block.signature or None))
        elif block.type == "redacted_thinking":
            event = reasoning_event("")
            event["metadata"] = {"anthropic_redacted_thinking": block.data}
            out.append(event)
        elif block.type == "text" and block.text:
            out.append(message_event(block.text))
        elif block.type == "tool_use":
            args = block.input if isinstance(block.input, dict) else {}
            out.append(tool_call_event(block.id, block.name, dict(args)))
    return out


def _usage(message: Any) -> dict[str, int]:
    usage = getattr(message, "usage", None)
    out: dict[str, int] = {}
    for key in (
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    ):
        value = getattr(usage, key, None)
        if isinstance(value, int):
            out[key] = value
    return out


class AnthropicModel:
    """``anthropic/<name>``: sends ``<name>`` to the Messages API."""

    def __init__(self, name: str, *, max_retries: int = 2) -> None:
        self.name = name
        self.max_retries = max_retries
        self._client: anthropic.Anthropic | None = None

    def _client_for_request(self) -> anthropic.Anthropic:
        if self._client is None:
            import anthropic  # lazy: the SDK loads when a request is made (start-up)

            try:
                client = anthropic.Anthropic(max_retries=self.max_retries)
            except anthropic.AnthropicError as exc:  # a broken credentials profile
                line = " ".join(str(exc).split())
                raise ConfigError(f"anthropic credentials: {line}") from exc
            if not (client.api_key or client.auth_token or getattr(client, "credentials", None)):
                raise ConfigError(
                    f"no Anthropic API key for anthropic/{self.name}",
                    hint="set ANTHROPIC_API_KEY, or use the offline model (--model offline/jp)",
                )
            self._client = client
        return self._client

    def check(self) -> None:
        self._client_for_request()

    def respond(self, request: ModelRequest, on_delta: OnDelta) -> ModelResponse:
        import anthropic  # lazy: the SDK loads when a request is made (start-up)

        client = self._client_for_request()
        errors = _Errors(client)
        params = build_params(request)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # deprecation notices about model names
            manager = client.messages.stream(**params)
        seen = _Blocks(on_delta)
        try:
            stream = manager.__enter__()
        except anthropic.AnthropicError as exc:
            raise errors.failed(exc) from exc
        try:
            try:
                for event in _guarded(iter(stream), errors, seen):
                    seen.feed(event)
            except KeyboardInterrupt:
                raise AnswerInterrupted(seen.partial_events()) from None
            if not seen.finished:
                raise StreamInterrupted(
                    "the anthropic stream ended before the answer was complete",
                    seen.partial_events(),
                )
            final = stream.get_final_message()
        finally:
            manager.__exit__(None, None, None)
        return ModelResponse(
            events=response_events(list(final.content)),
            stop_reason=str(final.stop_reason or "end_turn"),
            usage=_usage(final),
        )


def _guarded(events: Iterator[Any], errors: _Errors, seen: _Blocks) -> Iterator[Any]:
    """The stream's events; a failure while reading becomes ``StreamInterrupted``."""
    while True:
        try:
            event = next(events)
        except StopIteration:
            return
        except Exception as exc:
            raise errors.interrupted(exc, seen.partial_events()) from exc
        yield event


class _Errors:
    """SDK failures as one line each: status, API error type and message."""

    def __init__(self, client: anthropic.Anthropic) -> None:
        self.key = client.api_key or client.auth_token or ""
        self.base_url = _USERINFO.sub("//", str(client.base_url)).rstrip("/")

    def _clean(self, text: str) -> str:
        line = " ".join(text.split())
        if self.key and len(self.key) >= 4:
            line = line.replace(self.key, "[redacted]")
        return line

    def failed(self, exc: Exception) -> ProviderError:
        import anthropic  # lazy: the SDK loads when a request is made (start-up)

        if isinstance(exc, anthropic.APIStatusError):
            kind, text = _api_error(exc)
            label = f"{exc.status_code} {kind}" if kind else str(exc.status_code)
            return ProviderError(
                self._clean(f"anthropic returned {label}: {text}"), _hint(exc.status_code)
            )
        if isinstance(exc, anthropic.APIConnectionError):
            cause = exc.__cause__ or exc.__context__
            detail = str(cause) if cause is not None and str(cause) else exc.message
            if isinstance(exc, anthropic.APITimeoutError):
                detail = "the request timed out"
            return ProviderError(
                self._clean(f"could not reach the anthropic API at {self.base_url}: {detail}"),
                "check the network, or ANTHROPIC_BASE_URL if it is set",
            )
        return ProviderError(self._clean(f"anthropic request failed: {_describe(exc)}"))

    def interrupted(self, exc: Exception, partial: list[Event]) -> StreamInterrupted:
        import anthropic  # lazy: the SDK loads when a request is made (start-up)

        if isinstance(exc, anthropic.APIStatusError):
            kind, text = _api_error(exc)
            detail = f"{kind}: {text}" if kind else text
        else:
            detail = _describe(exc)
        return StreamInterrupted(
            self._clean(f"the anthropic stream broke off: {detail}"),
            partial,
            "what arrived before the break is kept; ask again to continue",
        )


def _api_error(exc: anthropic.APIStatusError) -> tuple[str, str]:
    """(error type, message) from the API's error body, or what the SDK knows."""
    body = exc.body
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        return str(error.get("type") or ""), str(error.get("message") or "")
    return "", exc.message


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _hint(status: int) -> str | None:
    if status in (401, 403):
        return "check ANTHROPIC_API_KEY"
    if status == 404:
        return "check the model id (assistant.model.id)"
    if status in (429, 529) or status >= 500:
        return "the API is busy or failing; try again in a moment"
    return None
