"""Where one store's git data lives: its git directory and libgit2's repository on it.

The functions that read or write git's own files beside libgit2 (ref
transactions and their repair, creations, the packed-refs rebuild, the
operation log's trim, the disk-fault check, maintenance's estimate) need both;
they take one ``Place`` rather than the two as a pair.  A store makes its
place once (``store/ground.py``); the repository opens on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import pygit2


class Place(NamedTuple):
    """A git directory, and the opener of libgit2's repository on it."""

    gitdir: Path
    opener: Callable[[], pygit2.Repository]

    @property
    def repo(self) -> pygit2.Repository:
        """libgit2's repository (opened by the first caller that needs it)."""
        return self.opener()

    @classmethod
    def of(cls, repo: pygit2.Repository, gitdir: Path | None = None) -> Place:
        """The place of an already opened repository (its own folder unless given)."""
        return cls(gitdir if gitdir is not None else Path(repo.path), lambda: repo)
