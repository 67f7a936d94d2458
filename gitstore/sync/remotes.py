"""Remotes of a store: git config entries with jp's refspecs (docs/sync.md, "What
travels" and "Removing a remote").

Fetched copies live under ``refs/jp-remotes/<remote>/``.  A remote jp creates
gets push refspecs too; one that already existed (a project's ``origin``) only
the fetch refspecs.  Removing a remote touches nothing but its settings and
copies, in one atomic write of the config: libgit2's remote delete is never
used (it deletes every local ref its refspecs match: every conversation).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import pygit2

from gitstore import faults
from gitstore.errors import EnvironmentFault, RefBusy, RemoteSetupError, SyncError
from gitstore.fs import retry
from gitstore.git import config as configfile
from gitstore.git import refs
from gitstore.git.command import redact
from gitstore.git.refs import bulk, quarantine
from gitstore.git.refs import files as refread
from gitstore.git.refs.transaction import WAIT_SECONDS
from gitstore.sync.remotespecs import (  # the names and refspecs, read without libgit2
    PUSH_REFSPECS,
    SPACES,
    TRACKING_ROOT,
    RemoteInfo,
    check_name,
    check_url,
    default_of,
    fetch_refspecs,
    jp_refspecs,
    legacy_refspecs,
    push_refspecs,
    tracking_prefix,
)

__all__ = [
    "PUSH_REFSPECS",
    "SPACES",
    "TRACKING_ROOT",
    "RemoteInfo",
    "check_name",
    "fetch_refspecs",
    "jp_refspecs",
    "push_refspecs",
    "tracking_prefix",
]


def _settings(repo: pygit2.Repository, name: str) -> tuple[str, ...]:
    prefix = f"remote.{name}."
    keys = set()
    for entry in repo.config:
        if entry.name.startswith(prefix):
            keys.add(entry.name[len(prefix) :].lower())
    return tuple(sorted(keys - {"url", "fetch", "push"}))


def _info(repo: pygit2.Repository, remote: pygit2.Remote) -> RemoteInfo:
    return RemoteInfo(
        str(remote.name),
        str(remote.url or ""),
        tuple(str(s) for s in remote.fetch_refspecs),
        tuple(str(s) for s in remote.push_refspecs),
        _settings(repo, str(remote.name)),
    )


def all_remotes(repo: pygit2.Repository) -> list[RemoteInfo]:
    return sorted((_info(repo, r) for r in repo.remotes), key=lambda r: r.name)


def find(repo: pygit2.Repository, name: str) -> RemoteInfo | None:
    try:
        return _info(repo, repo.remotes[name])
    except (KeyError, ValueError, pygit2.GitError):
        return None


def default(repo: pygit2.Repository) -> str | None:
    return default_of(all_remotes(repo))


def _gitdir(repo: pygit2.Repository) -> Path:
    return Path(repo.path)


def _written_url(repo: pygit2.Repository, name: str) -> str:
    """Remote ``name``'s URL as the config holds it: libgit2's remote gives it
    rewritten by ``url.<base>.insteadOf``, which git applies only when it uses it."""
    try:
        return str(repo.config[f"remote.{name}.url"])
    except (KeyError, pygit2.GitError):
        return ""


def add(
    repo: pygit2.Repository, name: str, url: str, notes: refs.NotesRefs = refs.STANDALONE
) -> str:
    """Create remote ``name``, or add jp's fetch refspecs to an existing one
    with the same URL.  Refspecs an earlier jp wrote are replaced.  Returns
    "created", "configured", "updated" (replaced) or "unchanged"."""
    check_name(name)
    check_url(name, url)
    existing = find(repo, name)
    fetch, legacy = fetch_refspecs(name), legacy_refspecs(name)
    if existing is not None:
        written = _written_url(repo, name)  # libgit2's ``existing.url`` is rewritten
        if written != url:
            raise RemoteSetupError(name, f"already exists with URL {redact(written)}")
        missing = [s for s in fetch if s not in existing.fetch]
        stale = [s for s in existing.fetch + existing.push if s in legacy]
        if not missing and not stale:
            return "unchanged"
        push = [s for s in push_refspecs(notes) if s not in existing.push]
        if not any(s in legacy for s in existing.push):
            push = []  # jp gave it no push refspecs: a bare `git push` stays the project's

        def upgrade(cfg: pygit2.Config) -> None:
            _drop(cfg, name, legacy)
            for key, values in ((f"remote.{name}.fetch", missing), (f"remote.{name}.push", push)):
                for value in values:
                    cfg.set_multivar(key, "^$", value)

        configfile.edit(_gitdir(repo), upgrade)
        return "updated" if stale else "configured"

    def create(cfg: pygit2.Config) -> None:
        cfg[f"remote.{name}.url"] = url
        for value in fetch:
            cfg.set_multivar(f"remote.{name}.fetch", "^$", value)
        for value in push_refspecs(notes):
            cfg.set_multivar(f"remote.{name}.push", "^$", value)

    configfile.edit(_gitdir(repo), create)
    return "created"


def _drop(cfg: pygit2.Config, name: str, specs: set[str]) -> None:
    """Delete the values in ``specs`` from the remote's fetch and push keys."""
    pattern = configfile.exact(sorted(specs))
    for key in (f"remote.{name}.fetch", f"remote.{name}.push"):
        with contextlib.suppress(KeyError, pygit2.GitError):
            cfg.delete_multivar(key, pattern)


def _forget(cfg: pygit2.Config, name: str) -> None:
    """Delete every ``remote.<name>.*`` key."""
    prefix = f"remote.{name}.".lower()
    keys = {e.name for e in cfg if e.name.lower().startswith(prefix)}
    for key in sorted(keys):
        with contextlib.suppress(KeyError, pygit2.GitError):
            cfg.delete_multivar(key, ".*")


def remove(repo: pygit2.Repository, name: str) -> str:
    """Forget remote ``name`` and its fetched copies; local conversations and notes
    stay as they are.  A remote with settings of its own keeps them (only jp's
    refspecs go).  Returns "removed", "unconfigured", or "copies-removed" when
    the remote was already gone (say, by plain ``git remote remove``) but jp's
    copies of it were left."""
    check_name(name)
    info = find(repo, name)
    if info is None:
        if not drop_copies(repo, name):
            raise SyncError(name, "no such remote")
        return "copies-removed"
    ours = jp_refspecs(name)
    if info.foreign:
        configfile.edit(_gitdir(repo), lambda cfg: _drop(cfg, name, ours))
        result = "unconfigured"
    else:
        configfile.edit(_gitdir(repo), lambda cfg: _forget(cfg, name))
        result = "removed"
    faults.point("remote:config-written")
    drop_copies(repo, name)
    return result


def drop_copies(repo: pygit2.Repository, name: str) -> int:
    """Delete jp's copies of remote ``name`` (``refs/jp-remotes/<name>/*``), and what a
    pull from it kept aside (``refs/jp/quarantine/<name>/*`` with its reasons), at
    once (``_delete``)."""
    prefixes = (tracking_prefix(name), quarantine.prefix(name))
    gitdir = _gitdir(repo)
    # read as git reads them (loose, then packed-refs): libgit2 reads packed-refs
    # first, and missed the copies a `git pack-refs` packed in between
    found = refread.matching_refs(gitdir, prefixes) if refread.plain_gitdir(gitdir) else None
    if found is None:
        found = {r: "" for r in repo.listall_references() if r.startswith(prefixes)}
    gone = sorted(found)
    _delete(repo, gone, WAIT_SECONDS)
    quarantine.forget(gitdir, name)
    return len(gone)


def _delete(repo: pygit2.Repository, names: list[str], wait: float) -> bool:
    """Delete ``names`` whatever they point at, in git's order under its
    ``packed-refs.lock`` (``bulk.delete``): libgit2's deletion reads
    ``packed-refs`` before it takes that lock, so a ``git pack-refs`` in between
    lost the refs it packed, or brought a deleted one back.  ``RefBusy``: git held
    the lock past ``wait``, nothing deleted.  False: one that libgit2 deletes (a
    store not of plain files, or with no hard links) was locked, and stays."""
    gitdir = _gitdir(repo)
    if bulk.delete(gitdir, names, wait):
        bulk.forget(gitdir, names)
        return True
    done = True
    for ref in names:
        try:
            repo.references.delete(ref)
        except KeyError:
            continue
        except pygit2.GitError:
            done = False
    return done


COPY_WAIT = 1.0  # seconds a copy's write waits out a lock git's gc or pack-refs holds


def set_copy(repo: pygit2.Repository, name: str, target: str | None, message: str = "") -> bool:
    """Point the remote-tracking copy ``name`` at ``target`` (None: delete it).
    A concurrent `git gc` or `git pack-refs` locks loose refs and packed-refs
    while it packs them: the write waits up to ``COPY_WAIT`` seconds, then gives
    up (False).  A copy is only what this side last saw of the remote, so the next
    pull or push writes it again."""
    if target is None:
        try:
            return _delete(repo, [name], COPY_WAIT)
        except (RefBusy, EnvironmentFault, OSError):
            return False
    for attempt in retry.until(COPY_WAIT, 0.05):
        try:
            repo.create_reference_direct(name, target, True, message=message)
            return True
        except (OSError, pygit2.GitError):
            if attempt.last:
                return False
    return False
