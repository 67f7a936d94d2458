"""`jp query` (alias `jp q`): ask the model, adding one turn to a conversation."""

from __future__ import annotations

import sys
from typing import Any

import click

from gitstore import Event
from porcelain.commands.context import App
from porcelain.commands.options import compact_specs
from porcelain.errors import UsageError

OFFLINE_MODEL = "offline/jp"


@click.command()
@click.argument("words", nargs=-1)
@click.option("-n", "--new", "new", is_flag=True, help="Start a new conversation (made active).")
@click.option("-i", "--id", "target", metavar="ID", help="Query this conversation instead.")
@click.option(
    "-m",
    "--model",
    "model",
    metavar="PROVIDER/NAME",
    help="The model for this query (recorded in the conversation).",
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
    specs: tuple[str, ...],
    no_persist: bool,
    title: str | None,
) -> None:
    """Ask the model; the answer streams as it arrives.

    TEXT is the rest of the command line (use `--` before text that starts
    with a dash); with no TEXT, standard input is read.  The request is
    committed before the model is called, so nothing you wrote is lost when
    the provider fails.
    """
    from porcelain.app.targets import resolve

    if new and target:
        raise UsageError("--new and --id do not go together")
    text = " ".join(words).strip()
    if not text and not sys.stdin.isatty():
        text = sys.stdin.read().strip()
    if not text:
        raise UsageError("the query is empty", 'give the text: `jp q "your question"`')
    app.config()  # refuse a broken configuration before anything is written
    if specs:  # and a bad compaction spec
        from porcelain.domain.compaction.dsl import parse_spec

        for spec in specs:
            if spec:
                parse_spec(spec)
    store = app.store()
    fresh = new or (target is None and store.active() is None)
    if fresh:
        _query_fresh(app, text, model, specs, no_persist, title, announce=not new)
    else:
        cid = resolve(store, target, archived_ok=False).cid
        with store.hold(cid, wait=10.0):
            _query_existing(app, cid, text, model, specs, no_persist)


def _query_fresh(
    app: App,
    text: str,
    model: str | None,
    specs: tuple[str, ...],
    no_persist: bool,
    title: str | None,
    announce: bool,
) -> None:
    """A query that starts a conversation: every check runs before it is created."""
    from porcelain.app.lifecycle import fresh_id, new_conversation, start_event

    store = app.store()
    wanted = _cli_delta(app, model)
    config = app.config(deltas=[wanted])
    model_id = config.model_id() or _default_model(app, quiet=True)
    _precheck(app, model_id, config, activates=not no_persist)
    if no_persist:  # nothing is written, not even the new conversation
        cid = fresh_id(store)
        _run(app, cid, [start_event(cid)], "", text, model, specs, no_persist)
        return
    cid = new_conversation(store, title)
    if announce:
        app.output.note(f"Started conversation {cid} (there was no active one).")
    with store.hold(cid, wait=10.0):
        conv = store.load(cid)
        _run(app, cid, conv.events, conv.tip, text, model, specs, no_persist)


def _query_existing(
    app: App,
    cid: str,
    text: str,
    model: str | None,
    specs: tuple[str, ...],
    no_persist: bool,
) -> None:
    from porcelain.app.lifecycle import jp_deltas

    store = app.store()
    conv = store.load(cid)
    config = app.config(deltas=[*jp_deltas(conv.events), _cli_delta(app, model)])
    _precheck(app, config.model_id() or _default_model(app, quiet=True), config, False)
    if specs and not no_persist:
        from porcelain.app.compaction.run import compact_silently

        compact_silently(app, cid, specs)
        conv = store.load(cid)
    _run(app, cid, conv.events, conv.tip, text, model, specs, no_persist)


def _precheck(app: App, model_id: str, config: Any, activates: bool) -> None:
    """What can fail before the model is called fails before anything is written:
    the provider, its credentials, the model id; JP_HEAD when it will move."""
    from porcelain.app.query.turn import precheck

    precheck(model_id, config)
    if activates:
        app.store().check_unlocked("JP_HEAD")


def _run(
    app: App,
    cid: str,
    events: list[Event],
    tip: str,
    text: str,
    model: str | None,
    specs: tuple[str, ...],
    no_persist: bool,
) -> None:
    """The turn itself, on a conversation held (or, with --no-persist, only read)."""
    from gitstore import record_activation
    from porcelain.app.lifecycle import config_delta, jp_deltas
    from porcelain.app.query.turn import TurnContext, commit, run_turn
    from porcelain.render.stream import StreamView

    store = app.store()
    if specs and no_persist:
        app.output.note("note: --no-persist writes nothing, so -k compacts nothing")
    recorded = jp_deltas(events)
    wanted = _cli_delta(app, model)
    config = app.config(deltas=[*recorded, wanted])
    model_id = config.model_id() or _default_model(app)
    ctx = TurnContext(
        store,
        cid,
        config,
        model_id,
        persist=not no_persist,
        confirm=_confirmer(app),
        events=list(events),
        tip=tip,
    )
    delta = _delta_to_record(recorded, wanted)
    if delta:
        commit(ctx, [config_delta(delta)])
    view = StreamView(app.output)
    if not no_persist:
        record_activation(store, cid)
    written = run_turn(ctx, text, view)
    if app.output.json:
        app.output.data({"id": cid, "model": model_id, "events": written})


def _cli_delta(app: App, model: str | None) -> dict[str, Any]:
    """What this command's -m, -c and --cfg record in the conversation: only what a
    conversation may set (the trust rule); the rest applies to this command alone."""
    from porcelain.config import Recorded, filter_delta, validate

    layers = app.cli_layers()
    if model:
        validate({"assistant": {"model": {"id": model}}}, "--model")
        layers.setdefault("assistant", {}).setdefault("model", {})["id"] = model
    chosen = layers.get("assistant", {}).get("model", {}).get("id")
    if isinstance(chosen, str):  # the id an alias stands for is what is recorded
        layers["assistant"]["model"]["id"] = app.config().resolve_model(chosen)
    wanted, _ = filter_delta(Recorded(layers, "--cfg"), app.config().tools())
    return wanted


def _delta_to_record(recorded: list[dict[str, Any]], wanted: dict[str, Any]) -> dict[str, Any]:
    from porcelain.config import diff_delta, merge

    if not wanted:
        return {}
    current: dict[str, Any] = {}
    for delta in recorded:
        current = merge(current, delta)
    return diff_delta(current, wanted)


def _default_model(app: App, quiet: bool = False) -> str:
    if quiet:
        return "anthropic/claude-sonnet-4-5" if app.has_api_key() else OFFLINE_MODEL
    if app.has_api_key():
        app.output.note(
            "note: no model configured; using anthropic/claude-sonnet-4-5 "
            "(set assistant.model.id to choose)"
        )
        return "anthropic/claude-sonnet-4-5"
    app.output.note(
        f"note: no model configured and no ANTHROPIC_API_KEY; using {OFFLINE_MODEL}, "
        "jp's built-in offline model"
    )
    return OFFLINE_MODEL


def _confirmer(app: App) -> Any:
    if app.yes:
        return lambda question: True
    if not sys.stdin.isatty():
        return None
    return app.output.confirm
