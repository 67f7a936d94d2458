"""What `compact --interactive`, `--continue` and `--abort` print and ask."""

from __future__ import annotations

from typing import Any

from porcelain.commands.context import App
from porcelain.domain.compaction.proposal import Proposal


def interactive(app: App, target: str | None, opts: dict[str, Any]) -> None:
    from porcelain.app.compaction.run import default_model
    from porcelain.app.lifecycle import jp_deltas
    from porcelain.app.review.start import refuse_if_review, start_review
    from porcelain.app.targets import resolve
    from porcelain.commands.conversation.compact_flows import overrides_from

    overrides = overrides_from(opts)
    store = app.store()
    source = resolve(store, target, archived_ok=False)
    refuse_if_review(store, source.cid)
    with store.hold(source.cid, wait=10.0):
        source = store.require(source.cid)  # where it is now that no one else writes it
        # read once, for the configuration and the review; only what they look at
        view = store.view_chain(source.tip)
        config = app.config(deltas=jp_deltas([e for _, e in view.facts.internal_events()]))
        app.output.note(f"Drafting the opening summary of {source.cid}...")
        model = config.resolve_model(opts["model"]) if opts.get("model") else None
        started = start_review(
            store, source, config, overrides, model, default_model(app), view=view
        )
    if app.output.json:
        proposal = started.proposal
        app.output.data(
            {
                "id": started.review_id,
                "source_id": started.source_id,
                "prior_compactions": started.prior,
                "proposal": proposal.to_json() if proposal else None,
            }
        )
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
    out.line("Next:")
    out.line('  jp q "..."                          discuss it; the model records each revision')
    out.line("  jp conversation show                the current proposal")
    out.line("  jp conversation compact --continue  apply it to the source")
    out.line("  jp conversation compact --abort     end the review, source untouched")


def finish(app: App, *, abort: bool, yes: bool) -> None:
    from porcelain.app.review import finish as steps

    store = app.store()
    if abort:
        done = steps.abort(store)
        if app.output.json:
            app.output.data(
                {"review_id": done.review_id, "source_id": done.source_id, "applied": False}
            )
        else:
            app.output.line(
                f"Review {done.review_id} aborted and archived; {done.source_id} is untouched."
            )
            if store.exists(done.source_id):
                app.output.line(f"Active conversation: {done.source_id}")
        return

    def ask(proposal: Proposal, turns: int) -> bool:
        show = app.output.note if app.output.json else app.output.line
        for line in _confirmation(proposal, turns):
            show(line)
        return yes or app.output.confirm("Apply?")

    done = steps.apply(store, ask)
    if app.output.json:
        app.output.data(
            {
                "review_id": done.review_id,
                "source_id": done.source_id,
                "applied": True,
                "already_applied": done.already,
                "compaction": done.proposal.to_json() if done.proposal else None,
            }
        )
        return
    if done.already:
        app.output.line(
            f"The proposal of {done.review_id} was already applied to "
            f"{done.source_id}; finished archiving the review."
        )
    elif done.proposal is not None:
        p = done.proposal
        app.output.line(f"Applied to {done.source_id}: compacted turns {p.from_turn}..{p.to_turn}.")
        app.output.line(f"Review {done.review_id} archived.")
    app.output.line(f"Active conversation: {done.source_id}")


def _confirmation(proposal: Proposal, turns: int) -> list[str]:
    head, _, rest = proposal.render(turns).partition("\n")
    stay = max(0, turns - proposal.to_turn) + max(0, proposal.from_turn - 1)
    lines = [head, f"The conversation now has {turns} turns; {stay} turns stay uncompacted."]
    if rest.strip():
        lines += ["", rest.strip()]
    lines.append("")
    return lines
