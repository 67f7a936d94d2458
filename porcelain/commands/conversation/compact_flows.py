"""The non-interactive `compact` command's work: rules, resets, output."""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

from gitstore import turns
from porcelain import clock
from porcelain.app.compaction.run import compact, default_model
from porcelain.app.recorded import conversation_deltas
from porcelain.app.review.start import refuse_if_open, refuse_if_review
from porcelain.app.targets import resolve
from porcelain.commands.context import App
from porcelain.commands.conversation.compact_options import CompactOptions
from porcelain.domain.compaction import withdraw
from porcelain.domain.compaction.dsl import parse_spec
from porcelain.domain.compaction.overlays import (
    Overlay,
    overlay_label,
    parse_tool_mode,
    reset_event,
    standing_overlays,
)
from porcelain.domain.compaction.rangecheck import check_range_flags
from porcelain.domain.compaction.rules import adhoc_rule, effective_rules, rules_from_config
from porcelain.errors import UserError


def run(app: App, target: str | None, opts: CompactOptions) -> None:
    overrides = opts.overrides()
    store = app.store()
    loc = resolve(store, target, archived_ok=False)
    dry = opts.dry_run
    refuse_if_review(store, loc.cid)
    if not dry:
        refuse_if_open(store, loc.cid, starting=False)
    with nullcontext() if dry else store.refs.hold(loc.cid, wait=10.0):  # a dry run only reads
        conv = store.log.load(loc.cid)  # read once, for the checks, the configuration and the run
        events = conv.events
        check_range_flags(overrides, turns.turn_count(events), opts.typed_range())
        config = app.config(deltas=conversation_deltas(store, conv))
        rules = _rules(opts, config)
        outcome = compact(
            store,
            conv,
            config,
            rules,
            overrides,
            dry_run=dry,
            model_override=config.resolve_model(opts.model) if opts.model else None,
            fallback_model=default_model(app),
            progress=app.output.note,
        )
    if app.output.emit_json(_outcome_json(loc.cid, dry, outcome)):
        return
    if not outcome.planned:
        app.output.line("Nothing to compact.")
        return
    for line in outcome.lines:
        app.output.line(line)


def _rules(opts: CompactOptions, config: Any) -> list[Any]:
    """The rules of this run: the flags' ad-hoc one, `-k` specs over the configured
    rules, or the configured rules alone."""
    if opts.summarize is not None or opts.reasoning or opts.tools:
        tools = parse_tool_mode(opts.tools) if opts.tools else None
        summarize = opts.summarize is not None
        return [adhoc_rule(opts.reasoning, tools, summarize, opts.summarize or None)]
    configured = rules_from_config(config.rules())
    if opts.specs:
        inline = [parse_spec(s) for s in opts.specs if s]
        return effective_rules(configured, inline, "" in opts.specs)
    return configured


def _outcome_json(cid: str, dry: bool, outcome: Any) -> dict[str, Any]:
    summaries = outcome.summaries or [None] * len(outcome.planned)
    return {
        "id": cid,
        "dry_run": dry,
        "timeline": outcome.lines,
        "compactions": [
            {"from_turn": p.from_turn + 1, "to_turn": p.to_turn + 1, "label": p.label, "summary": t}
            for p, t in zip(outcome.planned, summaries, strict=True)
        ],
    }


def reset(app: App, target: str | None, which: str, dry_run: bool, yes: bool = True) -> None:
    """Withdraw compactions by appending an event: history is never rewritten.

    Unless ``yes``, it names what it withdraws and asks; a no changes nothing.
    """
    store = app.store()
    loc = resolve(store, target, archived_ok=False)
    refuse_if_review(store, loc.cid)
    if not dry_run:
        refuse_if_open(store, loc.cid, starting=False)
    done = False
    with nullcontext() if dry_run else store.refs.hold(loc.cid, wait=10.0):
        conv = store.log.load(loc.cid)
        chosen = _chosen(standing_overlays(conv.events), which, loc.cid)
        if not chosen:
            message = "No compactions to withdraw."
        elif dry_run:
            message = withdraw.done_line(chosen, dry_run=True)
        else:
            if not yes:
                for line in withdraw.plan_lines(loc.cid, chosen, conv.events):
                    app.output.say(line)
            if app.confirm("Withdraw?", yes):
                withdrawn = None if which == "all" else [chosen[0].ordinal]
                store.log.append(
                    loc.cid,
                    [reset_event(clock.now_text(), withdrawn)],
                    conv.tip,
                    f"jp conversation compact --reset {loc.cid}",
                )
                done = True
                message = withdraw.done_line(chosen, dry_run=False)
            else:
                message = "Nothing withdrawn; the compactions stand."
    removed = [
        {"from_turn": o.from_turn + 1, "to_turn": o.to_turn + 1, "label": overlay_label(o)}
        for o in chosen
    ]
    app.output.emit(
        {"id": loc.cid, "dry_run": dry_run, "withdrawn": done, "removed": removed}, message
    )


def _chosen(standing: list[Overlay], which: str, cid: str) -> list[Overlay]:
    """The standing compactions ``which`` names: ``all``, or one by its number."""
    if which == "all":
        return standing
    n = int(which)
    if n > len(standing):
        raise UserError(
            f"compaction {n} out of range (the conversation has {withdraw.count(len(standing))})",
            f"list them with `jp conversation show {cid}`",
        )
    return [standing[n - 1]]
