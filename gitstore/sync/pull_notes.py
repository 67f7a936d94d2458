"""Pull's notes step: each of jp's notes refs the fetch brought, merged into the
store's own name for it (``gitstore.sync.notes``), with what was dropped said in
one line."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from gitstore.sync.notes import LazyNames, NotesAction
from gitstore.sync.notes import integrate as integrate_notes
from gitstore.sync.outcome import Outcome

if TYPE_CHECKING:
    from gitstore.sync.pull import Syncer


def _summary(problems: list[str], shown: int = 3) -> str:
    """What was dropped from a remote's notes, in one line."""
    more = f"; and {len(problems) - shown} more" if len(problems) > shown else ""
    return "; ".join(problems[:shown]) + more + " (the rest was merged)"


def integrate(syncer: Syncer, cids: Callable[[], set[str]]) -> list[Outcome]:
    """Merge the fetched notes refs; ``cids``: every conversation id either side has,
    asked for only when a dropped note is reported (its anchor names it)."""
    here = syncer.here
    out: list[Outcome] = []
    rows = syncer.transport.list_refs(["refs/notes/"])
    local = {r.name: r.kind for r in rows}
    wanted = [
        (local_ref, there.removeprefix("refs/notes/"))
        for local_ref, there in here.notes.refs.synced()  # jp's notes refs, by name
        if there.removeprefix("refs/notes/") in syncer.inbound.notes
    ]
    # anchors named by their conversation in what is reported: made only if a note is dropped
    names = LazyNames(lambda: {here.notes.anchor(cid): cid for cid in cids()})
    for local_ref, rest in wanted:
        if local.get(local_ref, "commit") != "commit":
            detail = f"here it points at a {local[local_ref]}, not a commit; not synced"
            out.append(Outcome(local_ref, "skipped", kind="warning", detail=detail))
            continue
        action, problems = integrate_notes(
            here.place,
            local_ref,
            syncer.tracking + "notes/" + rest,
            syncer.signature,
            f"jp pull {syncer.remote}: notes {rest}",
            syncer.limits,
            names,
            here.ops.moving,
            syncer.first_meta if local_ref == here.notes.refs.meta else None,
        )
        if action not in (NotesAction.NONE, NotesAction.AHEAD):
            out.append(Outcome(local_ref, action.value, kind="notes"))
        if problems:
            out.append(Outcome(local_ref, "cleaned", kind="warning", detail=_summary(problems)))
    return out
