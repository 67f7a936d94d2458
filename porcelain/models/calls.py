"""A provider call as plain data, so it runs the same in this process or in the
warm model process (``warm_client``/``warm_server``).

A ``Call`` names the SDK (``kind``), the endpoint with the key read at call time,
the SDK's retries and the SDK keyword arguments.  Running it streams the raw
provider events (as JSON dicts) to a sink and returns the final message (a
dict, or None when the stream ended before the answer was complete).  What
goes wrong is a ``Failure``: data too, so both paths report it in the same
words.  No SDK import here; ``sdks`` runs a call with its SDK.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from porcelain.models.catalog import Endpoint

Sink = Callable[[dict[str, Any]], None]
Op = Literal["stream", "count"]
Phase = Literal["open", "stream"]
FailureKind = Literal["status", "connection", "timeout", "other"]


@dataclass(frozen=True)
class Call:
    kind: str  # "anthropic" | "openai"
    endpoint: Endpoint
    max_retries: int
    params: dict[str, Any]
    op: Op = "stream"

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "endpoint": asdict(self.endpoint),
            "max_retries": self.max_retries,
            "params": self.params,
            "op": self.op,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Call:
        point = data["endpoint"]
        return cls(
            kind=str(data["kind"]),
            endpoint=Endpoint(point.get("base_url"), point.get("api_key"), point.get("auth_token")),
            max_retries=int(data["max_retries"]),
            params=dict(data["params"]),
            op="count" if data.get("op") == "count" else "stream",
        )


@dataclass(eq=False)
class Failure(Exception):
    """A provider call that failed: before the stream opened (``open``, after the
    SDK's retries) or while it streamed (``stream``)."""

    phase: Phase
    kind: FailureKind
    message: str
    status: int = 0
    error_type: str = ""
    detail: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.message

    def to_json(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "kind": self.kind,
            "message": self.message,
            "status": self.status,
            "error_type": self.error_type,
            "detail": self.detail,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Failure:
        phase: Phase = "stream" if data.get("phase") == "stream" else "open"
        kind = data.get("kind")
        return cls(
            phase=phase,
            kind=kind if kind in ("status", "connection", "timeout") else "other",
            message=str(data.get("message") or ""),
            status=int(data.get("status") or 0),
            error_type=str(data.get("error_type") or ""),
            detail=str(data.get("detail") or ""),
        )


def describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def one_line(text: str, secrets: list[str]) -> str:
    """``text`` on one line, with every secret replaced."""
    line = " ".join(text.split())
    for secret in secrets:
        line = line.replace(secret, "[redacted]")
    return line


@dataclass(frozen=True)
class SdkErrors:
    """An SDK's exception classes, for ``sdk_failure``; ``api_error`` gives the
    (error type, message) of an API error from its body."""

    status: type[Exception]
    timeout: type[Exception]
    connection: type[Exception]
    api_error: Callable[[Any], tuple[str, str]]
    in_stream: type[Exception] | None = None  # an error event inside a stream


def sdk_failure(phase: Phase, exc: Exception, secrets: list[str], sdk: SdkErrors) -> Failure:
    """An SDK exception as data: status, the API's error type and message."""
    if isinstance(exc, sdk.status):
        kind, text = sdk.api_error(exc)
        text = one_line(text, secrets)
        return Failure(phase, "status", text, int(getattr(exc, "status_code", 0) or 0), kind, text)
    if isinstance(exc, sdk.timeout):
        return Failure(phase, "timeout", "the request timed out", detail="the request timed out")
    if isinstance(exc, sdk.connection):
        cause = exc.__cause__ or exc.__context__
        fallback = str(getattr(exc, "message", "") or describe(exc))
        detail = one_line(str(cause) if cause is not None and str(cause) else fallback, secrets)
        return Failure(phase, "connection", detail, detail=detail)
    if sdk.in_stream is not None and isinstance(exc, sdk.in_stream):
        kind, text = sdk.api_error(exc)
        text = one_line(text, secrets)
        return Failure(phase, "other", text, error_type=kind, detail=text)
    text = one_line(describe(exc), secrets)
    return Failure(phase, "other", text, detail=text)


def guarded(
    items: Iterator[Any],
    secrets: list[str],
    failure: Callable[[Phase, Exception, list[str]], Failure],
) -> Iterator[Any]:
    """A stream's items; a failure while reading becomes a ``stream`` Failure."""
    while True:
        try:
            item = next(items)
        except StopIteration:
            return
        except Exception as exc:
            raise failure("stream", exc, secrets) from exc
        yield item


Runner = Callable[[Call, Sink], Any]
"""How a model runs a call: ``sdks.in_process``, or ``warm_client.run``."""
