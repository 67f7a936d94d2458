"""Named fault points: where a test may stop ``jp`` (a testing hook).

The store calls ``faults.point("<name>")`` at the moments a crash matters:
after objects are written and before a ref moves, after an intent journal is
written, while a transaction holds its ref locks, after it committed.  By
default ``point`` does nothing (one call of an empty function); a test, or
``porcelain.faults`` when ``JP_FAULT`` is set, replaces it with ``install``.

Points (in the order an operation reaches them):

- ``pack:chunk-written``: a bulk write (``packwrite``) closed and indexed one
  temporary pack; nothing is in the object database yet
- ``append:objects-written``: an append's commits exist, its ref has not moved
- ``create:objects-written``: a new conversation's commits exist, no ref yet
- ``rewrite:objects-written``: a rewritten chain's commits exist (``log.rewrite``,
  a redaction), the conversation's ref has not moved
- ``notes:objects-written``: a notes commit exists (loose), the notes ref has
  not moved
- ``oplog:objects-written``: an operation's commit exists (loose), the
  operation log's ref has not moved
- ``move:journal-written``: a multi-ref update's journal is on disk, no ref locked
- ``move:locked``: every ref of the update is locked and checked, none renamed
- ``move:committed``: every ref moved, the journal not yet removed
- ``packed:locked``: a bulk creation (``refs/bulk.py``) holds ``packed-refs.lock``
- ``packed:written``: the new ``packed-refs`` is written and synced, not yet renamed
- ``packed:renamed``: the new ``packed-refs`` is in place, the writer's file not removed
- ``copies:locked``, ``copies:written``, ``copies:renamed``: the same steps for
  the remote-tracking copies a first pull clones (``sync/firstclone.py``)
- ``config:locked``: a config change is written to ``config.lock``, not yet renamed
- ``remote:config-written``: a removed remote's settings are gone, jp's copies
  of it (``refs/jp-remotes/<name>/``) not yet deleted
- ``share:before-push``: a shared chain is written and recorded here
  (``refs/jp/shared/<remote>/<id>``), not yet pushed
- ``unshare:remote-deleted``: the shared branch is deleted on the remote, the
  record here not yet

Porcelain adds ``model:streaming`` (the first answer text of a model response
has arrived, nothing of it is committed).
"""

from __future__ import annotations

from collections.abc import Callable

Hook = Callable[[str], None]

POINTS = (
    "pack:chunk-written",
    "append:objects-written",
    "create:objects-written",
    "rewrite:objects-written",
    "notes:objects-written",
    "oplog:objects-written",
    "move:journal-written",
    "move:locked",
    "move:committed",
    "packed:locked",
    "packed:written",
    "packed:renamed",
    "copies:locked",
    "copies:written",
    "copies:renamed",
    "config:locked",
    "remote:config-written",
    "share:before-push",
    "unshare:remote-deleted",
    "model:streaming",
)


def _nothing(name: str) -> None:
    return None


_hook: Hook = _nothing


def point(name: str) -> None:
    """Reached a named fault point: run the installed hook (by default, nothing)."""
    _hook(name)


def install(hook: Hook | None) -> None:
    """Run ``hook(name)`` at every point from now on; None restores the no-op."""
    global _hook
    _hook = hook or _nothing
