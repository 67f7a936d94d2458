"""The transport of a machine without ``git``: libgit2's remote API (``transport.choose``).

It does the job less well than the git command line: no glob push (every ref is
listed), one non-fast-forward aborts the whole push, and a deletion's lease is
checked against the remote's advertisement just before the push rather than in it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pygit2

from gitstore.errors import SyncError
from gitstore.refs import files as refread
from gitstore.sync.callbacks import Callbacks
from gitstore.sync.gitoutput import RefResult
from gitstore.sync.plan import RemoteUpdate
from gitstore.sync.transport import RefRow, object_kind


class Pygit2Transport:
    name = "pygit2"

    def __init__(self, repo: pygit2.Repository) -> None:
        self.repo = repo

    def _remote(self, remote: str) -> pygit2.Remote:
        """An anonymous remote at the configured URL: libgit2 would otherwise
        apply the remote's configured push refspecs to fetched refs too, and
        overwrite local conversations with the remote's."""
        try:
            url = self.repo.remotes[remote].url
        except (KeyError, ValueError):
            raise SyncError(remote, "no such remote") from None
        if not url:
            raise SyncError(remote, "the remote has no URL")
        return self.repo.remotes.create_anonymous(url)

    def fetch(
        self, remote: str, refspecs: Sequence[str], prune: bool = True, tips: Sequence[str] = ()
    ) -> None:
        mode = pygit2.enums.FetchPrune.PRUNE if prune else pygit2.enums.FetchPrune.NO_PRUNE
        self.ls_remote(remote)  # a remote libgit2 cannot list whole is an error, not empty
        try:
            self._remote(remote).fetch(list(refspecs), callbacks=Callbacks(), prune=mode)
        except pygit2.GitError as exc:
            raise SyncError(remote, str(exc)) from None

    def list_refs(self, prefixes: Sequence[str]) -> list[RefRow]:
        """Refs read as files where the store allows it: libgit2's own listing stops
        short of refs nested deeply (about 100 levels) and says nothing."""
        plain = refread.plain_gitdir(Path(self.repo.path))
        if plain is not None:
            found = refread.list_refs(plain, prefixes)
        else:
            found = {}
            for ref in self.repo.references.iterator():
                if ref.name.startswith(tuple(prefixes)) and isinstance(ref.target, pygit2.Oid):
                    found[ref.name] = str(ref.target)
        rows = sorted(found.items())
        return [RefRow(name, oid, object_kind(self.repo, oid)) for name, oid in rows]

    def ls_remote(self, remote: str) -> dict[str, str]:
        try:
            heads = self._remote(remote).list_heads(callbacks=Callbacks())
        except pygit2.GitError as exc:
            raise SyncError(remote, str(exc)) from None
        listed = {
            h.name: str(h.oid)
            for h in heads
            if h.name and h.name.startswith("refs/") and not h.symref_target
        }
        self._check_complete(remote, listed)
        return listed

    def _check_complete(self, remote: str, listed: dict[str, str]) -> None:
        """A remote on this machine whose refs libgit2 did not all list (it lists none
        once one is nested about 100 levels deep): say so rather than sync blind."""
        url = self.repo.remotes[remote].url or ""
        path = Path(url[len("file://") :] if url.startswith("file://") else url)
        plain = refread.plain_gitdir(path) if path.is_absolute() or path.exists() else None
        if plain is None:
            return
        missed = sorted(set(refread.list_refs(plain, ["refs/"])) - set(listed))
        if missed:
            raise SyncError(
                remote,
                f"libgit2 cannot list the remote's refs ({len(missed)} missed, such as "
                f"{missed[0][:80]}); install git, whose listing sees every ref",
            )

    def delete_refs(self, names: Sequence[str]) -> None:
        for name in names:
            try:
                self.repo.references.delete(name)
            except (KeyError, pygit2.InvalidSpecError):
                continue

    def maintain(self) -> None:
        """Nothing: without git there is no `git gc` to run."""

    def pack_refs(self) -> None:
        self.repo.compress_references()

    def push(self, remote: str, updates: Sequence[RemoteUpdate]) -> list[RefResult]:
        handle = self._remote(remote)
        stale: set[str] = set()
        if any(u.new is None for u in updates):
            try:
                heads = {h.name: str(h.oid) for h in handle.list_heads(callbacks=Callbacks())}
            except pygit2.GitError as exc:
                raise SyncError(remote, str(exc)) from None
            stale = {u.ref for u in updates if u.new is None and heads.get(u.ref) != u.lease}
        sent = [u for u in updates if u.ref not in stale]
        callbacks = Callbacks()
        specs = [f":{u.ref}" if u.new is None else f"{u.new}:{u.ref}" for u in sent]
        failure = ""
        if specs:
            try:
                handle.push(specs, callbacks=callbacks)
            except pygit2.GitError as exc:
                failure = str(exc)
        results: list[RefResult] = []
        for u in updates:
            if u.ref in stale:
                results.append(RefResult(u.ref, False, "[rejected] (stale info)"))
            elif failure:
                results.append(RefResult(u.ref, False, f"[rejected] ({failure})"))
            elif u.ref in callbacks.rejected:
                results.append(RefResult(u.ref, False, f"[rejected] ({callbacks.rejected[u.ref]})"))
            else:
                results.append(RefResult(u.ref, True, "ok"))
        return results
