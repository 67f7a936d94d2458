"""The only module that imports ``openai``: one ``Call`` run through the SDK
(Chat Completions, streamed).

Run in this process or in the warm model process alike.  Each streamed chunk
goes to the sink as a dict; SDK failures become ``Failure`` values.  The SDK
does the retries.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from porcelain.models.calls import Call, Failure, Phase, SdkErrors, Sink, guarded, sdk_failure

NO_KEY = "no-key"  # what a server that needs no key is sent (the SDK wants one)
_transport: list[Any] = []  # the one HTTP client of this process, made on first use


def transport() -> Any:
    """The HTTP client every call of this process shares (no key in it: each
    call's SDK client brings its own), as in ``anthropic_sdk``."""
    # lazy: the SDK costs start-up time; only a provider call needs it
    import openai

    if not _transport:
        _transport.append(openai.DefaultHttpxClient())
    return _transport[0]


def execute(
    call: Call, sink: Sink, on_open: Callable[[Callable[[], None]], None] | None = None
) -> Any:
    """Stream the completion: ``{"finished": bool}`` once the stream ends."""
    # lazy: the SDK costs start-up time; only a provider call needs it
    import openai

    secrets = call.endpoint.secrets()
    client = openai.OpenAI(
        api_key=call.endpoint.api_key or NO_KEY,
        base_url=call.endpoint.base_url,
        max_retries=call.max_retries,
        http_client=transport(),
    )
    try:
        stream = client.chat.completions.create(**call.params)
    except openai.OpenAIError as exc:
        raise failure("open", exc, secrets) from exc
    if on_open is not None:
        on_open(stream.close)
    finished = False
    try:
        for chunk in guarded(iter(stream), secrets, failure):
            data = chunk.to_dict()
            sink(data)
            finished = finished or any(
                c.get("finish_reason") for c in data.get("choices") or [] if isinstance(c, dict)
            )
    finally:
        stream.close()
    return {"finished": finished}


def failure(phase: Phase, exc: Exception, secrets: list[str]) -> Failure:
    """An SDK exception as data: status, the API's error type or code and message."""
    # lazy: the SDK costs start-up time; only a provider call needs it
    import openai

    errors = SdkErrors(
        openai.APIStatusError,
        openai.APITimeoutError,
        openai.APIConnectionError,
        lambda e: _api_error(e.body, str(e.message)),
        in_stream=openai.APIError,
    )
    return sdk_failure(phase, exc, secrets, errors)


def _api_error(body: Any, fallback: str) -> tuple[str, str]:
    """(error type or code, message) from the API's error body."""
    error = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(error, dict) and error.get("message"):
        kind = error.get("type") or error.get("code") or ""
        return str(kind), str(error["message"])
    return "", fallback
