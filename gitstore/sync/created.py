"""A pull that creates many conversations writes their refs into ``packed-refs``
in one step (``update_refs`` with no reflog: ``gitstore.git.refs.bulk``), as
``git clone`` does, instead of a loose file, a lock and a reflog line each."""

from __future__ import annotations

from gitstore import intake
from gitstore.errors import RefBusy
from gitstore.git import refs
from gitstore.git.refs import bulk
from gitstore.git.refs.transaction import RefUpdate
from gitstore.sync.here import Here
from gitstore.sync.plan import Action, PullStep

BULK_AT = 100  # conversations created at once from which their refs go into packed-refs


def create_packed(here: Here, steps: list[PullStep]) -> tuple[list[str], list[PullStep]]:
    """Create the refs of ``steps`` (creations, nothing here yet) in one rewrite of
    ``packed-refs``: the ids created, and the steps left (a ref that exists by now,
    for the one-by-one moves to report)."""
    wanted: dict[str, str] = {}
    by_name: dict[str, PullStep] = {}
    for step in steps:
        assert step.action is Action.CREATED and step.target is not None
        name = refs.archived(step.cid) if step.target.archived else refs.live(step.cid)
        wanted[name] = step.target.tip
        by_name[name] = step
    updates = [RefUpdate(n, None, tip) for n, tip in wanted.items()]
    record = here.ops.moving  # told the refs it created
    try:
        made = intake.move(here.place, updates, "jp pull", record, atomic=False, reflog=False)
    except (bulk.NoHardLinks, RefBusy):
        # no hard links here, or git's gc held packed-refs.lock past the wait: the
        # refs are created as loose files instead, one batch at a time (no lock of it)
        return [], steps
    left = [s for n, s in by_name.items() if n not in made]
    return [by_name[n].cid for n in wanted if n in made], left
