"""jp's notes between stores: a fetched notes ref integrated into the local one
(``integrate``, and the pull's notes step, ``pull_notes``), a metadata note
written again with nothing of the old one left to send (``replace_unsent_meta``),
and the notes of the conversations a pull creates (their anchors, what they
continue) or moves to a new id (``copy_meta``: local to this store).

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

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from enum import StrEnum
from functools import cache, partial

import pygit2

from gitstore import ids, intake
from gitstore.boundary import Limits
from gitstore.clock import seconds
from gitstore.errors import ConcurrentUpdate
from gitstore.fs import retry
from gitstore.fs.place import Place
from gitstore.git import pruned, refs
from gitstore.git.refs import ON_REMOTES
from gitstore.git.refs.transaction import RefUpdate
from gitstore.git.refs.transaction import apply as apply_updates
from gitstore.store import notes, packwrite
from gitstore.store.core import Store
from gitstore.sync import remotes
from gitstore.sync.here import Here
from gitstore.sync.inbound import NotesCheck, check_notes
from gitstore.sync.plan import Action, Outcome, PullStep
from gitstore.sync.transport import Transport

RETRIES = 5
PACKED_AT = 100  # anchors written at once from which they go into one pack


class NotesAction(StrEnum):
    NONE = "up-to-date"
    AHEAD = "ahead"
    CREATED = "created"
    FAST_FORWARDED = "fast-forwarded"
    MERGED = "merged"


def _tip(repo: pygit2.Repository, ref: str) -> str | None:
    try:
        return str(repo.lookup_reference(ref).peel(pygit2.Commit).id)
    except (KeyError, ValueError, pygit2.InvalidSpecError):
        return None


def _kind(local_ref: str) -> str:
    for kind in (refs.STANDALONE, refs.PROJECT):  # either store's names for the same notes
        if local_ref == kind.meta:
            return "meta"
        if local_ref == kind.source:
            return "source"
    return "other"


def merged_tree(repo: pygit2.Repository, ours: str | None, check: NotesCheck) -> pygit2.Oid:
    """Our notes with the checked notes of the remote added (lines merged by union):
    what ours lacks of the remote's notes is all ``check`` holds, cleaned or not."""
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
    names: Callable[[], Mapping[str, str]] | None = None,
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
        if check.clean and local is not None and base_hex == local:
            action = NotesAction.FAST_FORWARDED
        elif local is not None or not check.clean:  # never the remote's tree unless clean
            tree = merged_tree(repo, local_ref if local is not None else None, check)
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
    names = cache(lambda: {here.notes.anchor(cid): cid for cid in cids()})
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


# -- the notes of what a pull creates, and of a fork it moves to a new id ----------------


@contextmanager
def anchors(here: Here, cids: list[str]) -> Iterator[None]:
    """The anchor blob of each of ``cids`` (their notes hang on it) written before
    their refs are created: a first pull of thousands writes one pack of them, not
    a loose file each."""
    if len(cids) < PACKED_AT:
        for cid in cids:
            pruned.write(partial(here.place.repo.create_blob, ids.anchor_bytes(cid)))
        yield
        return
    packwrite.write_blobs(here.place.gitdir, (ids.anchor_bytes(c) for c in cids))
    try:
        yield
    finally:
        packwrite.release()  # nothing will name them: they need no shelter past the moves


def naming_origins(texts: dict[str, str]) -> dict[str, str]:
    """The metadata notes of ``texts`` that may say what their conversation continues:
    those that name the key, as a JSON string or through an escape (the others, nearly
    every note of a first pull, need not be looked at again)."""
    return {k: t for k, t in texts.items() if '"diverged_from"' in t or "\\" in t}


def continuing(here: Here, texts: dict[str, str], outcomes: list[Outcome]) -> list[Outcome]:
    """``outcomes`` with what each conversation a first pull created continues: the
    ``diverged_from`` of its metadata note among ``texts`` (``naming_origins`` of
    every note the store holds), "" when it has none."""
    out = []
    for o in outcomes:
        if o.kind == "conversation" and o.action == Action.CREATED.value:
            text = texts.get(here.notes.anchor(o.id))
            value = notes.meta_values(text).get("diverged_from") if text else None
            o = replace(o, continues=value if isinstance(value, str) else "")
        out.append(o)
    return out


def copy_meta(
    here: Here, signature: pygit2.Signature, cid: str, new_id: str, step: PullStep, remote: str
) -> None:
    """``new_id`` gets ``cid``'s metadata (title, labels...) and its origin:
    ``diverged_from``, ``diverge_reason``, ``diverged_at_commit``, ``diverged_remote``
    and ``diverged_at``; a review's
    source note is copied too."""
    anchor = here.notes.anchor(new_id)
    pruned.write(partial(here.place.repo.create_blob, ids.anchor_bytes(new_id)))
    stamp = int(seconds(here.clock) * 1000)
    extra = {
        "diverged_from": cid,
        "diverge_reason": step.action.value,
        "diverged_at_commit": step.base,
        "diverged_remote": remote,
        "diverged_at": datetime.fromtimestamp(stamp / 1000, UTC).isoformat().replace("+00:00", "Z"),
    }
    lines = "".join(
        notes.meta_line(k, v, stamp, here.notes.machine) + "\n" for k, v in extra.items()
    )
    meta = here.notes.note(here.notes.refs.meta, cid) or ""
    if meta and not meta.endswith("\n"):
        meta += "\n"
    source = here.notes.note(here.notes.refs.source, cid)

    def change_meta(_: notes.NoteTexts) -> dict[str, str | None]:
        return {anchor: notes.compact_meta(meta + lines)}

    message = f"jp pull {remote}: metadata of {new_id}"
    own = here.notes.refs
    record = here.ops.moving
    notes.update(here.place.repo, own.meta, change_meta, signature, message, record)
    if source:
        take = {anchor: source}
        notes.update(here.place.repo, own.source, lambda _: take, signature, message, record)
