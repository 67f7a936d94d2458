"""The refs a big push sends, staged under ``refs/jp-push/<remote>/`` for one glob
per namespace (``transport.GitCli.push``: git matches every explicit refspec
against every ref, and a command line holds only so many).

Where the store's refs are plain files the staged refs go straight into
``packed-refs`` and leave it again in one rewrite each (``update_refs``, and
``refs.bulk`` for the drop), where
``git update-ref`` would write, lock and delete a loose file per ref: for the
100,000 refs of a first push that is most of what jp adds to git's own push.
Anything else (a store git's gc holds, one whose refs are not files, a loose
ref a killed push left) goes through git as before.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from gitstore.errors import RefBusy
from gitstore.fs.place import Place
from gitstore.git.refs import bulk
from gitstore.git.refs import files as refread
from gitstore.git.refs.transaction import WAIT_SECONDS, RefUpdate
from gitstore.git.refs.update import update_refs
from gitstore.sync.plan import RemoteUpdate

if TYPE_CHECKING:
    import pygit2
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")  # opened only by a mechanism that needs libgit2

Commands = Callable[[list[str]], None]  # `git update-ref --stdin` of these lines


def stage(gitdir: Path, prefix: str, sets: Sequence[RemoteUpdate], update: Commands) -> None:
    """Each of ``sets`` as a ref under ``prefix`` (empty: ``clear`` went first)."""
    wanted = {f"{prefix}{u.ref[len('refs/') :]}": str(u.new) for u in sets}
    if refread.plain_gitdir(gitdir) is not None:
        place = Place(gitdir, lambda: pygit2.Repository(str(gitdir)))  # opened if needed
        creations = [RefUpdate(name, None, oid) for name, oid in wanted.items()]
        try:
            made = update_refs(place, creations, "jp push", atomic=False, reflog=False)
        except (bulk.NoHardLinks, RefBusy):
            made = set()  # git's gc holds packed-refs, or no hard links: through git
        wanted = {name: oid for name, oid in wanted.items() if name not in made}
    update([f"update {name} {oid}" for name, oid in wanted.items()])


def clear(gitdir: Path, prefix: str, update: Commands, listed: Callable[[str], list[str]]) -> None:
    """Remove every ref under ``prefix``: the packed ones in one rewrite, then any
    loose one through git (``listed``: the ``delete`` lines of what git lists)."""
    if refread.plain_gitdir(gitdir) is not None:
        try:
            bulk.drop(gitdir, prefix, WAIT_SECONDS)
            if not _holds_files(gitdir / prefix):
                return
        except (bulk.NoHardLinks, RefBusy):
            pass
    update(listed(prefix))


def _holds_files(folder: Path) -> bool:
    """Whether ``folder`` (of loose refs) holds a file, however deep."""
    return any(files for _, _, files in os.walk(folder))
