"""What `compact --interactive`, `--continue` and `--abort` print and ask."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gitstore import Event
from porcelain.app.compaction.run import default_model
from porcelain.app.recorded import accept, chain_deltas, foreign_model, naming
from porcelain.app.review import finish as steps
from porcelain.app.review.start import refuse_if_review, start_review
from porcelain.app.targets import resolve
from porcelain.commands.context import App
from porcelain.commands.conversation.compact_options import CompactOptions
from porcelain.domain.compaction.proposal import Proposal, span
from porcelain.domain.compaction.rangecheck import check_range_flags


def interactive(app: App, target: str | None, opts: CompactOptions) -> None:
    overrides = opts.overrides()
    store = app.store()
    source = resolve(store, target, archived_ok=False)
    refuse_if_review(store, source.cid)
    with store.refs.hold(source.cid, wait=10.0):
        source = store.refs.require(source.cid)  # where it is now that no one else writes it
        # read once, for the configuration and the review; only what they look at
        view = store.log.view_chain(source.tip)
        check_range_flags(overrides, view.facts.turn_count(), opts.typed_range())
        # the recorded model by `jp q`'s rule: the user's own deltas as theirs, another's named
        recorded = chain_deltas(store, source.cid, view)
        config = app.config(deltas=recorded)
        foreign = None if opts.model else foreign_model(config, recorded)
        if foreign is not None:
            app.output.note(naming(source.cid, str(config.model_id()), foreign))
            accept(store, [foreign.commit])
        started = start_review(
            store,
            source,
            config,
            overrides,
            config.resolve_model(opts.model) if opts.model else None,
            default_model(app),
            read=view,
            progress=app.output.note,
        )
    proposal = started.proposal
    if app.output.emit_json(
        {
            "id": started.review_id,
            "source_id": started.source_id,
            "prior_compactions": started.prior,
            "proposal": proposal.to_json() if proposal else None,
            "sends_tokens": started.sends,
        }
    ):
        return
    out = app.output
    out.line(f"Started review {started.review_id} of {started.source_id} (now active).")
    if started.prior == "drop":
        out.line("The source's earlier compactions are left out: the model sees every raw turn.")
    elif started.prior == "keep":
        out.line(
            "The source does not fit the review model's window: the model sees its "
            "earlier compactions, not the turns they replaced."
        )
    out.line("")
    out.line(started.proposal_text)
    out.line("")
    out.line(
        f"Each turn of this review (`jp q`) sends the review model about {started.sends:,} "
        "tokens of the source (estimated), with the discussion so far."
    )
    out.line("")
    out.line("Next:")
    out.line('  jp q "..."                          discuss it; the model records each revision')
    out.line("  jp conversation show                the current proposal")
    out.line("  jp conversation compact --continue  apply it to the source")
    out.line("  jp conversation compact --abort     end the review, source untouched")


def finish(app: App, *, abort: bool, yes: bool) -> None:
    store = app.store()
    if abort:
        done = steps.abort(store)
        lines = [f"Review {done.review_id} aborted and archived; {done.source_id} is untouched."]
        if store.refs.exists(done.source_id):
            lines.append(f"Active conversation: {done.source_id}")
        app.output.emit(
            {"review_id": done.review_id, "source_id": done.source_id, "applied": False},
            lines,
        )
        return

    def ask(proposal: Proposal, turns: int) -> bool:
        _, source_id = steps.active_review(store)
        for line in _confirmation(proposal, turns, store.log.load(source_id).events):
            app.output.say(line)
        return app.confirm("Apply?", yes)

    done = steps.apply(store, ask)
    if not done.applied:
        _declined(app, done)
        return
    if app.output.emit_json(
        {
            "review_id": done.review_id,
            "source_id": done.source_id,
            "applied": True,
            "already_applied": done.already,
            "compaction": done.proposal.to_json() if done.proposal else None,
        }
    ):
        return
    if done.already:
        app.output.line(
            f"The proposal of {done.review_id} was already applied to "
            f"{done.source_id}; finished archiving the review."
        )
    elif done.proposal is not None:
        p = done.proposal
        app.output.line(f"Applied to {done.source_id}: compacted {span(p.from_turn, p.to_turn)}.")
        app.output.line(f"Review {done.review_id} archived.")
    app.output.line(f"Active conversation: {done.source_id}")


def _declined(app: App, done: Any) -> None:
    if app.output.emit_json(
        {"review_id": done.review_id, "source_id": done.source_id, "applied": False}
    ):
        return
    app.output.line("Not applied; the review stays open.")
    app.output.line(
        "Discuss further with `jp q ...`, or end it with `jp conversation compact --abort`."
    )


def _confirmation(proposal: Proposal, turns: int, source: Sequence[Event]) -> list[str]:
    # lazy: coverage is computed only when a proposal is shown
    from porcelain.domain.compaction.coverage import coverage

    head, _, rest = proposal.render(turns).partition("\n")
    stay = max(0, turns - proposal.to_turn) + max(0, proposal.from_turn - 1)
    lines = [head, f"The conversation now has {_turns(turns)}; {_turns(stay)} stay uncompacted."]
    if rest.strip():
        lines += ["", rest.strip()]
    lines += ["", *coverage(source, proposal).lines(), ""]
    return lines


def _turns(n: int) -> str:
    return f"{n} turn" if n == 1 else f"{n} turns"
