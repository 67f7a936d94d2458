"""jp's notes between stores: a fetched notes ref integrated into the local one
(``integrate``, and the pull's notes step, ``pull_notes``), and a metadata note
written again with nothing of the old one left to send (``replace_unsent_meta``).

A fast-forward when one contains the other; otherwise a merge commit whose
tree holds, for every annotated object, the union of both notes' lines
(sorted, de-duplicated: ``git notes merge -s cat_sort_uniq`` gives the same),
with parents [local, remote], moved by compare-and-swap.  The tree is written
in the fan-out layout of ``notes.update``, so that later writes stay small.  Notes histories
contain merge commits, so ancestry here is git's merge base, not the
first-parent walk used for conversations.

For ``jp conversation redact`` (a secret in a title or label): a note's old
lines stay in the note (its history of values) and every notes commit a remote
lacks goes with a push, each with the notes it held.  So the note is replaced
and the notes history since what the remotes have (the remote-tracking copies
the tip contains) is folded into one commit on top of those copies: a push then
sends the notes as they are now, not as they were.  One move of the notes ref,
by compare-and-swap, recorded in the operation log (``jp undo`` puts the old tip
back here).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from enum import StrEnum
from functools import partial

import pygit2

from gitstore import ids, intake
from gitstore.boundary import Limits
from gitstore.errors import ConcurrentUpdate
from gitstore.fs import retry
from gitstore.fs.place import Place
from gitstore.git import pruned, refs
from gitstore.git.refs import ON_REMOTES
from gitstore.git.refs.transaction import RefUpdate
from gitstore.git.refs.transaction import apply as apply_updates
from gitstore.store import notes
from gitstore.store.core import Store
from gitstore.sync import remotes
from gitstore.sync.here import Here
from gitstore.sync.inbound import NotesCheck, check_notes
from gitstore.sync.outcome import Outcome
from gitstore.sync.transport import Transport

_HEX = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")
RETRIES = 5


class NotesAction(StrEnum):
    NONE = "up-to-date"
    AHEAD = "ahead"
    CREATED = "created"
    FAST_FORWARDED = "fast-forwarded"
    MERGED = "merged"


class LazyNames(Mapping[str, str]):
    """Annotated id -> conversation, made on first use: the names appear only in
    the report of a note that was dropped, and making them lists every ref."""

    def __init__(self, make: Callable[[], dict[str, str]]) -> None:
        self._make: Callable[[], dict[str, str]] | None = make
        self._made: dict[str, str] = {}

    def _names(self) -> dict[str, str]:
        if self._make is not None:
            self._made, self._make = self._make(), None
        return self._made

    def __getitem__(self, key: str) -> str:
        return self._names()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())


def _tip(repo: pygit2.Repository, ref: str) -> str | None:
    try:
        return str(repo.lookup_reference(ref).peel(pygit2.Commit).id)
    except (KeyError, ValueError, pygit2.InvalidSpecError):
        return None


def merged_tree(repo: pygit2.Repository, ours: str, theirs: str) -> pygit2.Oid:
    """A fan-out notes tree with the union of both sides' lines per object."""
    # every note of both sides: the union needs them all
    mine = notes.read_all(repo, ours)
    other = notes.read_all(repo, theirs)
    texts: dict[str, str] = {}
    for target in sorted(set(mine) | set(other)):
        if not _HEX.match(target):
            continue
        if target in mine and target in other and mine[target] != other[target]:
            texts[target] = notes.union(mine[target], other[target])
        else:
            texts[target] = mine.get(target, other.get(target, ""))
    return notes.write_tree(repo, texts)


def _kind(local_ref: str) -> str:
    for kind in (refs.STANDALONE, refs.PROJECT):  # either store's names for the same notes
        if local_ref == kind.meta:
            return "meta"
        if local_ref == kind.source:
            return "source"
    return "other"


def cleaned_tree(repo: pygit2.Repository, ours: str | None, check: NotesCheck) -> pygit2.Oid:
    """Our notes with the checked notes of the remote added (lines merged by union)."""
    texts = notes.read_all(repo, ours) if ours is not None else {}
    for target, text in check.texts.items():
        now = texts.get(target)
        texts[target] = notes.union(now, text) if now is not None and now != text else text
    return notes.write_tree(repo, texts)


def integrate(
    place: Place,
    local_ref: str,
    remote_ref: str,
    signature: pygit2.Signature,
    message: str,
    limits: Limits | None = None,
    names: Mapping[str, str] | None = None,
    record: intake.Record = intake.no_record,
    first: Callable[[dict[str, str]], None] | None = None,
) -> tuple[NotesAction, list[str]]:
    """Bring ``remote_ref`` (a fetched copy) into ``local_ref``; with it, what of the
    remote's notes was dropped (``inbound.check_notes``: the rest comes in).  ``record``
    is the operation log's hook around the ref move.  ``first`` is told every note
    ``local_ref`` holds now (annotated hex id -> checked text) when it held none
    before: a first pull's report reads them from here, not from 10,000 blobs."""
    repo = place.repo
    for _ in retry.tries(RETRIES):
        local, remote = _tip(repo, local_ref), _tip(repo, remote_ref)
        if remote is None:
            return (NotesAction.NONE if local is None else NotesAction.AHEAD), []
        if local == remote:
            return NotesAction.NONE, []
        base = repo.merge_base(local, remote) if local is not None else None
        base_hex = str(base) if base is not None else None
        if base_hex == remote:
            return NotesAction.AHEAD, []
        theirs = repo[remote].peel(pygit2.Commit).tree
        ours = repo[local].peel(pygit2.Commit).tree if local is not None else None
        check = check_notes(repo, _kind(local_ref), theirs, ours, limits or Limits(), names)
        new, action, tree = remote, NotesAction.CREATED, None
        if not check.clean:  # never the remote's tree as it is: a cleaned one on top of it
            tree = cleaned_tree(repo, local_ref if local is not None else None, check)
        elif base_hex == local and local is not None:
            action = NotesAction.FAST_FORWARDED
        elif local is not None:
            tree = merged_tree(repo, local_ref, remote_ref)
        if tree is not None:  # a merge commit: parents [local, remote]
            parents = [pygit2.Oid(hex=h) for h in (local, remote) if h is not None]
            commit = partial(repo.create_commit, None, signature, signature, message, tree, parents)
            new, action = str(pruned.write(commit)), NotesAction.MERGED
        try:
            with record([RefUpdate(local_ref, local, new)]):
                apply_updates(place, [RefUpdate(local_ref, local, new)], message)
            if local is None and first is not None:
                first(check.texts)  # a new ref: it holds these notes and no other
            return action, check.problems
        except ConcurrentUpdate:
            continue  # a local note was written meanwhile: start over
    raise ConcurrentUpdate(local_ref)


# -- the pull's notes step ---------------------------------------------------------------


def _summary(problems: list[str], shown: int = 3) -> str:
    """What was dropped from a remote's notes, in one line."""
    more = f"; and {len(problems) - shown} more" if len(problems) > shown else ""
    return "; ".join(problems[:shown]) + more + " (the rest was merged)"


def pull_notes(
    here: Here,
    transport: Transport,
    remote: str,
    fetched: Mapping[str, str],
    signature: pygit2.Signature,
    limits: Limits,
    cids: Callable[[], set[str]],
    first: Callable[[dict[str, str]], None],
) -> list[Outcome]:
    """Merge each of jp's notes refs the fetch brought (``fetched``: the copies that
    passed, by the name after ``refs/notes/``) into the store's own name for it,
    with what was dropped said in one line.  ``cids``: every conversation id either
    side has, asked for only when a dropped note is reported (its anchor names it);
    ``first``: told the metadata notes when the store had none (``integrate``)."""
    out: list[Outcome] = []
    tracking = remotes.tracking_prefix(remote)
    local = {r.name: r.kind for r in transport.list_refs(["refs/notes/"])}
    wanted = [
        (local_ref, there.removeprefix("refs/notes/"))
        for local_ref, there in here.notes.refs.synced()  # jp's notes refs, by name
        if there.removeprefix("refs/notes/") in fetched
    ]
    # anchors named by their conversation in what is reported: made only if a note is dropped
    names = LazyNames(lambda: {here.notes.anchor(cid): cid for cid in cids()})
    for local_ref, rest in wanted:
        if local.get(local_ref, "commit") != "commit":
            detail = f"here it points at a {local[local_ref]}, not a commit; not synced"
            out.append(Outcome(local_ref, "skipped", kind="warning", detail=detail))
            continue
        action, problems = integrate(
            here.place,
            local_ref,
            tracking + "notes/" + rest,
            signature,
            f"jp pull {remote}: notes {rest}",
            limits,
            names,
            here.ops.moving,
            first if local_ref == here.notes.refs.meta else None,
        )
        if action not in (NotesAction.NONE, NotesAction.AHEAD):
            out.append(Outcome(local_ref, action.value, kind="notes"))
        if problems:
            out.append(Outcome(local_ref, "cleaned", kind="warning", detail=_summary(problems)))
    return out


# -- a metadata note written again, nothing of the old one to send ----------------------


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
