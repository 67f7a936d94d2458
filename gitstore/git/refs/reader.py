"""Reading refs behind one interface, chosen once when a store opens.

A plain git directory is read as files (``files``: loose refs, then
``packed-refs``), so a command that finds what it needs in the cache never
loads libgit2.  A worktree, a ``.git`` file or a reftable store is read
through libgit2, which knows those layouts.  Both answer the same questions
the same way: the commit a ref points at (following symbolic refs), the
direct refs under some prefixes, and the ref a symbolic ref names.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from gitstore.git.refs import files

if TYPE_CHECKING:
    import pygit2
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")


class FileRefs:
    """A plain git directory's refs, read as files."""

    def __init__(self, gitdir: Path) -> None:
        self.gitdir = gitdir

    def read(self, name: str) -> str | None:
        """The commit ``name`` points at, symbolic refs followed; None if it is absent."""
        return files.read_ref(self.gitdir, name)

    def listing(self, prefixes: tuple[str, ...]) -> dict[str, str]:
        """Every ref under ``prefixes`` that points at an object: name -> id."""
        return files.list_refs(self.gitdir, prefixes)

    def symbolic(self, name: str) -> str | None:
        """The ref that the symbolic ref ``name`` names; None if it is absent or direct."""
        return files.symbolic_target(self.gitdir, name)

    def state(self, prefixes: tuple[str, ...]) -> str | None:
        """A cheap fingerprint of the refs under ``prefixes`` (None: none that is cheap)."""
        return files.refs_state(self.gitdir, prefixes)

    def held(self, folders: tuple[str, ...]) -> files.Held | None:
        """The refs directly under ``folders`` read once, to tell many names absent
        (None: each look-up is as cheap)."""
        return files.Held(self.gitdir, folders)


class GitRefs:
    """Any repository's refs, read through libgit2 (opened on first use); the same
    questions as ``FileRefs``, the same answers."""

    def __init__(self, repo: Callable[[], pygit2.Repository]) -> None:
        self._repo = repo

    def read(self, name: str) -> str | None:
        try:
            target = self._repo().references[name].resolve().target
        except (KeyError, pygit2.InvalidSpecError, pygit2.GitError):
            return None
        return str(target) if isinstance(target, pygit2.Oid) else None

    def listing(self, prefixes: tuple[str, ...]) -> dict[str, str]:
        # one pass over the refdb: a lookup per name costs a stat per loose ref
        return {
            ref.name: str(ref.target)
            for ref in self._repo().references.iterator()
            if ref.name.startswith(prefixes) and isinstance(ref.target, pygit2.Oid)
        }

    def symbolic(self, name: str) -> str | None:
        try:
            target = self._repo().lookup_reference(name).target
        except (KeyError, pygit2.InvalidSpecError):
            return None
        return target if isinstance(target, str) else None

    def state(self, prefixes: tuple[str, ...]) -> str | None:
        return None  # a reftable or a worktree: nothing cheaper than listing them

    def held(self, folders: tuple[str, ...]) -> files.Held | None:
        return None  # a layout only libgit2 reads: it looks each name up


RefReader = FileRefs | GitRefs  # what the store asks of its refs


def reader_for(plain: Path | None, repo: Callable[[], pygit2.Repository]) -> RefReader:
    """Files for a plain git directory, libgit2 otherwise."""
    return FileRefs(plain) if plain is not None else GitRefs(repo)
