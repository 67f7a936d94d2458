"""The only module that imports ``anthropic``: one ``Call`` run through the SDK.

Run in this process or in the warm model process alike.  The stream's raw
events go to the sink as dicts; SDK failures become ``Failure`` values.  The
SDK does the retries.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from porcelain.errors import ConfigError
from porcelain.models.calls import Call, Failure, Phase, SdkErrors, Sink, guarded, sdk_failure

RAW_EVENTS = frozenset(
    {
        "message_start",
        "message_delta",
        "message_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
    }
)


_transport: list[Any] = []  # the one HTTP client of this process, made on first use


def transport() -> Any:
    """The HTTP client every call of this process shares: building one (its TLS
    context) costs more than the call's own work once the SDK is imported, and
    it holds no key (each call's SDK client brings its own)."""
    # lazy: the SDK costs start-up time; only a provider call needs it
    import anthropic

    if not _transport:
        _transport.append(anthropic.DefaultHttpxClient())
    return _transport[0]


def client(call: Call) -> Any:
    """The SDK client for ``call``: its endpoint's key, token and URL when it has
    them, else whatever the SDK finds itself (a credentials profile)."""
    # lazy: the SDK costs start-up time; only a provider call needs it
    import anthropic

    point = call.endpoint
    kwargs: dict[str, Any] = {"max_retries": call.max_retries, "http_client": transport()}
    if point.api_key:
        kwargs["api_key"] = point.api_key
    if point.auth_token:
        kwargs["auth_token"] = point.auth_token
    if point.base_url:
        kwargs["base_url"] = point.base_url
    try:
        made = anthropic.Anthropic(**kwargs)
    except anthropic.AnthropicError as exc:  # a broken credentials profile
        raise ConfigError(f"anthropic credentials: {' '.join(str(exc).split())}") from exc
    return made


def has_credentials(made: Any) -> bool:
    return bool(made.api_key or made.auth_token or getattr(made, "credentials", None))


def execute(
    call: Call, sink: Sink, on_open: Callable[[Callable[[], None]], None] | None = None
) -> Any:
    # lazy: the SDK costs start-up time; only a provider call needs it
    import anthropic

    made = client(call)
    secrets = call.endpoint.secrets()
    if call.op == "count":
        params = {k: v for k, v in call.params.items() if k != "max_tokens"}
        try:
            return made.messages.count_tokens(**params).input_tokens
        except anthropic.AnthropicError as exc:
            raise failure("open", exc, secrets) from exc
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecation notices about model names
        manager = made.messages.stream(**call.params)
    try:
        stream = manager.__enter__()
    except anthropic.AnthropicError as exc:
        raise failure("open", exc, secrets) from exc
    if on_open is not None:
        on_open(stream.close)
    finished = False
    try:
        for event in guarded(iter(stream), secrets, failure):
            kind = getattr(event, "type", None)
            if kind in RAW_EVENTS:
                sink(event.to_dict())
                finished = finished or kind == "message_stop"
        return stream.get_final_message().to_dict() if finished else None
    finally:
        manager.__exit__(None, None, None)


def failure(phase: Phase, exc: Exception, secrets: list[str]) -> Failure:
    """An SDK exception as data: status, the API's error type and message."""
    # lazy: the SDK costs start-up time; only a provider call needs it
    import anthropic

    errors = SdkErrors(
        anthropic.APIStatusError,
        anthropic.APITimeoutError,
        anthropic.APIConnectionError,
        _api_error,
    )
    return sdk_failure(phase, exc, secrets, errors)


def _api_error(exc: Any) -> tuple[str, str]:
    """(error type, message) from the API's error body, or what the SDK knows."""
    body = exc.body
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        return str(error.get("type") or ""), str(error.get("message") or "")
    return "", str(exc.message)
