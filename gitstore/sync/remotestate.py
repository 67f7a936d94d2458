"""A remote's configuration as the operation log records it, and setting it back.

``jp remote add`` and ``jp remote remove`` go through here so that the
operation log records the remote's settings before and after (and, for a
removal, the fetched copies it deletes), and ``jp undo`` can put them back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from gitstore.oplog.model import RemoteChange
from gitstore.refs.transaction import RefUpdate
from gitstore.sync import quarantine, remotes

if TYPE_CHECKING:
    import pygit2

    from gitstore.store.core import Store
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")


def snapshot(repo: pygit2.Repository, name: str) -> dict[str, Any] | None:
    """The remote's URL and refspecs (None: no such remote)."""
    info = remotes.find(repo, name)
    if info is None:
        return None
    return {"url": info.url, "fetch": list(info.fetch), "push": list(info.push)}


def set_to(repo: pygit2.Repository, name: str, value: Mapping[str, Any] | None) -> None:
    """Give remote ``name`` exactly the settings ``value`` (None: remove its settings)."""
    remotes.check_name(name)
    cfg = repo.config
    for key in ("fetch", "push"):
        try:
            cfg.delete_multivar(f"remote.{name}.{key}", ".*")
        except (KeyError, pygit2.GitError):
            pass
    if value is None:
        try:
            del cfg[f"remote.{name}.url"]
        except (KeyError, pygit2.GitError):
            pass
        return
    cfg[f"remote.{name}.url"] = str(value.get("url") or "")
    for key in ("fetch", "push"):
        for spec in value.get(key) or []:
            cfg.set_multivar(f"remote.{name}.{key}", "^$", str(spec))


def add(store: Store, name: str, url: str) -> str:
    """``remotes.add``, recorded in the operation log."""
    before = snapshot(store.repo, name)
    result = remotes.add(store.repo, name, url, store.notes_refs)
    store.ops.remote(RemoteChange(name, before, snapshot(store.repo, name)))
    return result


def remove(store: Store, name: str) -> str:
    """``remotes.remove``, recorded with the fetched copies it deletes."""
    repo = store.repo
    before = snapshot(repo, name)
    # the copies it deletes, and any ref its refspecs name (libgit2 deletes what a
    # remote's refspecs match): each is recorded only if it did go
    names = (
        remotes.tracking_prefix(name),
        quarantine.prefix(name),
        *(f"refs/{n}/" for n in remotes.SPACES),
        "refs/notes/",
    )
    gone = []
    if before is not None:
        for ref in repo.listall_reference_objects():
            if str(ref.name).startswith(names) and isinstance(ref.target, pygit2.Oid):
                gone.append(RefUpdate(str(ref.name), str(ref.target), None))
    with store.ops.moving(gone, verify=True):
        result = remotes.remove(repo, name)
    store.ops.remote(RemoteChange(name, before, snapshot(repo, name)))
    return result


# -- a store's remotes, as commands read them ------------------------------------------


def listing(store: Store) -> list[remotes.RemoteInfo]:
    """Every remote of the store, jp's and others (``remotes.all_remotes``)."""
    return remotes.all_remotes(store.repo)


def find(store: Store, name: str) -> remotes.RemoteInfo | None:
    return remotes.find(store.repo, name)


def default(store: Store) -> str | None:
    """The remote a sync uses when none is named (``remotes.default``)."""
    return remotes.default(store.repo)
