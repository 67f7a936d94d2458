"""`jp conversation fork`: forking is branching."""

from __future__ import annotations

import click

from gitstore import activity
from porcelain.app.lifecycle import fork as do_fork
from porcelain.app.targets import resolve
from porcelain.commands.context import App
from porcelain.commands.options import compact_specs
from porcelain.commands.optvalue import Command
from porcelain.domain.turnfilter import keep_turns


@click.command(cls=Command)
@click.argument("target", required=False)
@click.option("-a", "--activate", is_flag=True, help="Make the fork the active conversation.")
@click.option("--first", type=click.IntRange(min=0), help="Keep only the first N turns.")
@click.option("--last", type=click.IntRange(min=0), help="Keep only the last N turns.")
@click.option("-t", "--title", help="A title for the fork.")
@compact_specs
@click.pass_obj
def fork(
    app: App,
    target: str | None,
    activate: bool,
    first: int | None,
    last: int | None,
    title: str | None,
    specs: tuple[str, ...],
) -> None:
    """Branch a conversation into a new one; prints the new id.

    The fork shares every commit of the source (`git merge-base` finds the
    fork point).  With --first/--last the kept turns are written as a new
    chain instead.
    """
    store = app.store()
    source = resolve(store, target)
    if specs:  # refuse a bad spec or config before the fork exists
        # lazy: only `fork -k` loads the compaction modules
        from porcelain.domain.compaction.dsl import parse_spec

        app.config()
        for spec in specs:
            if spec:
                parse_spec(spec)
    events = None
    if first is not None or last is not None:
        events = keep_turns(store.log.load(source.cid).events, first, last)
    cid, _ = do_fork(store, source, events=events, title=title)
    if specs:
        # lazy: only `fork -k` loads the compaction modules
        from porcelain.app.compaction.run import compact_silently

        try:
            compact_silently(app, cid, specs)
        except BaseException:  # all or nothing: a fork whose compaction failed goes
            store.refs.delete(cid, f"jp conversation fork -k: compaction failed, {cid} removed")
            raise
    if activate:
        store.refs.set_active(cid)
        activity.record_activation(store, cid)
    app.output.emit({"id": cid, "source_id": source.cid}, cid)
