"""The named parts a ``Store`` shows: what a caller holds instead of the whole store.

- ``log`` (``log.py``, reads in ``chains.py``): the conversations' event
  chains: read them, view them, write on them;
- ``refs`` (``refs.py``): which conversations there are and where their tips
  stand: locate, list, the active one, moves, transactions, archive, delete,
  holds, what pulls quarantined;
- ``notes`` (``store/notes.py``, beside the notes' trees and metadata lines):
  what hangs on a conversation's anchor: metadata, review sources;
- ``local`` (``local.py``): what this machine keeps for itself and never
  syncs: cached values and summaries, the store's configuration layer,
  housekeeping;
- ``ops`` (``ops.py``): the operation log: the operation this process
  records, the log itself and how long it keeps an operation.

Each part holds its own logic over the store's ``Ground`` (``ground.py``) and
the other parts it needs; the store itself keeps only its opening, repair and
the format check.
"""

from gitstore.store.notes import Notes
from gitstore.store.parts.local import Local
from gitstore.store.parts.log import Log
from gitstore.store.parts.ops import Ops
from gitstore.store.parts.refs import Refs

__all__ = ["Local", "Log", "Notes", "Ops", "Refs"]
