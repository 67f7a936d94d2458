"""The change journal on a remote: which synced refs moved, push by push.

Every ``jp push`` (and ``jp push --delete``) sends, in the same atomic push as
the refs it moves, one commit to the remote's ``refs/jp/journal``: its parent
is the journal as that push last fetched it, its tree is empty, and its message
names the remote refs the push moved, one a line.  A pull fetches that one ref
(protocol v2 asks for it by prefix, so the remote lists nothing else), walks
the new commits down to the copy it had, and fetches exactly the refs they
name.  Nothing moved: one small fetch, whatever the size of the store.

The journal is untrusted like everything a remote sends, and it is only ever a
hint: a name it holds is fetched and checked like any other ref.  When it
cannot be used (none yet, rewritten so that the copy here is not among its
ancestors, too long a walk, a commit or a name that is not what jp writes),
the pull reconciles: it lists and fetches everything, as a pull always did,
and starts from the journal as it was before that listing.  Plain git and jp
before the journal move refs without a journal commit; a reconcile, every
``RECONCILE_EVERY`` pulls or with ``jp pull --full``, brings those in.

Below ``JOURNAL_FROM`` conversations (as the last reconcile counted them) every
pull reconciles: listing a remote that small costs little, and a pull then sees
at once what plain git, an older jp or a hostile writer put there.  The journal
is for the stores where listing is what a pull would cost.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import partial

import pygit2

from gitstore.git import pruned
from gitstore.sync.inbound import kind_of
from gitstore.sync.journalstate import (  # when to reconcile: no libgit2 needed
    JOURNAL_FROM,
    RECONCILE_EVERY,
    forget,
    pulls_since_reconcile,
    record_pull,
    record_refs,
    refs_at_reconcile,
)

REMOTE_REF = "refs/jp/journal"
COPY = "jp/journal"  # the copy a pull finished with, under refs/jp-remotes/<remote>/
INCOMING = "jp/incoming"  # the journal as just fetched: the copy once the pull is done
HEADER = "jp journal"
MAX_WALK = 500  # journal commits walked in one pull; past that a reconcile is cheaper
MAX_NAMES = 5000  # names gathered in one pull; past that, a reconcile
MAX_MESSAGE = 256 * 1024  # bytes of one journal commit (jp writes one line per ref)
MAX_NAME = 1024  # characters of one name
SPACES = ("refs/conversations/", "refs/archive/", "refs/notes/meta", "refs/notes/source")
_PLAIN = re.compile(r"[A-Za-z0-9._/-]+")
TRIM_AT = 2 * MAX_WALK  # entries in one chain; the push past it starts a new root
_BASE = re.compile(r"base: ([0-9a-f]{40}|[0-9a-f]{64})")
_DEPTH = re.compile(r"depth: ([0-9]{1,9})")


@dataclass
class Reading:
    """What the journal says moved since the copy here (``names`` None: reconcile)."""

    names: set[str] | None = None
    problem: str = ""  # why the journal was refused (a one-line reason), or ""
    walked: int = 0
    entries: list[str] = field(default_factory=list)


def message(names: Iterable[str], depth: int = 0, base: str | None = None) -> str:
    """An entry: its head (the count, how deep in its chain, and for a new root the
    tip it replaced), then the names, one a line."""
    listed = sorted(set(names))
    head = f"{HEADER}: {len(listed)} refs\ndepth: {depth}\n" + (f"base: {base}\n" if base else "")
    return head + "\n" + "".join(f"{n}\n" for n in listed)


def stamp(
    repo: pygit2.Repository,
    parent: str | None,
    names: Iterable[str],
    sig: pygit2.Signature,
    trim_at: int | None = None,
) -> str:
    """The journal entries naming ``names``, on top of ``parent`` (None: the first):
    the last one's id.  One entry, unless ``names`` are more than one entry may hold
    (``MAX_NAMES``, ``MAX_MESSAGE``): then a chain of them, each a valid entry, and a
    reader that walks them all gathers more than ``MAX_NAMES`` and reconciles, as
    it would for any push that large (a first push of a big store).

    Once ``parent`` is ``trim_at`` entries deep the entries start a new chain: a root
    that records ``parent`` as its base, so the remote's journal never grows past
    it.  Pushed with a lease on ``parent`` in the same atomic push as the refs; a
    reader whose copy is that base goes on from it, one further behind reconciles."""
    tree = pruned.write(lambda: repo.TreeBuilder().write())
    if parent is not None and problem(repo, parent) is not None:
        parent = None  # a journal set aside (a blob, a tree...): the push's lease replaces it
    depth = 0 if parent is None else _head(repo, parent)[0] + 1
    base = None
    if parent is not None and depth >= (TRIM_AT if trim_at is None else trim_at):
        depth, base, parent = 0, parent, None
    tip = parent
    for part in _parts(sorted(set(names))):
        parents = [pygit2.Oid(hex=tip)] if tip else []
        text = message(part, depth, base)
        tip = str(pruned.write(partial(repo.create_commit, None, sig, sig, text, tree, parents)))
        depth, base = depth + 1, None
    assert tip is not None
    return tip


_ROOM = 512  # bytes of an entry's head, at most


def _parts(names: list[str]) -> list[list[str]]:
    """``names`` cut into entries a reader takes (none of them empty, unless all are)."""
    parts: list[list[str]] = [[]]
    size = 0
    for name in names:
        if parts[-1] and (len(parts[-1]) >= MAX_NAMES or size + len(name) + 1 > MAX_MESSAGE - _ROOM):
            parts.append([])
            size = 0
        parts[-1].append(name)
        size += len(name) + 1
    return parts


def _head(repo: pygit2.Repository, oid: str) -> tuple[int, str | None]:
    """An entry's depth in its chain and the base it records (0, None: not said)."""
    kind, size = kind_of(repo, oid)
    if kind != "commit" or size > MAX_MESSAGE:
        return 0, None
    head = repo[oid].peel(pygit2.Commit).message.partition("\n\n")[0].split("\n")
    depth = next((int(m[1]) for m in map(_DEPTH.fullmatch, head) if m), 0)
    return depth, next((m[1] for m in map(_BASE.fullmatch, head) if m), None)


def name_problem(name: str) -> str | None:
    """Why a journal line is not a name a pull may fetch (None when it may).  Only
    the namespaces jp syncs and plain characters: the name goes into a refspec,
    and the fetched copy is checked like any other (a name jp cannot hold is
    refused by name there)."""
    if not name.startswith(SPACES):
        return "names a ref outside jp's namespaces"
    if len(name) > MAX_NAME or not _PLAIN.fullmatch(name) or ".." in name or "//" in name:
        return "is not a plain ref name"
    return None


def _lines(text: str) -> list[str] | str:
    """The names of one journal commit's message, or why it is not one."""
    head, _, body = text.partition("\n\n")
    if not head.startswith(HEADER + ":"):
        return "a commit that is not a journal entry"
    names = [line for line in body.split("\n") if line]
    if len(names) > MAX_NAMES:
        return f"an entry of {len(names)} names"
    for name in names:
        why = name_problem(name)
        if why is not None:
            shown = name if len(name) <= 80 else name[:77] + "..."
            return f"{shown!r} {why}"
    return names


def _entry(repo: pygit2.Repository, oid: str) -> tuple[pygit2.Commit, list[str]] | str:
    """The journal entry ``oid`` and the names it holds, or why it is not one jp
    could have written."""
    kind, size = kind_of(repo, oid)
    if kind == "missing":
        return "the journal names an object that did not arrive"
    if kind != "commit":
        return f"the journal points at a {kind}, not a chain of commits"
    if size > MAX_MESSAGE:
        return f"a journal entry of {size} bytes"
    commit: pygit2.Commit = repo[oid].peel(pygit2.Commit)
    if len(commit.parent_ids) > 1:
        return "a journal entry with several parents"
    names = _lines(commit.message)
    return names if isinstance(names, str) else (commit, names)


def problem(repo: pygit2.Repository, tip: str) -> str | None:
    """Why the journal at ``tip`` cannot be used at all (its newest entry is not
    one: a blob, a tree, another commit), or None.  Such a journal is set aside:
    a pull lists everything, and a push replaces it by a new chain."""
    found = _entry(repo, tip)
    return found if isinstance(found, str) else None


def read(repo: pygit2.Repository, tip: str, since: str | None) -> Reading:
    """The refs named by the journal commits from ``tip`` down to ``since``."""
    out = Reading(names=set())
    oid: str | None = tip
    while oid != since:
        if oid is None:
            return Reading(walked=out.walked)  # rewritten: the copy here is not below it
        if out.walked >= MAX_WALK:
            return Reading(walked=out.walked)
        found = _entry(repo, oid)
        if isinstance(found, str):
            return Reading(problem=found)
        commit, names = found
        assert out.names is not None
        out.names.update(names)
        if len(out.names) > MAX_NAMES:
            return Reading(walked=out.walked)
        out.walked += 1
        if not commit.parent_ids and since is not None and _head(repo, oid)[1] == since:
            return out  # a new root over the copy here: nothing before it is unread
        oid = str(commit.parent_ids[0]) if commit.parent_ids else None
    return out


__all__ = [
    "JOURNAL_FROM",
    "RECONCILE_EVERY",
    "forget",
    "pulls_since_reconcile",
    "record_pull",
    "record_refs",
    "refs_at_reconcile",
]
