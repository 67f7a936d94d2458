"""What a sync reaches of this store: the parts it reads and moves, and the place
of its git data.

A ``Syncer`` (and what it calls: ``fetch``, ``meta``, ``push``)
holds a ``Here``, never the ``Store``: conversations through ``log`` and
``refs``, notes through ``notes``, the operation log through ``ops``, and git's
own files (fetched copies, the quarantine, the journal's copies) through
``place``.
"""

from __future__ import annotations

from dataclasses import dataclass

from gitstore.boundary import Limits
from gitstore.clock import Clock
from gitstore.fs.place import Place
from gitstore.store.core import Store
from gitstore.store.parts import Log, Notes, Ops, Refs


@dataclass(frozen=True)
class Here:
    """This store, as a sync sees it."""

    place: Place
    log: Log
    refs: Refs
    notes: Notes
    ops: Ops
    clock: Clock  # the time of what the sync records (new ids, metadata stamps)
    limits: Limits  # what a fetched event may be

    @classmethod
    def of(cls, store: Store) -> Here:
        return cls(
            store.place, store.log, store.refs, store.notes, store.ops, store.clock, store.limits
        )
