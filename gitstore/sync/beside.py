"""A narrow fetch (the journal, the few refs it names) run in the side repository
beside the store (``git/sidegit.py``), not in the store: it costs what it brings,
not what the store holds (docs/sync.md, "Fetched beside the store").

git's own fetch, by the remote's name, with its object checks
(``fetch.fsckObjects``); the pack moves into the store behind a ``.keep`` while
the store's copies are set (and pruned) as that fetch would have.  A fetch git
refuses raises ``SyncError`` and is not tried again in the store; anything
unusual says False, and the fetch runs in the store.  A killed run's side
repository and marked ``.keep`` files are cleared by the next.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from gitstore.errors import SyncError
from gitstore.git import command, sidegit
from gitstore.git.command import error_lines
from gitstore.git.refs import files as refread
from gitstore.git.refs import packedform
from gitstore.sync import firstclone, remotes
from gitstore.sync.transport import FSCK, NO_REFLOG, GitCli, Transport

# copies written through libgit2 up to this many, in a store whose packed-refs is
# under SMALL bytes: libgit2 parses all of packed-refs for each write (40 ms at
# 100,000 conversations and their copies), one git update-ref finds them by bisection
FEW = 2
SMALL = 1024 * 1024  # about 10,000 refs


def folder(gitdir: Path, remote: str) -> Path:
    return sidegit.folder(gitdir, "fetch", remote)


def mark(remote: str) -> str:
    """What the ``.keep`` of a pack moved in holds, until its copies are written."""
    return f"jp: a fetch through {folder(Path(), remote).stem}, until its copies are written\n"


def clear(gitdir: Path, remote: str) -> None:
    """What a killed fetch from ``remote`` left: the side repository, and the
    ``.keep`` files of the packs it moved in."""
    firstclone.sweep(gitdir, folder(gitdir, remote), mark(remote))


def usable(transport: Transport, gitdir: Path) -> bool:
    """Whether a fetch beside this store is the same fetch as one in it."""
    if not isinstance(transport, GitCli) or transport.repo is None:
        return False
    return sidegit.usable(gitdir)


def fetch(
    transport: Transport, remote: str, gitdir: Path, specs: Sequence[str], tips: Sequence[str]
) -> bool:
    """Fetch ``specs`` (each ``+SRC*:DST*`` or ``+SRC:DST``, forced, pruned) offering the
    store's refs ``tips`` (names or ``*`` patterns) as had, and leave the store's copies
    as that fetch in the store would; False when the caller must fetch in the store."""
    if not usable(transport, gitdir):
        return False
    assert isinstance(transport, GitCli)
    clear(gitdir, remote)
    side = folder(gitdir, remote)
    kept: list[Path] = []
    wrote = [spec.split(":", 1)[1] for spec in specs]
    try:
        _prepare(side, gitdir, refread.matching_refs(gitdir, tips) or {}, remote)
        args = [transport.git, "--git-dir", str(side), *NO_REFLOG, *FSCK]
        args += ["-c", "fetch.unpackLimit=1", "fetch", "--no-tags", "--quiet", "--no-auto-gc"]
        args += ["--no-write-fetch-head", *(f"--negotiation-tip={t}" for t in tips)]
        args += ["--prune", remote, *specs]
        try:
            done = command.watched(args, remote, transport.stall, transport.env(remote))
        except OSError:
            return False
        if done.returncode != 0:
            if "shallow" in done.stderr.lower():  # a server that takes no shallow client,
                return False  # or sent shallow lines of its own: the fetch in the store
            raise SyncError(remote, error_lines(done.stderr))  # not asked of it twice
        if firstclone.has_loose_objects(side):
            return False
        fetched = refread.matching_refs(side, wrote)
        if fetched is None:
            return False
        firstclone.move_packs(side, gitdir, mark(remote), kept)
        return _set_copies(transport, gitdir, wrote, fetched)
    except OSError:
        return False  # the fetch in the store runs, and names a fault of this machine
    finally:
        for keep in kept:
            keep.unlink(missing_ok=True)
        clear(gitdir, remote)


def _prepare(side: Path, gitdir: Path, had: dict[str, str], remote: str) -> None:
    """A bare repository at ``side`` that borrows the store's objects and holds the
    store's refs ``had`` (what the fetch offers as had)."""
    # its connectivity check marks as had what its own refs reach, and of the
    # borrowed repository's refs only the few journal copies (not every ref of the store)
    journal = remotes.tracking_prefix(remote) + "jp/"
    sidegit.prepare(side, gitdir, had, f"\talternateRefsPrefixes = {journal}\n")
    # what it offers as had is those commits, not their history: the remote's refs move
    # on from the copies, so one have each is enough; walking down the parents cost the
    # remote a commit read each (16 to a round), and the journal's first entries name
    # thousands of refs each (175 KB a commit at 100,000 conversations)
    if had:
        (side / "shallow").write_text("".join(sorted({oid + "\n" for oid in had.values()})))


def _set_copies(
    transport: GitCli, gitdir: Path, wrote: Sequence[str], fetched: dict[str, str]
) -> bool:
    """The store's copies as the fetch into it would leave them: each one the side
    fetch wrote, and none of those it pruned (a ref gone from the remote)."""
    here = refread.matching_refs(gitdir, wrote) or {}
    values: dict[str, str | None] = dict.fromkeys(set(here) - set(fetched))
    values.update((n, oid) for n, oid in fetched.items() if here.get(n) != oid)
    return write_copies(transport, gitdir, dict(sorted(values.items())))


def write_copies(transport: GitCli, gitdir: Path, values: dict[str, str | None]) -> bool:
    """Point each copy at its commit (None: delete it), in the order given: a few in
    a small store through libgit2 (no git process), else all at once by one ``git
    update-ref``; False when a lock held them (git's gc packing refs)."""
    if len(values) <= FEW and _packed_size(gitdir) < SMALL:
        repo = transport.repo
        assert repo is not None
        return all(remotes.set_copy(repo, n, value) for n, value in values.items())
    try:
        transport.set_refs(values)
    except SyncError:
        return False
    return True


def _packed_size(gitdir: Path) -> int:
    try:
        return os.stat(packedform.path(gitdir)).st_size
    except OSError:
        return 0
