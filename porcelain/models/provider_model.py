"""The skeleton every SDK-backed provider fills in: ``respond`` written once.

A wire format (Anthropic Messages, OpenAI Chat Completions and the servers
that speak it) gives four hooks: ``KIND`` (the SDK that runs its call),
``params`` (a request as the SDK's keyword arguments), ``reader`` (what has
streamed so far, for the display, a partial answer and the final response)
and ``check`` (the credentials, before anything is sent).  Running the call
(here or in the warm model process), Ctrl-C, and turning every ``Failure``
into one line (``provider_errors``) are the same for all of them.  The
offline model has no wire and no SDK and implements ``base.Model`` itself.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Protocol

from gitstore import Event
from porcelain.models.base import (
    AnswerInterrupted,
    ModelRequest,
    ModelResponse,
    OnDelta,
)
from porcelain.models.calls import Call, Failure, Op, Runner
from porcelain.models.catalog import BUILTIN, Endpoint, Provider, endpoint
from porcelain.models.provider_errors import ProviderErrors
from porcelain.models.sdks import in_process


class StreamReader(Protocol):
    """What one response has streamed so far (the SDK's events, as dicts)."""

    def feed(self, event: Mapping[str, Any]) -> None:
        """Take one streamed event (and show what it adds through ``on_delta``)."""

    def partial_events(self) -> list[Event]:
        """What a break leaves whole, the answer text already shown included."""

    def response(self, final: Any) -> ModelResponse | None:
        """The answer from the call's final value; None if the stream ended early."""


class ProviderModel:
    """``PROVIDER/<name>``: ``<name>`` is what the provider is sent as the model.

    ``runner`` makes the call (in this process, or through the warm model
    process); ``environ`` is where the key is read, at each call.
    """

    KIND = ""  # the SDK that speaks the wire format ("anthropic" | "openai")
    DEFAULT_PROVIDER = ""  # the built-in provider of the subclass's kind
    DEFAULT_URL = ""  # where the SDK goes when the endpoint names no URL
    PLACE = "{name}"  # the provider in "could not reach ..."

    def __init__(
        self,
        name: str,
        *,
        max_retries: int = 2,
        provider: Provider | None = None,
        runner: Runner = in_process,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.name = name
        self.max_retries = max_retries
        self.provider = provider or BUILTIN[self.DEFAULT_PROVIDER]
        self.runner = runner
        self.environ = os.environ if environ is None else environ

    @property
    def model_id(self) -> str:
        return f"{self.provider.name}/{self.name}"

    # -- the hooks of a wire format ------------------------------------------

    def check(self) -> None:
        """Raise the error ``respond`` would raise before sending anything."""

    def params(self, request: ModelRequest) -> dict[str, Any]:
        """The SDK's keyword arguments for ``request``."""
        raise NotImplementedError

    def reader(self, on_delta: OnDelta) -> StreamReader:
        """A fresh reader of one response's stream."""
        raise NotImplementedError

    def _runner(self) -> Runner:
        """What runs this call (a subclass may keep some calls in this process)."""
        return self.runner

    # -- the same for every provider -----------------------------------------

    def respond(self, request: ModelRequest, on_delta: OnDelta) -> ModelResponse:
        self.check()
        call = self._call(self.params(request))
        errors = self._errors(call.endpoint)
        seen = self.reader(on_delta)
        try:
            final = self._runner()(call, seen.feed)
        except KeyboardInterrupt:
            raise AnswerInterrupted(seen.partial_events()) from None
        except Failure as exc:
            if exc.phase == "open":
                raise errors.failed(exc) from None
            raise errors.interrupted(exc, seen.partial_events()) from None
        response = seen.response(final)
        if response is None:
            raise errors.ended(seen.partial_events())
        return response

    def count_tokens(self, request: ModelRequest) -> int | None:
        """None: the wire format has no count (callers estimate)."""
        return None

    def _endpoint(self) -> Endpoint:
        return endpoint(self.provider, self.environ)

    def _call(self, params: dict[str, Any], op: Op = "stream") -> Call:
        return Call(self.KIND, self._endpoint(), self.max_retries, params, op)

    def _errors(self, point: Endpoint) -> ProviderErrors:
        return ProviderErrors(self.provider, point, self.PLACE, self.DEFAULT_URL)
