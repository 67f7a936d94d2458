"""Remotes of a store: git config entries with jp's refspecs.

Fetched copies live under ``refs/jp-remotes/<remote>/`` (not
``refs/remotes/``, which ``git branch -r`` lists), so plain ``git fetch`` in
the store does what ``jp pull`` fetches.  A remote jp creates also gets push
refspecs, so plain ``git push`` sends what ``jp push`` sends.  A remote that
already existed (a project's ``origin``) only gets the fetch refspecs: push
refspecs would change what a bare ``git push`` of the project's branch does.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass

import pygit2

from gitstore.errors import SyncError

TRACKING_ROOT = "refs/jp-remotes/"
SYNCED = ("conversations", "archive", "notes")  # the namespaces under refs/ that travel
PUSH_REFSPECS = tuple(f"refs/{n}/*:refs/{n}/*" for n in SYNCED)

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def check_name(name: str) -> str:
    if not _NAME.fullmatch(name) or ".." in name or name.endswith((".lock", ".")):
        raise SyncError(name, "not a valid remote name (letters, digits, '.', '_', '-')")
    return name


def tracking_prefix(remote: str) -> str:
    return f"{TRACKING_ROOT}{check_name(remote)}/"


def fetch_refspecs(remote: str) -> list[str]:
    prefix = tracking_prefix(remote)
    return [f"+refs/{n}/*:{prefix}{n}/*" for n in SYNCED]


@dataclass(frozen=True)
class RemoteInfo:
    name: str
    url: str
    fetch: tuple[str, ...]
    push: tuple[str, ...]

    @property
    def configured(self) -> bool:
        """Whether plain ``git fetch`` brings conversations too."""
        return all(spec in self.fetch for spec in fetch_refspecs(self.name))

    @property
    def foreign(self) -> bool:
        """The remote has refspecs of its own (it was not made by jp)."""
        ours = set(fetch_refspecs(self.name)) | set(PUSH_REFSPECS)
        return any(spec not in ours for spec in self.fetch + self.push)


def _info(remote: pygit2.Remote) -> RemoteInfo:
    return RemoteInfo(
        str(remote.name),
        str(remote.url or ""),
        tuple(str(s) for s in remote.fetch_refspecs),
        tuple(str(s) for s in remote.push_refspecs),
    )


def all_remotes(repo: pygit2.Repository) -> list[RemoteInfo]:
    return sorted((_info(r) for r in repo.remotes), key=lambda r: r.name)


def find(repo: pygit2.Repository, name: str) -> RemoteInfo | None:
    try:
        return _info(repo.remotes[name])
    except (KeyError, ValueError, pygit2.GitError):
        return None


def add(repo: pygit2.Repository, name: str, url: str) -> str:
    """Create remote ``name``, or add jp's fetch refspecs to an existing one
    with the same URL.  Returns "created", "configured" or "unchanged"."""
    check_name(name)
    if not url.strip():
        raise SyncError(name, "the URL is empty")
    existing = find(repo, name)
    if existing is not None:
        if existing.url != url:
            raise SyncError(name, f"already exists with URL {existing.url}")
        missing = [s for s in fetch_refspecs(name) if s not in existing.fetch]
        for spec in missing:
            repo.remotes.add_fetch(name, spec)
        return "configured" if missing else "unchanged"
    specs = fetch_refspecs(name)
    repo.remotes.create(name, url, specs[0])
    for spec in specs[1:]:
        repo.remotes.add_fetch(name, spec)
    for spec in PUSH_REFSPECS:
        repo.remotes.add_push(name, spec)
    return "created"


def remove(repo: pygit2.Repository, name: str) -> str:
    """Forget remote ``name`` and its fetched copies.  A remote with refspecs
    of its own keeps them (only jp's are dropped).  Returns "removed" or
    "unconfigured"."""
    info = find(repo, name)
    if info is None:
        raise SyncError(name, "no such remote")
    kept = "unconfigured"
    if info.foreign:
        ours = set(fetch_refspecs(name)) | set(PUSH_REFSPECS)
        keys = ((f"remote.{name}.fetch", info.fetch), (f"remote.{name}.push", info.push))
        for key, values in keys:
            if not any(v in ours for v in values):
                continue
            repo.config.delete_multivar(key, ".*")
            for value in values:
                if value not in ours:
                    repo.config.set_multivar(key, "^$", value)
    else:
        repo.remotes.delete(name)
        kept = "removed"
    prefix = tracking_prefix(name)
    for ref in [r for r in repo.listall_references() if r.startswith(prefix)]:
        with contextlib.suppress(KeyError):
            repo.references.delete(ref)
    return kept
