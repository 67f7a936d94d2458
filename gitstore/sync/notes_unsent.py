"""A conversation's metadata note written again with nothing of the old one left
to send (`jp conversation redact`, for a secret in a title or label).

A note's old lines stay in the note (its history of values) and every notes
commit a remote lacks goes with a push, each with the notes it held.  So the
note is replaced and the notes history since what the remotes have (the
remote-tracking copies the tip contains) is folded into one commit on top of
those copies: a push then sends the notes as they are now, not as they were.
One move of the notes ref, by compare-and-swap, recorded in the operation log
(``jp undo`` puts the old tip back here).
"""

from __future__ import annotations

import pygit2

from gitstore import ids
from gitstore.git.refs import ON_REMOTES
from gitstore.store import notes
from gitstore.store.core import Store
from gitstore.sync import remotes


def _sent_copies(repo: pygit2.Repository, tip: str) -> list[str]:
    """The remote-tracking copies of the metadata notes that ``tip`` contains (each
    remote's last fetched tip, once): what the remotes hold already."""
    name = ON_REMOTES.meta[len("refs/") :]
    out: list[str] = []
    for info in remotes.all_remotes(repo):
        ref = repo.references.get(remotes.tracking_prefix(info.name) + name)
        if ref is None:
            continue
        copy = ref.resolve().target
        if not isinstance(copy, pygit2.Oid) or str(copy) in out:
            continue
        if str(copy) == tip or repo.descendant_of(pygit2.Oid(hex=tip), copy):
            out.append(str(copy))
    return out


def replace_unsent_meta(store: Store, cid: str, text: str, reason: str) -> None:
    """``cid``'s metadata note becomes ``text``, and the notes history no remote has
    is folded into the one new commit (module doc)."""
    repo = store.place.repo
    target = store.notes.anchor(cid)
    notes.update(
        repo,
        store.notes.refs.meta,
        lambda _: {target: text},
        store.notes.signature(),
        reason,
        store.ops.moving,
        also=[ids.anchor_bytes(cid)],
        onto=lambda tip: _sent_copies(repo, tip),
    )
