"""A remote's configuration as the operation log records it, and setting it back.

``jp remote add`` and ``jp remote remove`` go through here so that the
operation log records the remote's settings before and after (and, for a
removal, the fetched copies it deletes), and ``jp undo`` can put them back.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitstore.errors import UndoConflict
from gitstore.git import config as configfile
from gitstore.git.refs import quarantine
from gitstore.git.refs.transaction import RefUpdate
from gitstore.oplog import remotediff
from gitstore.oplog.model import RemoteChange
from gitstore.sync import remotes

if TYPE_CHECKING:
    import pygit2

    from gitstore.store.core import Store
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")


def snapshot(repo: pygit2.Repository, name: str) -> dict[str, Any] | None:
    """The remote's URL and refspecs as the store's config file holds them (None: no
    such remote), read as ``revert`` reads them.  Not libgit2's remote: it rewrites
    the URL by ``url.<base>.insteadOf``, which an undo would then write back."""
    return _read(configfile.own(Path(repo.path)), name)


def _read(cfg: pygit2.Config, name: str) -> dict[str, Any] | None:
    """The remote's URL and refspecs as one config file holds them (None: none);
    the one reader of both the operation log's record and an undo's check."""
    prefix = f"remote.{name}."
    try:
        url = str(cfg[prefix + "url"])
    except (KeyError, pygit2.GitError):
        url = ""
    specs: dict[str, list[str]] = {}
    for key in ("fetch", "push"):
        try:
            specs[key] = [str(v) for v in cfg.get_multivar(prefix + key)]
        except (KeyError, pygit2.GitError):
            specs[key] = []
    if not url and not specs["fetch"] and not specs["push"]:
        return None
    return {"url": url, **specs}


def revert(
    repo: pygit2.Repository,
    name: str,
    before: Mapping[str, Any] | None,
    after: Mapping[str, Any] | None,
    op_id: str | None,
    force: bool = False,
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """Take back the change of remote ``name`` from ``before`` to ``after`` (an
    operation's), in one atomic write of the config, compared in that same write:
    with ``op_id`` (an undo), each key the change altered must still hold what it
    left, else ``UndoConflict`` (unless ``force``); only the change itself is taken
    back (``remotediff.reverted``).  Returns the remote's settings before and after."""
    remotes.check_name(name)
    seen: list[tuple[dict[str, Any] | None, dict[str, Any] | None]] = []

    def change(cfg: pygit2.Config) -> None:
        current = _read(cfg, name)
        bad = [] if force or op_id is None else remotediff.conflicts(before, after, current)
        if bad:
            key = bad[0]
            raise UndoConflict(
                str(op_id),
                f"remote.{name}.{key}",
                remotediff.shown(after, key),
                remotediff.shown(current, key),
            )
        wanted = remotediff.reverted(before, after, current, force)
        _write(cfg, name, current, wanted)
        seen.append((current, wanted))

    configfile.edit(Path(repo.path), change)
    return seen[-1] if seen else (None, None)


def _write(
    cfg: pygit2.Config,
    name: str,
    current: Mapping[str, Any] | None,
    wanted: Mapping[str, Any] | None,
) -> None:
    """Change only the values that differ between ``current`` and ``wanted``."""
    prefix = f"remote.{name}."
    url = str((wanted or {}).get("url") or "")
    if url != str((current or {}).get("url") or ""):
        if url:
            cfg[prefix + "url"] = url
        else:
            with contextlib.suppress(KeyError, pygit2.GitError):
                del cfg[prefix + "url"]
    for key in ("fetch", "push"):
        now = [str(s) for s in (current or {}).get(key) or []]
        then = [str(s) for s in (wanted or {}).get(key) or []]
        gone = [s for s in now if s not in then]
        if gone:
            with contextlib.suppress(KeyError, pygit2.GitError):
                cfg.delete_multivar(prefix + key, configfile.exact(gone))
        for spec in then:
            if spec not in now:
                cfg.set_multivar(prefix + key, "^$", spec)


def add(store: Store, name: str, url: str) -> str:
    """``remotes.add``, recorded in the operation log."""
    before = snapshot(store.place.repo, name)
    result = remotes.add(store.place.repo, name, url, store.notes.refs)
    store.ops.remote(RemoteChange(name, before, snapshot(store.place.repo, name)))
    return result


def remove(store: Store, name: str) -> str:
    """``remotes.remove``, recorded with the fetched copies it deletes."""
    repo = store.place.repo
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
    return remotes.all_remotes(store.place.repo)


def find(store: Store, name: str) -> remotes.RemoteInfo | None:
    return remotes.find(store.place.repo, name)


def default(store: Store) -> str | None:
    """The remote a sync uses when none is named (``remotes.default``)."""
    return remotes.default(store.place.repo)
