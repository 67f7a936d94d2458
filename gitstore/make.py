"""A namespace of gitstore's face: new events of each kind, as porcelain writes
them (``make.chat_message(timestamp, text)``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gitstore.lazy import face

if TYPE_CHECKING:
    from gitstore.events.make import (
        chat_message,
        chat_reasoning,
        chat_request,
        config_delta,
        conversation_start,
        tool_call_request,
        tool_call_response,
        turn_start,
    )

__all__: list[str]  # the names above, read from them when first asked for

if not TYPE_CHECKING:  # mypy reads the imports above; a misspelt name stays an error
    __getattr__, __dir__ = face(__name__, __file__)
