"""One turn of a conversation: the request, the model's answer, its tool calls.

Every event is committed as soon as it is complete (the request before the
model is called, each answer and tool result as it arrives), so a crash or
a provider error keeps the user's message and everything finished.  The
conversation is held for the whole turn, so two writers never interleave.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from gitstore import PROPOSE_COMPACTION, Event, Kind, Store, make
from porcelain import clock
from porcelain.app.query.mcp_tools import served
from porcelain.app.query.recall import with_recall
from porcelain.app.query.registry import BuiltinTool, ToolCall, ToolOutcome
from porcelain.app.query.tools import (
    confirmation_question,
    enabled_tools,
    needs_confirmation,
    response_event,
    run_command,
    specs,
    unapproved,
)
from porcelain.config import Config
from porcelain.config.toolenv import provider_keys
from porcelain.domain.interrupted import mark
from porcelain.domain.recall import RECALL, summary_note
from porcelain.domain.review.markers import review_record
from porcelain.domain.token_usage import with_usage
from porcelain.domain.view import model_events
from porcelain.errors import Interrupted, ProviderError, UserError
from porcelain.models.base import DeltaKind, Model, ModelRequest, StreamInterrupted
from porcelain.models.catalog import Catalog
from porcelain.models.factory import get_model

MAX_ROUNDS = 24
ONE_OFF_SYSTEM = "system"  # the request's metadata key for `jp q -s TEXT`
DEFAULT_INSTRUCTIONS = (
    "You are a helpful assistant working with the user in a terminal. "
    "Be precise and concise; name files, commands and numbers exactly."
)


def instructions(config: Config, events: list[Event]) -> str:
    """The system prompt of this turn: the configured instructions, then the one-off
    instruction its request recorded (``jp q -s``), which applies to this turn only."""
    base = config.instructions() or DEFAULT_INSTRUCTIONS
    extra = one_off_system(events)
    return f"{base}\n\n{extra}" if extra else base


def one_off_system(events: list[Event]) -> str | None:
    """The `-s/--system` text of the last request, if it has one."""
    for event in reversed(events):
        if event.get("type") == Kind.CHAT_REQUEST:
            value = (event.get("metadata") or {}).get(ONE_OFF_SYSTEM)
            return value if isinstance(value, str) and value.strip() else None
    return None


class TurnView(Protocol):
    """What a turn shows as it runs (the terminal's is `porcelain.render.turnview.TerminalView`):
    a model's deltas as they arrive, a wait, and each tool call and result."""

    def __call__(self, kind: DeltaKind, text: str) -> None: ...

    def waiting(self, label: str = ...) -> None: ...

    def finish(self, cut: bool = False) -> None: ...

    def tool_call(self, event: Event) -> None: ...

    def tool_result(self, name: str, content: str, is_error: bool) -> None: ...


@dataclass
class TurnContext:
    """What tools and the loop need to know about the running turn."""

    store: Store
    cid: str
    config: Config
    model_id: str
    persist: bool = True
    confirm: Any = None  # callable(question) -> bool, or None when nobody can answer
    events: list[Event] = field(default_factory=list)
    tip: str = ""
    written: list[Event] = field(default_factory=list)
    model: Model | None = None  # the plan's (``plan.QueryPlan``); else made from config
    note: Callable[[str], None] = lambda _: None  # one line for the user (an MCP server's fault)


def model_for(model_id: str, config: Config) -> Model:
    """The model behind ``model_id`` among the providers ``config`` defines."""
    return get_model(model_id, max_retries=config.max_retries(), catalog=Catalog.of(config.data))


def commit(ctx: TurnContext, new: list[Event]) -> None:
    """Append finished events (or only remember them with --no-persist)."""
    if ctx.persist and new:
        ctx.tip = ctx.store.log.append(ctx.cid, new, ctx.tip, f"jp query {ctx.cid}")
    ctx.events.extend(new)  # only once stored: ``written`` is what the store holds
    ctx.written.extend(new)


def run_turn(
    ctx: TurnContext,
    text: str,
    view: TurnView,
    attachments: list[dict[str, Any]] | None = None,
    committed: Callable[[], None] | None = None,
    system: str | None = None,
) -> list[Event]:
    """Start a turn with ``text`` (and ``attachments``) and run the model until it
    ends its turn; ``committed`` is called once the request is stored."""
    request = make.chat_request(clock.now_text(), text)
    if ctx.config.user_name():
        request["author"] = ctx.config.user_name()
    if attachments:
        request["attachments"] = attachments
    if system:  # recorded, so a retry of this request is asked the same way
        request["metadata"] = {ONE_OFF_SYSTEM: system}
    before = len(ctx.written)
    try:
        commit(ctx, [make.turn_start(request["timestamp"]), request])
        if committed is not None and ctx.persist:
            committed()
        continue_turn(ctx, view)
    except KeyboardInterrupt:
        raise Interrupted(interrupted_message(ctx, len(ctx.written) - before)) from None
    return ctx.written


def interrupted_message(ctx: TurnContext, kept: int) -> str:
    """What Ctrl-C left: ``kept`` events of this turn were committed (2 are the request)."""
    if not ctx.persist:
        return "interrupted: nothing was saved (--no-persist)"
    if kept < 2:
        return f"interrupted: nothing of this query was saved in {ctx.cid}"
    answer = kept - 2
    events = f"{answer} event{'s' if answer != 1 else ''} of the answer"
    return (
        f"interrupted: the request and {events} are saved in {ctx.cid}; "
        "`jp q --retry` answers it again"
    )


def continue_turn(ctx: TurnContext, view: TurnView) -> None:
    """Run the model until it ends its turn; MCP servers live as long as this."""
    config = Config.defaults() if is_review(ctx.events) else ctx.config  # a review uses no server
    with served(config, ctx.note, lambda name: view.waiting(f"starting MCP server {name}")) as mcp:
        if mcp.servers is not None:
            view.finish()  # the spinner of the servers' start
        _continue(ctx, view, mcp.tools)


def _continue(ctx: TurnContext, view: TurnView, extra: Mapping[str, BuiltinTool]) -> None:
    tools = with_recall({**enabled_tools(ctx.config), **extra}, ctx.config, ctx.events)
    heading = summary_note if RECALL in tools else None
    if is_review(ctx.events):
        tools = {k: v for k, v in tools.items() if k == PROPOSE_COMPACTION}
    model = ctx.model or model_for(ctx.model_id, ctx.config)
    for _ in range(MAX_ROUNDS):
        request = ModelRequest(
            model_id=ctx.model_id,
            system=instructions(ctx.config, ctx.events),
            events=model_events(ctx.events, heading),
            tools=specs(tools),
            max_tokens=ctx.config.max_tokens(),
            thinking_budget=ctx.config.thinking_budget(),
        )
        view.waiting()
        try:
            response = model.respond(request, view)
        except KeyboardInterrupt as exc:
            view.finish(cut=True)
            commit(ctx, mark(getattr(exc, "partial_events", []), "user"))
            raise
        except StreamInterrupted as exc:
            view.finish(cut=True)
            commit(ctx, mark(exc.partial_events, "stream"))
            exc.hint = _after_the_break(ctx)
            raise
        except ProviderError as exc:
            view.finish()
            if ctx.persist:  # the request is stored: say how to have it answered
                retry = "`jp q --retry` asks again (the request is saved)"
                exc.hint = f"{exc.hint}, then {retry}" if exc.hint else retry
            raise
        view.finish()
        commit(ctx, with_usage(response.events, response.usage, ctx.model_id))
        calls = response.tool_calls
        if not calls:
            return
        for event in calls:
            view.tool_call(event)
            call = ToolCall(
                str(event["id"]), str(event["name"]), dict(event.get("arguments") or {})
            )
            invalid = (event.get("metadata") or {}).get("invalid_arguments")
            if invalid is not None:
                outcome = ToolOutcome(f"the arguments of {call.name} are not a JSON object", True)
            else:
                outcome = _run_tool(ctx, tools, call)
            view.tool_result(call.name, outcome.content, outcome.is_error)
            result = response_event(call, outcome, ctx.store.limits)
            if ctx.config.get("redaction.on_tool_result") is True:  # neither stored nor sent
                # lazy: the scanner loads only for a user who asked for this
                from porcelain.app.secretcheck import redacted_result

                result = redacted_result(result)
            commit(ctx, [result])
    raise UserError(
        f"the model kept calling tools for {MAX_ROUNDS} rounds; stopped",
        "ask it to finish, or check the tools it is calling",
    )


def _after_the_break(ctx: TurnContext) -> str:
    if not ctx.persist:
        return "nothing was saved (--no-persist); ask again"
    return (
        "what arrived is kept, marked interrupted; "
        "`jp q --retry` answers again in the same conversation"
    )


def _run_tool(
    ctx: TurnContext, tools: dict[str, BuiltinTool | dict[str, Any]], call: ToolCall
) -> ToolOutcome:
    tool = tools.get(call.name)
    if tool is None:
        return ToolOutcome(f"unknown or disabled tool {call.name!r}", True)
    if needs_confirmation(tool):
        if ctx.confirm is None:
            return ToolOutcome(unapproved(call, tool), True)
        if not ctx.confirm(confirmation_question(call, tool)):
            return ToolOutcome(f"the user declined to run {call.name}", True)
    try:
        if isinstance(tool, BuiltinTool):
            return tool.run(call, ctx)
        return run_command(
            call.name,
            tool,
            call,
            secrets=provider_keys(ctx.config.data),
            cap=ctx.store.limits.max_event_bytes,
        )
    except UserError as exc:
        return ToolOutcome(exc.message, True)


def is_review(events: list[Event]) -> bool:
    return review_record(events) is not None
