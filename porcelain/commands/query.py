"""`jp query` (alias `jp q`): ask the model, adding one turn to a conversation."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from gitstore import Conversation, Event, activity
from porcelain.app.lifecycle import (
    config_delta,
    create_conversation,
    fresh_id,
    start_event,
)
from porcelain.app.query.meter import fill_to_report
from porcelain.app.query.plan import QueryPlan, command_delta
from porcelain.app.query.prompt import Ask, gather, piped_text
from porcelain.app.query.turn import TurnContext, commit, is_review, run_turn
from porcelain.app.recorded import accept, conversation_deltas, naming
from porcelain.app.targets import resolve
from porcelain.commands.context import App
from porcelain.commands.options import compact_specs
from porcelain.commands.optvalue import Command
from porcelain.config.toolenv import provider_keys
from porcelain.domain.defaults import DEFAULT_MODEL, OFFLINE_MODEL
from porcelain.domain.token_usage import total
from porcelain.errors import UsageError, UserError
from porcelain.render.meter import meter_json, meter_line
from porcelain.render.turnview import TerminalView

if TYPE_CHECKING:
    from porcelain.config import Config


@click.command(cls=Command)
@click.argument("words", nargs=-1)
@click.option("-n", "--new", "new", is_flag=True, help="Start a new conversation (made active).")
@click.option("-i", "--id", "target", metavar="ID", help="Query this conversation instead.")
@click.option(
    "-m",
    "--model",
    "model",
    metavar="PROVIDER/NAME",
    help="The model to use: recorded in the conversation, so its next queries use it too "
    "(`default`: drop the recorded one, back to your files' model).",
)
@click.option(
    "-a",
    "--attach",
    "attach",
    multiple=True,
    metavar="PATH|GLOB|-",
    help="Attach a text file, image or PDF, the files a glob matches (never through a "
    "link out of its folder), or standard input (-); recorded in the request (repeatable).",
)
@click.option(
    "--attach-cmd",
    "attach_cmd",
    multiple=True,
    metavar="CMD",
    help="Attach the output of a command (run without a shell; repeatable).",
)
@click.option("-e", "--edit", is_flag=True, help="Write the query in $EDITOR (TEXT as the start).")
@click.option(
    "-s",
    "--system",
    metavar="TEXT",
    help="A one-off instruction added to the system prompt for this query only "
    "(recorded in its request, so --retry asks the same way).",
)
@click.option(
    "--no-render",
    is_flag=True,
    help="Show the answer as the model wrote it (on a terminal it is rendered as Markdown).",
)
@click.option(
    "--retry",
    is_flag=True,
    help="Answer the last request again: an unanswered one in place, an answered one "
    "in a fork (the earlier answer stays).",
)
@click.option(
    "-t",
    "--template",
    metavar="NAME",
    help="Ask through the template [templates.NAME] of your configuration: its prompt "
    "($input is TEXT), system instruction and model.",
)
@click.option(
    "-p",
    "--param",
    "params",
    nargs=2,
    multiple=True,
    metavar="KEY VALUE",
    help="A template's parameter ($KEY in it; repeatable).",
)
@compact_specs
@click.option("-P", "--no-persist", is_flag=True, help="Write nothing to the store.")
@click.option("--title", help="Title for a new conversation.")
@click.pass_obj
def query(
    app: App,
    words: tuple[str, ...],
    new: bool,
    target: str | None,
    model: str | None,
    attach: tuple[str, ...],
    attach_cmd: tuple[str, ...],
    edit: bool,
    system: str | None,
    no_render: bool,
    retry: bool,
    template: str | None,
    params: tuple[tuple[str, str], ...],
    specs: tuple[str, ...],
    no_persist: bool,
    title: str | None,
) -> None:
    """Ask the model; the answer streams as it arrives.

    TEXT is the rest of the command line (use `--` before text that starts
    with a dash); piped standard input goes with it as an attachment
    (`git diff | jp q "review this"`).  With no TEXT, standard input is the
    text, or on a terminal $EDITOR opens.  The request is committed before the model is called, so
    nothing you wrote is lost when the provider fails: `jp q --retry` then
    asks the model again.
    """
    if new and target:
        raise UsageError("--new and --id do not go together")
    if params and not template:
        raise UsageError("-p gives a template's parameter", "name the template: -t NAME")
    if retry:
        _refuse_with_retry(words, new, attach, attach_cmd, edit, title, system or template)
        ask = Ask(retry=True)
    elif template and not (words or edit or attach or attach_cmd):
        ask = Ask(piped_text())  # the template's own prompt may be the whole query
    else:
        ask = gather(
            words,
            edit,
            attach,
            attach_cmd,
            lambda: app.store().local.folder,
            lambda: provider_keys(app.config().data),
        )
        ask.system = system.strip() if system and system.strip() else None
    ask.render = not no_render
    base = app.config()  # refuse a broken configuration before anything is written
    if template:
        if edit:
            raise UsageError("-t and --edit do not go together", "give the text after -t NAME")
        templated = _templated(ask, template, params, base)
        model = model or templated
    if specs:  # and a bad compaction spec
        # lazy: only `q -k` loads the compaction modules
        from porcelain.domain.compaction.dsl import parse_spec

        for spec in specs:
            if spec:
                parse_spec(spec)
    store = app.store()
    fresh = not retry and (new or (target is None and store.refs.active() is None))
    wanted = _Wanted(app, model, base)
    try:
        if fresh:
            _query_fresh(app, ask, wanted, specs, no_persist, title, announce=not new)
        else:
            cid = resolve(store, target, archived_ok=False).cid
            with store.refs.hold(cid, wait=10.0):
                _query_existing(app, cid, ask, wanted, specs, no_persist)
    except BaseException:
        _name_the_draft(app, ask)
        raise


def _templated(
    ask: Ask, name: str, params: tuple[tuple[str, str], ...], base: Config
) -> str | None:
    """Put ``ask`` through template ``name`` (the user's files only: a conversation
    records none); the template's model, unless -m named one."""
    # lazy: only `q -t` loads the template filler
    from porcelain.domain.templates import fill

    kept = base.data.get("templates")
    table = kept.get(name) if isinstance(kept, dict) else None
    if not isinstance(table, dict):
        known = ", ".join(sorted(kept)) if isinstance(kept, dict) and kept else "none"
        raise UsageError(
            f"no template {name!r} in your configuration (templates: {known})",
            "a template is a [templates.NAME] table in your config file (docs/everyday.md, Templates)",
        )
    filled = fill(name, table, ask.text, params)
    ask.text = filled.text
    if filled.system:
        ask.system = "\n\n".join(x for x in (filled.system, ask.system) if x)
    return filled.model


class _Wanted:
    """What this command's -m, -c and --cfg record, worked out once, when first needed."""

    def __init__(self, app: App, model: str | None, base: Config) -> None:
        self.app, self.model, self.base = app, model, base
        self._delta: dict[str, Any] | None = None

    def __call__(self) -> dict[str, Any]:
        if self._delta is None:
            self._delta = command_delta(self.app.cli_layers(), self.model, self.base)
        return self._delta


def _name_the_draft(app: App, ask: Ask) -> None:
    """A failure after the editor closed, before the request was stored: say where
    the text is (the editor's own failures say so themselves)."""
    if ask.draft is None or ask.editing:
        return
    # lazy: the editor module loads only when the editor was used
    from porcelain.app.query.editor import draft_path

    kept = draft_path(ask.draft, ask.draft_cid)
    again = f"jp q -i {ask.draft_cid} -e" if ask.draft_cid else "jp q --new -e"
    if kept.exists():
        app.output.note(f"note: your text is kept in {kept}; `{again}` opens it again")


def _refuse_with_retry(
    words: tuple[str, ...],
    new: bool,
    attach: tuple[str, ...],
    attach_cmd: tuple[str, ...],
    edit: bool,
    title: str | None,
    system: str | None,
) -> None:
    """--retry asks the stored request again: nothing of a new one goes with it."""
    for given, name in (
        (words, "TEXT"),
        (new, "--new"),
        (attach or attach_cmd, "--attach"),
        (edit, "--edit"),
        (title, "--title"),
        (system, "--system"),
    ):
        if given:
            raise UsageError(
                f"--retry and {name} do not go together",
                "--retry answers the stored request again; ask a new one without it",
            )


def _query_fresh(
    app: App,
    ask: Ask,
    wanted: _Wanted,
    specs: tuple[str, ...],
    no_persist: bool,
    title: str | None,
    announce: bool,
) -> None:
    """A query that starts a conversation: every check runs before it is created."""
    store = app.store()
    plan = QueryPlan.of(app, wanted(), specs=specs)
    _precheck(app, plan, activates=not no_persist, ask=ask)
    ask.edit(None)  # a new conversation's draft
    if no_persist:  # nothing is written, not even the new conversation
        cid = fresh_id(store)
        _run(app, Conversation(cid, "", False, [start_event(cid)], []), ask, plan, no_persist)
        return
    cid, created = create_conversation(store, title)
    if announce:
        app.output.note(f"Started conversation {cid} (there was no active one).")
    with store.refs.hold(cid, wait=10.0):
        conv = store.log.load(cid)
        if created not in conv.commits:  # never a turn on a chain this process did not start
            raise UserError(
                f"conversation {cid} was replaced by another writer before this query's "
                "turn; nothing of the query was written",
                "run the command again",
            )
        _run(app, conv, ask, plan, no_persist)


def _query_existing(
    app: App,
    cid: str,
    ask: Ask,
    wanted: _Wanted,
    specs: tuple[str, ...],
    no_persist: bool,
) -> None:
    store = app.store()
    conv = store.log.load(cid)
    if ask.retry:
        # lazy: only --retry loads the retry module
        from porcelain.app.query.retry import fork_at_request, state

        if state(conv.events) == "answered" and not no_persist:
            fork = fork_at_request(store, cid, conv.events, conv.commits)
            app.output.note(f"The answer in {cid} stays; answering again in its fork {fork}.")
            store.refs.set_active(fork)
            with store.refs.hold(fork, wait=10.0):
                _query_existing(app, fork, ask, wanted, specs, no_persist)
            return
    plan = QueryPlan.of(app, wanted(), conversation_deltas(store, conv), specs)
    _precheck(app, plan, False, ask)
    ask.edit(cid)
    if specs and not no_persist:
        _name_foreign(app, cid, plan, no_persist)  # before the compaction asks it
        # lazy: only `q -k` loads the compaction modules
        from porcelain.app.compaction.run import compact_silently

        compact_silently(app, cid, specs, plan.config, plan.rules, plan.model_id)
        conv = store.log.load(cid)
        _run(app, conv, ask, plan, no_persist, named=True)
        return
    _run(app, conv, ask, plan, no_persist)


def _precheck(app: App, plan: QueryPlan, activates: bool, ask: Ask) -> None:
    """What can fail before the model is called fails before anything is written:
    the provider, its credentials, the model id, whether it takes the attached
    images and documents; JP_HEAD when it will move.  The editor opens after
    it (``Ask.edit``): what does not depend on the text is checked first."""
    plan.check(ask.attachments)
    if activates:
        app.store().refs.check_unlocked("JP_HEAD")


def _name_foreign(app: App, cid: str, plan: QueryPlan, no_persist: bool) -> None:
    """A model chosen by a delta not yet accepted is named once, before it is used."""
    if plan.foreign is None:
        return
    app.output.note(naming(cid, plan.model_id, plan.foreign))
    if not no_persist:
        accept(app.store(), [plan.foreign.commit])


def _run(
    app: App, conv: Conversation, ask: Ask, plan: QueryPlan, no_persist: bool, named: bool = False
) -> None:
    """The turn itself, on a conversation held (or, with --no-persist, only read)."""
    store, cid = app.store(), conv.cid
    if plan.specs and no_persist:
        app.output.note("note: --no-persist writes nothing, so -k compacts nothing")
    recorded = conversation_deltas(store, conv)
    if plan.recorded != recorded:  # another writer recorded a delta since the plan
        plan = QueryPlan.of(app, plan.wanted, recorded, plan.specs)
        named = False
    if plan.defaulted:
        _default_note(app)
    if not named:
        _name_foreign(app, cid, plan, no_persist)
    ctx = TurnContext(
        store,
        cid,
        plan.config,
        plan.model_id,
        persist=not no_persist,
        confirm=_confirmer(app),
        events=list(conv.events),
        tip=conv.tip,
        model=plan.model,
        note=app.output.note,
    )
    delta = plan.delta
    if delta:
        commit(ctx, [config_delta(delta)])
        if not no_persist:  # the user's own choice: a later query keeps it
            accept(store, [ctx.tip])
    view = TerminalView(app.output, markdown=ask.render and app.output.colours())
    if not no_persist and store.refs.active() == cid:  # `q -i` on another one activates nothing
        activity.record_activation(store, cid)
    if ask.retry:
        # lazy: only --retry loads the retry module
        from porcelain.app.query.retry import retry_turn

        written = retry_turn(ctx, view)
    else:
        for note in ask.notes:
            app.output.note(note)
        written = run_turn(ctx, ask.text, view, ask.attachments, _draft_sent(ask), ask.system)
    _report(app, cid, plan, ctx, written)


def _report(app: App, cid: str, plan: QueryPlan, ctx: TurnContext, written: list[Event]) -> None:
    fill = fill_to_report(ctx.events, plan.model_id, plan.config)
    value = {
        "id": cid,
        "model": plan.model_id,
        "events": written,
        "usage": total(written),
        "context": None if fill is None else meter_json(fill),
    }
    if app.output.emit_json(value) or fill is None or is_review(ctx.events):
        return
    app.output.note(meter_line(cid, plan.model_id, fill))  # the text answer streamed


def _draft_sent(ask: Ask) -> Any:
    """What to do once the request is committed: the editor's draft is no longer needed."""
    if ask.draft is None:
        return None
    # lazy: the editor module loads only when the editor was used
    from porcelain.app.query.editor import discard_draft

    where, cid = ask.draft, ask.draft_cid
    return lambda: discard_draft(where, cid)


def _default_note(app: App) -> None:
    """No model is configured: say which one jp chose."""
    if app.has_api_key():
        app.output.note(
            f"note: no model configured; using {DEFAULT_MODEL} (set assistant.model.id to choose)"
        )
        return
    app.output.note(
        f"note: no model configured and no ANTHROPIC_API_KEY; using {OFFLINE_MODEL}, "
        "jp's built-in offline model"
    )


def _confirmer(app: App) -> Any:
    if app.yes:
        return lambda question: True
    if not sys.stdin.isatty():
        return None
    return app.output.confirm
