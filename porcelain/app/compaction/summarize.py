"""The summarizer: one model call that turns a range of turns into a summary.

It reads the raw events of its range (never an earlier summary), unless the
raw range does not fit the summary model's window, in which case it reads
the projected view (earlier summaries standing in for what they replaced).
The range is sent as a transcript in one user message, with tool calls
rendered as text, so the request is valid for the Messages API whatever the
range holds and declares no tools.
"""

from __future__ import annotations

import json
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gitstore import Event, Kind, make, turns
from porcelain.domain.compaction.projection import Projection
from porcelain.domain.stream import Stream
from porcelain.domain.token_usage import SUMMARY_KEY, usage_metadata
from porcelain.domain.tokens import estimate_tokens
from porcelain.domain.view import PROVIDER_VISIBLE
from porcelain.errors import UserError
from porcelain.models.base import ModelRequest, OnDelta, context_window, ignore_delta
from porcelain.models.factory import get_model

if TYPE_CHECKING:
    from porcelain.models.catalog import Catalog

DEFAULT_PROMPT = """\
You write the summary that replaces part of a conversation between a user and \
an assistant working together, often on code. The original messages will be \
gone: whoever continues from your summary has nothing else, so it must stand \
on its own.

Keep, in this order of importance:
- the goal, in the user's own words, and any constraints or requirements they set;
- decisions taken and the reasons given for them, including options rejected;
- exact file paths, function and type names, commands run, error messages and \
numbers (versions, sizes, counts, timings), copied character for character;
- open questions, pending approvals and anything the user was asked but has not answered;
- the current state of the work and the next step that was about to happen.

Leave out pleasantries, repeated attempts that led nowhere (keep only what was \
learned from them), and tool output that no longer matters. Be concise but \
complete. Write plain prose and short lists; do not address the reader."""

REQUEST = "Summarize the conversation above."


@dataclass(frozen=True)
class SummaryJob:
    model_id: str
    instructions: str | None = None
    context: str | None = None
    window: int | None = None
    max_retries: int = 2
    catalog: Catalog | None = None  # the configured providers (built-in ones without)


def range_events(source: Sequence[Event] | Stream, from0: int, to0: int) -> list[Event]:
    """The conversation events of turns ``from0..to0`` (0-based, inclusive)."""
    stream = Stream.of(source)
    events, idx = stream.events, stream.indices
    # turn indices never decrease: the range is one slice, found by bisection
    lo, hi = bisect_left(idx, from0), bisect_right(idx, to0)
    return [e for e in (events[i] for i in range(lo, hi)) if e.get("type") in PROVIDER_VISIBLE]


def projected_range(projection: Projection, from0: int, to0: int) -> list[Event]:
    """Projected events standing for raw turns that meet ``from0..to0``."""
    out = []
    for event, t in zip(projection.events, turns.turn_indices(projection.events), strict=True):
        if t >= len(projection.origins) or event.get("type") not in PROVIDER_VISIBLE:
            continue
        origin = projection.origins[t]
        if origin.from_turn <= to0 and origin.to_turn >= from0:
            out.append(event)
    return out


Projecting = Projection | Callable[[], Projection]
"""A projection, or how to make it: only a range too big for the window needs one."""


def choose_reading(
    raw: Sequence[Event] | Stream,
    projection: Projecting,
    from0: int,
    to0: int,
    window: int,
    *,
    fit: Callable[[Sequence[Event], int], bool] | None = None,
) -> list[Event]:
    """Raw events of the range when they fit ``window`` tokens, else the projected ones.

    ``fit(events, budget)``: how the fit is judged (the estimate by default;
    ``summarize`` lets the summary model's provider count where it can).
    """
    picked = range_events(raw, from0, to0)
    budget = window * 3 // 4
    fitting = fit(picked, budget) if fit is not None else estimate_tokens(picked) <= budget
    if fitting:
        return picked
    if not isinstance(projection, Projection):
        projection = projection()
    return projected_range(projection, from0, to0) or picked


def as_transcript(events: Sequence[Event]) -> str:
    names = {
        str(e.get("id")): str(e.get("name"))
        for e in events
        if e.get("type") == Kind.TOOL_CALL_REQUEST
    }
    lines: list[str] = []
    for event in events:
        kind = event.get("type")
        if kind == Kind.CHAT_REQUEST:
            lines.append(f"USER: {event.get('content', '')}")
        elif kind == Kind.CHAT_RESPONSE and "message" in event:
            lines.append(f"ASSISTANT: {event['message']}")
        elif kind == Kind.CHAT_RESPONSE and "reasoning" in event:
            lines.append(f"ASSISTANT (thinking): {event['reasoning']}")
        elif kind == Kind.CHAT_RESPONSE and "data" in event:
            lines.append(f"ASSISTANT (data): {json.dumps(event['data'], ensure_ascii=False)}")
        elif kind == Kind.TOOL_CALL_REQUEST:
            args = json.dumps(event.get("arguments") or {}, ensure_ascii=False)
            lines.append(f"TOOL CALL {event.get('name')}: {args}")
        elif kind == Kind.TOOL_CALL_RESPONSE:
            status = "error" if event.get("is_error") else "result"
            name = names.get(str(event.get("id")), "tool")
            lines.append(f"TOOL {status.upper()} {name}: {event.get('content', '')}")
    return "\n\n".join(lines)


def build_request(job: SummaryJob, events: Sequence[Event]) -> ModelRequest:
    text = "<conversation>\n" + as_transcript(events) + "\n</conversation>\n\n" + REQUEST
    if job.context:
        text += f"\n\nAdditional context: {job.context}"
    request = make.chat_request(events[0]["timestamp"], text)
    return ModelRequest(
        model_id=job.model_id,
        system=job.instructions or DEFAULT_PROMPT,
        events=[request],
        tools=[],
        task="summary",
        cache=False,
    )


def summarize_counted(
    job: SummaryJob,
    raw: Sequence[Event] | Stream,
    projection: Projecting,
    from0: int,
    to0: int,
    on_delta: OnDelta = ignore_delta,
) -> tuple[str, dict[str, Any]]:
    """Run the summarizer over turns ``from0..to0``: the summary text, and the metadata
    that records what the call used (``token_usage.usage_metadata`` under
    ``summary_usage``; {} when not reported).

    ``projection`` may be a function that makes it: it is called only when
    the raw range does not fit.
    """
    # lazy: the token counter loads only when a summary is made
    from porcelain.models.tokens import fits

    window = context_window(job.model_id, job.window)

    def fit(events: Sequence[Event], budget: int) -> bool:
        return fits(events, budget, job.model_id, catalog=job.catalog, max_retries=job.max_retries)

    events = choose_reading(raw, projection, from0, to0, window, fit=fit)
    if not events:
        raise UserError(f"turns {from0 + 1}..{to0 + 1} hold nothing to summarize")
    model = get_model(job.model_id, max_retries=job.max_retries, catalog=job.catalog)
    response = model.respond(build_request(job, events), on_delta)
    text = response.text.strip()
    if response.stop_reason not in ("end_turn", "stop_sequence"):
        raise UserError(
            f"the summarizer ({job.model_id}) stopped early ({response.stop_reason}); "
            "nothing was written"
        )
    if not text:
        raise UserError(
            f"the summarizer ({job.model_id}) returned an empty response; nothing was written"
        )
    return text, usage_metadata(response.usage, job.model_id, SUMMARY_KEY)
