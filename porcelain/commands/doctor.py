"""`jp doctor`: check a store, and mend what is safe to mend."""

from __future__ import annotations

import click

from gitstore import Store
from gitstore import doctor as store_doctor
from porcelain import clock
from porcelain.app import gitcheck
from porcelain.commands.context import App
from porcelain.errors import Exit, UserError
from porcelain.render.output import untrusted_field


@click.command()
@click.option("--fix", is_flag=True, help="Apply the safe fixes, then check again.")
@click.option("--no-fsck", is_flag=True, help="Skip `git fsck` (slow on a large store).")
@click.option(
    "--ack",
    is_flag=True,
    help="Accept the refs the last pulls refused, as they are: syncs succeed while the "
    "remote keeps them unchanged, and they stay listed.",
)
@click.pass_obj
def doctor(app: App, fix: bool, no_fsck: bool, ack: bool) -> int:
    """Check the store: git fsck, unfinished ref updates, stale lock files,
    quarantined refs, the cache, the operation log, the format version and
    whether git's maintenance is due (too many packs or loose objects).

    Prints one line per finding with the command that mends it, and exits 0
    only when the store is healthy.  `--fix` removes lock files no live
    writer holds, finishes interrupted updates and operations, rebuilds a
    damaged cache, records the format version and runs git's maintenance
    when due; what it cannot mend
    safely (fsck problems, quarantined refs) it names.  `--ack` accepts
    the refs a remote keeps that the last pulls refused: pull, push and sync
    then succeed while those refs stay as they are (a new tip is refused
    again), and doctor lists them as notes.
    """
    path = app.store_path()
    if not path.exists():
        raise UserError(f"no store at {path}", "create one with `jp init`")
    # repair=False: see what a command would mend silently
    store = Store(path, app.identity(), repair=False, clock=clock.for_store())
    acked = store.refs.acknowledge_refusals() if ack else []
    findings = _git(app) + store_doctor.examine(store, fsck=not no_fsck)
    fixed: list[store_doctor.Finding] = []
    if fix and any(f.fixable for f in findings):
        fixed = _mend_recorded(app, store, findings)
        findings = _git(app) + store_doctor.examine(store, fsck=not no_fsck)
    problems = [f for f in findings if f.severity == "problem"]
    lines = [
        f"acknowledged: {remote}'s {untrusted_field(ref)}: {untrusted_field(e.reason)}"
        for remote, ref, e in acked
    ]
    lines += [f"fixed: {f.problem}" for f in fixed]
    for f in findings:
        lines.append(f"{f.severity}: {f.problem}; mend: {f.fix}")
    if not problems:
        lines.append(f"The store {store.local.folder} is healthy.")
    app.output.emit(
        {
            "store": str(store.local.folder),
            "healthy": not problems,
            "fixed": [f.to_json() for f in fixed],
            "acknowledged": [
                {"remote": remote, "ref": ref, "tip": e.tip, "reason": e.reason}
                for remote, ref, e in acked
            ],
            "findings": [f.to_json() for f in findings],
        },
        lines,
    )
    return Exit.OK if not problems else Exit.USER


def _git(app: App) -> list[store_doctor.Finding]:
    """A finding when this machine has no git jp can use (sync and imports need it)."""
    _, missing = gitcheck.find(app.environ)
    return [] if missing is None else [store_doctor.Finding("git", missing, gitcheck.INSTALL)]


def _mend_recorded(app: App, store: Store, findings: list[store_doctor.Finding]) -> list[store_doctor.Finding]:
    """``mend``, the refs it moves recorded as one operation (``jp undo`` reverses it)."""
    # lazy: only a repair records an operation here
    from porcelain.app import oprecord

    oprecord.begin(app, store)
    failed = True
    try:
        fixed = store_doctor.mend(store, findings)
        failed = False
    finally:
        for line in oprecord.finish(store, failed):
            app.output.note(line)
    return fixed
