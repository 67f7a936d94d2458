"""`jp pull`, `jp push`, `jp sync`: conversations between machines.

Text output names what happened to each conversation; above all, a
conversation continued on both machines keeps its id for the remote's
history and pull prints the new id of the local continuation.
"""

from __future__ import annotations

import gc
import sys
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click  # noqa: TID251

from gitstore import remotes, syncing
from porcelain import clock
from porcelain.app import gitcheck
from porcelain.commands.context import App
from porcelain.domain.origins import continuations
from porcelain.errors import UsageError, UserError
from porcelain.render.output import untrusted_field

if TYPE_CHECKING:
    from gitstore import syncing

UNFINISHED = {"busy", "changed", "rejected", "blocked"}
PROGRESS_AFTER = 1.0  # seconds before a progress line appears


def _phrase(o: syncing.Outcome, remote: str, continues: dict[str, str] | None = None) -> str:
    parent = (continues or {}).get(o.id)
    pulled = {
        "created": f"continues {parent} from another machine (new from {remote})"
        if parent
        else f"new from {remote}",
        "fast-forwarded": f"updated from {remote}",
        "archived": f"archived, as on {remote}",
        "unarchived": "live again (it has events newer than the archived copy)",
        "diverged": f"diverged; your local continuation is now {o.new_id}",
        "collision": f"{remote} has another conversation with this id; yours is now {o.new_id}",
    }
    pushed = {
        "created": f"sent to {remote}",
        "fast-forwarded": f"new events sent to {remote}",
        "archived": f"archived on {remote}",
        "unarchived": f"live again on {remote}",
    }
    table = pushed if o.direction == "push" else pulled
    text = table.get(o.action, o.action)
    if o.action in UNFINISHED:
        text = f"{o.action} ({untrusted_field(o.detail)})" if o.detail else o.action
    elif o.action in ("refused", "held"):  # pushed: nothing is sent over a refused copy
        text = f"not sent ({untrusted_field(o.detail)})"
    elif o.kind == "notes":
        what = "sent" if o.direction == "push" else "updated"
        text = "merged" if o.action == "merged" else what
    return f"{untrusted_field(o.id)}: {text}"


SUMMARY_AFTER = 10  # more routine lines than this become one summary line (-v: each)
_COUNTED = {
    "created": "new",
    "fast-forwarded": "updated",
    "archived": "archived",
    "unarchived": "live again",
    "merged": "notes merged",
}


def _routine(o: syncing.Outcome, continues: dict[str, str]) -> bool:
    """A plain new, updated or archived conversation (or notes): counted in a long list;
    a divergence, a collision or a continuation is always named."""
    if o.kind in ("refused", "warning") or o.action in UNFINISHED | {"refused", "held"}:
        return False
    return o.action in _COUNTED and o.id not in continues


def _rows(outcomes: Sequence[syncing.Outcome], continues: dict[str, str]) -> list[dict[str, Any]]:
    """The outcomes as `-F json` gives them (always every one)."""
    rows: list[dict[str, Any]] = []
    for o in outcomes:
        row: dict[str, Any] = {"id": o.id, "action": o.action, "direction": o.direction}
        row["kind"] = o.kind
        if o.new_id:
            row["new_id"] = o.new_id
        if o.id in continues:
            row["continues"] = continues[o.id]
        if o.detail:
            row["detail"] = o.detail
        if o.kept:
            row["quarantine"] = o.kept
        if o.acknowledged:
            row["acknowledged"] = True
        rows.append(row)
    return rows


def _report(
    app: App, remote: str, outcomes: Sequence[syncing.Outcome], verb: str, verbose: bool = False
) -> None:
    continues = continuations(app.store(), outcomes)
    app.output.emit(
        _rows(outcomes, continues),
        lambda: _text(app, remote, outcomes, continues, verb, verbose),
    )
    held = [o for o in outcomes if o.action == "held"]
    stuck = [o for o in outcomes if o.action in UNFINISHED]
    refused = [o for o in outcomes if o.kind == "refused" and not o.acknowledged]
    if refused and not stuck:
        n = len(refused)
        raise UserError(
            f"{n} ref{'s' if n != 1 else ''} from {remote} {'were' if n != 1 else 'was'} "
            "refused (named above); the rest was synced",
            "they stay refused until they are fixed on the remote; "
            "`git for-each-ref refs/jp/quarantine/` lists the ones kept aside; "
            "`jp doctor --ack` accepts them as they are, so syncs succeed",
        )
    if stuck:
        raise UserError(
            f"{len(stuck)} of the changes were not synced with {remote}",
            f"run `jp {verb} {remote}` again",
        )
    if held:
        _refuse_held(remote, held)


def _refuse_held(remote: str, held: Sequence[syncing.Outcome]) -> None:
    """A push that kept conversations (or the metadata notes) back for their secrets
    fails, naming each, its kinds and counts (never a value) and the commands to go on."""
    notes = [o for o in held if o.kind == "notes"]
    held = [o for o in held if o.kind != "notes"]
    if not held:
        raise UserError(
            f"the metadata (titles, labels) was not sent to {remote}: it holds secrets "
            "(named above); the rest was sent",
            "`jp conversation redact ID` takes them out of the metadata not yet sent; "
            "a false alarm goes in [secrets.allow] of your config (docs/security.md)",
        )
    names = ", ".join(untrusted_field(o.id) for o in held)
    first = untrusted_field(held[0].id)
    n = len(held)
    also = "; the metadata (titles, labels) was not sent either (named above)" if notes else ""
    raise UserError(
        f"{n} conversation{'s' if n != 1 else ''} not sent to {remote}: "
        f"{'they hold' if n != 1 else 'it holds'} secrets ({names}){also}; the rest was sent",
        f"`jp conversation scan {first}` shows where, `jp conversation redact {first}` "
        "takes them out; a false alarm goes in [secrets.allow] of your config "
        "(docs/security.md)",
    )


def _text(
    app: App,
    remote: str,
    outcomes: Sequence[syncing.Outcome],
    continues: dict[str, str],
    verb: str,
    verbose: bool,
) -> None:
    """What a pull or push did, as the person reads it."""
    shown = 0
    routine = sum(1 for o in outcomes if _routine(o, continues))
    counted: Counter[str] = Counter()
    for o in outcomes:
        if o.kind == "refused":
            kept = f"; kept as {untrusted_field(o.kept)}" if o.kept else ""
            ref, why = untrusted_field(_short(o.id)), untrusted_field(o.detail)
            acked = " (acknowledged)" if o.acknowledged else ""
            app.output.note(f"refused {ref} from {remote}{acked}: {why}{kept}")
        elif o.kind == "warning":
            ref, why = untrusted_field(o.id), untrusted_field(o.detail)
            where = f"{remote}'s {ref}" if o.action == "cleaned" else ref
            app.output.note(f"warning: {where}: {why}")
        elif o.action in UNFINISHED or o.action in ("refused", "held"):
            app.output.note(f"{remote}: {_phrase(o, remote)}")
        elif verbose or not _routine(o, continues) or routine <= SUMMARY_AFTER:
            app.output.line(_phrase(o, remote, continues))
            shown += 1
        else:
            label = _COUNTED[o.action]
            if o.direction == "push":
                label = f"{label} on {remote}" if o.action.endswith("archived") else "sent"
            counted[label] += 1
            shown += 1
    if counted:
        done = ", ".join(f"{n} {what}" for what, n in counted.items())
        app.output.line(f"{remote}: {done} (`-v` names each)")
    if shown == 0 and not any(o.action in UNFINISHED | {"refused", "held"} for o in outcomes):
        app.output.line(
            f"Already up to date with {remote}." if verb == "pull" else f"{remote} is up to date."
        )


def _short(name: str, width: int = 120) -> str:
    """A remote's ref name as shown in a line (a hostile one can be thousands long)."""
    return name if len(name) <= width else f"{name[: width - 40]}... ({len(name)} characters)"


class _Progress:
    """A progress line on stderr, for terminals, once a run takes a while."""

    def __init__(self, app: App) -> None:
        self.err = app.output.err
        self.enabled = app.output.is_terminal()
        self.start = clock.monotonic()
        self.shown = False

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.enabled or clock.monotonic() - self.start < PROGRESS_AFTER:
            return
        count = f" {done}/{total}" if total else ""
        self.err.write(f"\r{stage}{count}...\033[K")
        self.err.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.err.write("\r\033[K")
            self.err.flush()


def _syncer(app: App, name: str | None, progress: _Progress) -> syncing.Syncer:
    store = app.store()
    if name is None:
        name = remotes.default(store)
        if name is None and not remotes.listing(store):
            name = "origin"  # says: no remote named origin, add one
        if name is None:
            raise UserError(
                "no remote to sync with by default",
                "name it on the command line (`jp remote list` shows them); a remote with "
                "settings of its own, such as a project's code remote, is never the default",
            )
    remotes.check_name(name)
    if remotes.find(store, name) is None:
        raise UserError(f"no remote named {name}", "add one: `jp remote add NAME URL`")
    git, missing = gitcheck.find(app.environ)
    if git is None or missing is not None:
        raise UserError(f"cannot sync: {missing}", gitcheck.INSTALL)
    unattended = None if _someone_can_answer(app) else app.environ
    stall = app.config().get("sync.stall_seconds")  # the user's files only (trust rule)
    if isinstance(stall, int) and not isinstance(stall, bool) and stall > 0:
        return syncing.open_sync(store, name, git, progress, unattended, float(stall))
    return syncing.open_sync(store, name, git, progress, unattended)


def remote_syncer(app: App, name: str) -> syncing.Syncer:
    """The remote ``name`` opened as a push opens it (its name checked, git found,
    never prompting without a terminal): for `jp conversation share --remote`."""
    return _syncer(app, name, _Progress(app))


def _someone_can_answer(app: App) -> bool:
    """Whether git and ssh may ask for a password or passphrase: only with stdin and
    stderr on a terminal (docs/sync.md); elsewhere the prompt would wait forever."""
    try:
        return bool(sys.stdin and sys.stdin.isatty()) and app.output.is_terminal()
    except ValueError:  # stdin closed
        return False


def _run(app: App, name: str | None, verb: str, verbose: bool = False, full: bool = False) -> None:
    progress = _Progress(app)
    syncer = _syncer(app, name, progress)
    if verb == "pull":
        hold = None
    else:
        # lazy: the scanner loads only for what a push sends
        from porcelain.app.secretcheck import PushCheck, allow_list

        hold = PushCheck(app.store(), allow_list(app))
    # what start-up loaded lives to the exit: left out of the collections a sync's
    # many small objects set off (a first push of 4,000 ran one full collection of
    # it, about 10 ms; ``ended`` says the same of the exit's)
    gc.freeze()
    try:
        outcomes = syncer.pull(full) if hold is None else syncing.push(syncer, full=full, hold=hold)
    finally:
        progress.clear()
    _report(app, syncer.remote, outcomes, verb, verbose)


@click.command()
@click.argument("remote", required=False)
@click.option(
    "-v", "--verbose", is_flag=True, help="Name every conversation moved, even in a long list."
)
@click.option(
    "--full",
    is_flag=True,
    help="List every ref of REMOTE, not only what its journal names: brings in what "
    "plain git or an older jp moved there (docs/sync.md).",
)
@click.pass_obj
def pull(app: App, remote: str | None, verbose: bool, full: bool) -> None:
    """Fetch conversations from REMOTE and bring them in.

    Conversations changed only there move forward here.  One continued on
    both machines keeps its id for the remote's history; your local
    continuation becomes a conversation of its own, named in the output.
    Metadata and archive state merge (docs/sync.md).  What fails jp's checks
    (a ref that is not a chain of events, notes that are not notes, an event
    over store.max_event_bytes) is refused by name and changes nothing here
    (docs/security.md).  REMOTE defaults to the only remote jp made, else
    origin; a remote with settings of its own (a project's code remote) is
    used only when named.
    """
    _run(app, remote, "pull", verbose, full)


@click.command()
@click.argument("remote", required=False)
@click.option(
    "--delete",
    "delete",
    metavar="ID",
    help="Delete conversation ID on REMOTE (after a confirmation) and in this store; "
    "`jp undo` brings it back here (docs/sync.md).",
)
@click.option("-y", "--yes", is_flag=True, help="With --delete: do not ask.")
@click.option(
    "-v", "--verbose", is_flag=True, help="Name every conversation moved, even in a long list."
)
@click.option(
    "--full",
    is_flag=True,
    help="List every ref of REMOTE, not only what its journal names: brings in what "
    "plain git or an older jp moved there (docs/sync.md).",
)
@click.pass_obj
def push(
    app: App, remote: str | None, delete: str | None, yes: bool, verbose: bool, full: bool
) -> None:
    """Pull from REMOTE, then send what it lacks (never forced)."""
    if delete is None:
        if yes:
            raise UsageError("-y goes with --delete only", "push itself never asks")
        _run(app, remote, "push", verbose, full)
        return
    from porcelain.commands.push_delete import delete as delete_there  # lazy: --delete only

    progress = _Progress(app)
    try:
        delete_there(app, _syncer(app, remote, progress), delete, yes)
    finally:
        progress.clear()


@click.command()
@click.argument("remote", required=False)
@click.option(
    "-v", "--verbose", is_flag=True, help="Name every conversation moved, even in a long list."
)
@click.option(
    "--full",
    is_flag=True,
    help="List every ref of REMOTE, not only what its journal names: brings in what "
    "plain git or an older jp moved there (docs/sync.md).",
)
@click.pass_obj
def sync(app: App, remote: str | None, verbose: bool, full: bool) -> None:
    """Pull, then push: both sides end with every conversation."""
    _run(app, remote, "sync", verbose, full)
