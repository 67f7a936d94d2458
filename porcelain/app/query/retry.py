"""`jp q --retry`: answer the last request again, without asking it again.

- The last request has no complete answer (the provider failed, the stream
  broke or Ctrl-C cut the answer off, a tool round was cut off): the turn goes
  on in place from what is stored; no new request event is written.  A cut-off
  answer stays, marked, and is not sent to the model (domain/interrupted.py).
- The last request was answered: the answer stays where it is, and the
  request is answered again in a fork made at the request's commit (which
  becomes the active conversation), so nothing is lost and both answers can
  be read side by side.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from gitstore import Event, Kind, Located, Store
from porcelain.app.lifecycle import fork
from porcelain.app.query.turn import TurnContext, TurnView, continue_turn, interrupted_message
from porcelain.domain.interrupted import is_interrupted
from porcelain.domain.tokens import PROVIDER_VISIBLE
from porcelain.errors import Interrupted, UserError

State = Literal["unfinished", "answered"]


def last_request(events: Sequence[Event]) -> int | None:
    """Position of the last ``chat_request``, or None."""
    for i in range(len(events) - 1, -1, -1):
        if events[i].get("type") == Kind.CHAT_REQUEST:
            return i
    return None


def state(events: Sequence[Event]) -> State:
    """Whether the last request was answered: its turn ends with a message (or data).

    A turn that ends with a request, with reasoning alone, with an answer cut off
    (a broken stream, Ctrl-C), or inside a tool round is unfinished."""
    if last_request(events) is None:
        raise UserError("there is no request to retry", 'ask one: `jp q "your question"`')
    for event in reversed(events):
        kind = event.get("type")
        if kind not in PROVIDER_VISIBLE:
            continue
        answered = (
            kind == Kind.CHAT_RESPONSE
            and ("message" in event or "data" in event)
            and not is_interrupted(event)
        )
        return "answered" if answered else "unfinished"
    return "unfinished"  # unreachable: a request is a visible event


def fork_at_request(store: Store, cid: str, events: Sequence[Event], commits: Sequence[str]) -> str:
    """A fork of ``cid`` whose tip is its last request (the answer left out)."""
    at = last_request(events)
    assert at is not None and at < len(commits)
    return fork(store, Located(cid, commits[at], False))[0]


def retry_turn(ctx: TurnContext, view: TurnView) -> list[Event]:
    """Go on with the stored turn: the model is asked again from its history."""
    before = len(ctx.written)
    try:
        continue_turn(ctx, view)
    except KeyboardInterrupt:
        kept = len(ctx.written) - before
        if not ctx.persist:
            raise Interrupted(interrupted_message(ctx, kept)) from None
        raise Interrupted(
            f"interrupted: {kept} event{'s' if kept != 1 else ''} of the new answer "
            f"are saved in {ctx.cid}"
        ) from None
    return ctx.written
