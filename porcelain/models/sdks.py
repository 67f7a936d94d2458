"""A ``Call`` run in this process by the SDK its kind names.

The two SDK adapters (``anthropic_sdk``, ``openai_sdk``) sit below this
module, and each loads only when a call of its kind runs, so a command that
calls no model imports no SDK.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from porcelain.models.calls import Call, Sink


def execute(
    call: Call, sink: Sink, on_open: Callable[[Callable[[], None]], None] | None = None
) -> Any:
    """Run ``call`` here with its SDK: the final message dict (``count``: the count).

    ``on_open`` receives a function that closes the open stream (the warm
    process calls it when its client hangs up).
    """
    if call.kind == "anthropic":
        # lazy: only the SDK the call names loads
        from porcelain.models.anthropic_sdk import execute as run
    elif call.kind == "openai":
        # lazy: only the SDK the call names loads
        from porcelain.models.openai_sdk import execute as run
    else:
        raise ValueError(f"no SDK for {call.kind!r}")
    return run(call, sink, on_open)


def in_process(call: Call, sink: Sink) -> Any:
    """The ``Runner`` that runs a call here (``calls.Runner``)."""
    return execute(call, sink)
