"""`jp conversation share --remote` and `unshare`: one conversation, redacted, on a
remote the user named, apart from what jp syncs (``gitstore/sync/shared.py``).

What is shared is the conversation's chain with every secret the scanner finds
replaced, whatever the allow-list says (as for a shared page): the events only,
not its title or labels, which live in the metadata notes.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from gitstore import syncing
from porcelain.app.redaction import redacted_copy
from porcelain.errors import UserError

if TYPE_CHECKING:
    from gitstore import Store, syncing


def share(store: Store, syncer: syncing.Syncer, cid: str) -> tuple[syncing.Shared, Counter[str]]:
    """Share ``cid`` on the syncer's remote; the kinds redacted."""
    events, counts = redacted_copy(cid, list(store.log.load(cid).events))
    reason = f"jp conversation share {cid} --remote {syncer.remote}"
    return syncing.share_on_remote(store, syncer, cid, events, reason), counts


def unshare(store: Store, syncer: syncing.Syncer, cid: str) -> syncing.Shared:
    """Delete ``cid``'s shared copy on the syncer's remote (a ``UserError`` when there is none)."""
    done = syncing.unshare_on_remote(store, syncer, cid, f"jp conversation unshare {cid} --remote {syncer.remote}")
    if done.before is None and done.here is None:
        raise UserError(
            f"{cid} is not shared on {syncer.remote}",
            f"`jp conversation share {cid} --remote {syncer.remote}` shares it",
        )
    return done
