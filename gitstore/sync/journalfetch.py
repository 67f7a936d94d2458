"""The remote's journal fetched into a small repository beside the store, not the store.

Whatever a ``git fetch`` into the store brings, git pays for every ref the store
holds: before it asks, it marks the commit of each local ref as had (0.54 s at
100,000 conversations and as many copies), and after, its connectivity check
lists every ref again (0.71 s).  The journal is one ref and a commit or two, so
each pull paid 1.5 s for it there.  Fetched instead into a side repository
under ``jp/`` (one per remote, used only under that remote's sync lock), which
borrows the store's objects (``objects/info/alternates``) and holds only the
journal copies, the same fetch costs 0.05 s: git offers the copy as had, checks
every object it receives (``fetch.fsckObjects``) and keeps them as a pack
(``fetch.unpackLimit=1``); the pack moves into the store behind a ``.keep``
(as a first pull's do: git's gc leaves it alone while no ref names it), the
store's incoming copies are set as the fetch would have set them (and pruned
as it would have pruned them), then the ``.keep`` goes.

The side fetch is git's own, from the remote by name: the side repository's
config includes the store's, so the remote, its URL rewrites and its options are
the ones a fetch in the store reads, and its environment is any fetch's.  Anything unusual (git refusing it, loose objects, a
store that is not a plain git directory) says False and the fetch runs in the
store as before, which fails, or succeeds, in its own words.  A killed run
leaves the side repository and marked ``.keep`` files, which the next one
clears first.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

from gitstore.refs import files as refread
from gitstore.sync import firstclone, journal, remotes
from gitstore.sync.transport import FSCK, NO_REFLOG, GitCli, Transport


def folder(gitdir: Path, remote: str) -> Path:
    tag = hashlib.sha256(remote.encode()).hexdigest()[:16]
    return gitdir / "jp" / f"journal-{tag}.git"


def _mark(remote: str) -> str:
    return f"jp: the journal of {folder(Path(), remote).stem}, until its copy is written\n"


def clear(gitdir: Path, remote: str) -> None:
    """What a killed journal fetch from ``remote`` left: the side repository's
    objects and refs, and the ``.keep`` files of the packs it moved in."""
    side = folder(gitdir, remote)
    if side.exists():
        shutil.rmtree(side, ignore_errors=True)
    mark = _mark(remote)
    for keep in (gitdir / "objects" / "pack").glob("pack-*.keep"):
        try:
            if keep.read_text(errors="replace") == mark:
                keep.unlink()
        except OSError:
            continue


def fetch(transport: Transport, remote: str, gitdir: Path) -> bool:
    """Fetch the remote's journal into its incoming copies through the side
    repository; False when the caller must fetch it in the store."""
    if not isinstance(transport, GitCli) or transport.repo is None:
        return False
    if refread.plain_gitdir(gitdir) != gitdir:
        return False
    if not _sha1_store(gitdir) or any(c in str(gitdir) for c in '"\\\n'):
        return False
    tracking = remotes.tracking_prefix(remote)
    incoming, copy = tracking + journal.INCOMING, tracking + journal.COPY
    clear(gitdir, remote)
    side = folder(gitdir, remote)
    kept: list[Path] = []
    try:
        _prepare(side, gitdir, refread.matching_refs(gitdir, [copy + "*"]) or {}, tracking)
        args = [transport.git, "--git-dir", str(side), *NO_REFLOG, *FSCK]
        args += ["-c", "fetch.unpackLimit=1", "fetch", "--no-tags", "--quiet", "--no-auto-gc"]
        args += ["--no-write-fetch-head", f"--negotiation-tip={copy}*", "--prune", remote]
        args += [f"+{journal.REMOTE_REF}*:{incoming}*"]
        try:
            done = subprocess.run(args, capture_output=True, env=transport.env(remote))
        except OSError:
            return False
        if done.returncode != 0 or firstclone.has_loose_objects(side):
            return False
        fetched = refread.matching_refs(side, [incoming + "*"])
        if fetched is None:
            return False
        firstclone.move_packs(side, gitdir, _mark(remote), kept)
        return _set_copies(transport, gitdir, incoming, fetched)
    except OSError:
        return False  # the fetch in the store runs, and names a fault of this machine
    finally:
        for keep in kept:
            keep.unlink(missing_ok=True)
        clear(gitdir, remote)


def _prepare(side: Path, gitdir: Path, copies: dict[str, str], tracking: str) -> None:
    """A bare repository at ``side`` that borrows the store's objects and holds the
    store's journal copies (what the fetch offers as had)."""
    for sub in ("objects/info", "objects/pack", "refs"):
        (side / sub).mkdir(parents=True, exist_ok=True)
    (side / "HEAD").write_text("ref: refs/heads/main\n")
    (side / "objects" / "info" / "alternates").write_text(str(gitdir / "objects") + "\n")
    # the store's own settings (the remote, its URL rewrites, its transport's options)
    # apply as to a fetch in the store; then this repository's: the connectivity
    # check lists the borrowed repository's refs under the journal copies' folder alone
    (side / "config").write_text(
        f'[include]\n\tpath = "{gitdir / "config"}"\n'
        "[core]\n\trepositoryformatversion = 0\n\tbare = true\n"
        f"\tlogAllRefUpdates = false\n\talternateRefsPrefixes = {tracking}jp/\n"
    )
    for name, oid in copies.items():
        path = side / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(oid + "\n")


def _sha1_store(gitdir: Path) -> bool:
    """Whether the store's objects are SHA-1 (the side repository is of that format)."""
    try:
        text = (gitdir / "config").read_text(encoding="utf-8", errors="replace").lower()
    except OSError:
        return False
    return "objectformat" not in text and "[extensions" not in text


def _set_copies(transport: GitCli, gitdir: Path, incoming: str, fetched: dict[str, str]) -> bool:
    """The store's incoming copies as the fetch into it would leave them: each one the
    side fetch wrote, and none it pruned (a remote without a journal)."""
    repo = transport.repo
    assert repo is not None
    here = refread.matching_refs(gitdir, [incoming + "*"]) or {}
    for name in sorted(set(here) - set(fetched)):
        if not remotes.set_copy(repo, name, None):
            return False
    return all(remotes.set_copy(repo, name, oid) for name, oid in sorted(fetched.items()))
