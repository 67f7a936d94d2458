"""A first pull of many conversations fetched as ``git clone`` fetches: into
``packed-refs``, not a loose file per copy.

``git fetch`` writes each copy as a loose ref (a lock, a write and a rename:
five file opens a ref) and ``git pack-refs`` then opens and unlinks them all
again; on a busy machine that is most of a first pull.  When this store has no
copies of the remote yet and the remote holds only names jp syncs (at least
``BULK_AT`` of them), the objects come by ``git clone --mirror --no-local``
into a folder under ``jp/`` (git's object checks on, as for every fetch); its
packs move into this store behind a ``.keep`` (git's gc leaves them alone while
nothing names their objects), the copies are written into ``packed-refs`` in
one rewrite (``update_refs`` with no reflog: ``gitstore.git.refs.bulk``), then the ``.keep`` files and the folder go.

Anything unusual (a clone git refused, loose objects, a copy that exists by now,
no hard links, git's gc holding ``packed-refs``) gives up: the ordinary fetch
runs, finds the objects here already, and refuses bad refs one by one.  A crash
leaves the folder and ``.keep`` files marked as this remote's, which the next
fetch from it removes.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from gitstore.errors import EnvironmentFault, RefBusy, SyncError
from gitstore.fs import atomic
from gitstore.fs.place import Place
from gitstore.git import command, objects
from gitstore.git import pack as gitpack
from gitstore.git.refs import bulk
from gitstore.git.refs import files as refread
from gitstore.git.refs.transaction import RefUpdate
from gitstore.git.refs.update import update_refs
from gitstore.git.writers import free_stem
from gitstore.sync import remotes
from gitstore.sync.transport import FSCK, GitCli

BULK_AT = 100  # names on the remote from which a first pull clones
SYNCED = ("refs/conversations/", "refs/archive/", "refs/notes/meta", "refs/notes/source")
OTHERS_ALLOWED = ("refs/jp/",)  # the journal: fetched on its own, before


def folder(gitdir: Path, remote: str) -> Path:
    tag = hashlib.sha256(remote.encode()).hexdigest()[:16]
    return gitdir / "jp" / f"clone-{tag}.git"


def _mark(remote: str) -> str:
    return f"jp: a first pull from {folder(Path(), remote).stem}, until its copies are written\n"


def clear(gitdir: Path, remote: str) -> None:
    """What a killed first pull from ``remote`` left (under its sync lock): the
    clone's folder, and the ``.keep`` files of the packs it moved in."""
    sweep(gitdir, folder(gitdir, remote), _mark(remote))


def sweep(gitdir: Path, work: Path, mark: str) -> None:
    """The folder ``work`` beside the store, and the ``.keep`` files in the store that
    hold ``mark`` (another writer's are left alone)."""
    refread.forget(work)  # its packed-refs as last read: megabytes in a big first pull
    if work.exists():
        shutil.rmtree(work, ignore_errors=True)
    for keep in gitpack.folder(gitdir).glob("pack-*.keep"):
        try:
            if keep.read_text(errors="replace") == mark:
                keep.unlink()
        except OSError:
            continue


def fetch(transport: GitCli, remote: str, gitdir: Path) -> bool:
    """Fetch a first pull as a clone; False when the ordinary fetch must run."""
    if transport.repo is None:
        return False
    tracking = remotes.tracking_prefix(remote)
    if any(not r.name[len(tracking) :].startswith("jp/") for r in transport.list_refs([tracking])):
        return False  # not a first pull: the copies exist
    try:
        heads = transport.ls_remote(remote)
    except SyncError:
        return False  # the ordinary fetch says why
    if not heads:
        return True  # an empty remote (a first push's pull): nothing to fetch or prune
    clonable = _clonable(heads)
    del heads  # let go before the clone: 20 MiB at 100,000
    if not clonable:
        return False
    url = transport.url(remote)
    if url is None:
        return False
    work = folder(gitdir, remote)
    clear(gitdir, remote)
    try:
        return _clone(transport, remote, url, work, gitdir, tracking)
    finally:
        clear(gitdir, remote)


def _clonable(heads: dict[str, str]) -> bool:
    """Whether the remote's refs ``heads`` are only names jp syncs, ``BULK_AT`` or more."""
    synced = sum(1 for n in heads if n.startswith(SYNCED))
    return synced >= BULK_AT and all(n.startswith(SYNCED + OTHERS_ALLOWED) for n in heads)


def _clone(
    transport: GitCli, remote: str, url: str, work: Path, gitdir: Path, tracking: str
) -> bool:
    args = [transport.git, *FSCK, "-c", "transfer.unpackLimit=1", "clone", "--mirror"]
    args += ["--no-local", "--quiet", "--", url, str(work)]
    try:
        proc = command.watched(args, remote, transport.stall, transport.env(remote), text=False)
    except OSError:
        return False
    if proc.returncode != 0 or has_loose_objects(work):
        return False
    copies = _copies(work, tracking)
    if len(copies) < BULK_AT:
        return False
    kept: list[Path] = []
    try:
        move_packs(work, gitdir, _mark(remote), kept)
        creations = [RefUpdate(name, None, oid) for name, oid in copies.items()]
        assert transport.repo is not None, "fetch clones only with the store's repository"
        place = Place.of(transport.repo, gitdir)
        made = update_refs(place, creations, "jp pull", atomic=False, reflog=False, stage="copies")
    except (bulk.NoHardLinks, RefBusy, ValueError, OSError, EnvironmentFault):
        return False  # the ordinary fetch runs, and names a fault of this machine
    finally:
        for keep in kept:
            keep.unlink(missing_ok=True)
    return len(made) == len(copies)


def _copies(work: Path, tracking: str) -> dict[str, str]:
    """The clone's refs as this store's copies of them, by name."""
    found = refread.matching_refs(work, ["refs/"]) or {}
    refread.forget(work)  # the clone's packed-refs, as read: not kept
    return {tracking + n[len("refs/") :]: oid for n, oid in found.items() if n.startswith(SYNCED)}


def has_loose_objects(work: Path) -> bool:
    folder = objects.folder(work)
    try:
        return any(len(p.name) == 2 and any(p.iterdir()) for p in folder.iterdir() if p.is_dir())
    except OSError:
        return True


def move_packs(work: Path, gitdir: Path, mark: str, kept: list[Path]) -> None:
    """The clone's packs moved into this store, each behind a ``.keep`` (added to
    ``kept`` as it is written, so that a failure midway still removes it)."""
    into = gitpack.folder(gitdir)
    into.mkdir(parents=True, exist_ok=True)
    for pack in sorted(gitpack.folder(work).glob("pack-*.pack")):
        # a pack of this name here already may be one git's repack is deleting: not reused
        stem = free_stem(into, pack.stem)
        keep = into / f"{stem}.keep"
        kept.append(keep)
        keep.write_text(mark)
        for suffix in (".pack", ".rev", ".idx"):  # the index last: it makes the pack seen
            part = pack.with_suffix(suffix)
            if part.exists():
                atomic.replace(part, into / f"{stem}{suffix}")
