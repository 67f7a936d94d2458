"""Opening and creating stores: git repositories in the "files" ref format."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from gitstore.clock import SYSTEM, Clock
from gitstore.errors import StoreError
from gitstore.git import config as gitconfig
from gitstore.git import refs
from gitstore.git.config import config_flag
from gitstore.git.refs.files import plain_gitdir
from gitstore.store import format as storeformat

if TYPE_CHECKING:
    import pygit2
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")

STORE_MARK = "jp.store"
PROJECT_MARK = "jp.project"  # `jp init --here`: jp's notes live under refs/notes/jp/
MACHINE_BYTES = 6  # a machine id: 12 hex digits


def _configure(
    repo: pygit2.Repository, notes: refs.NotesRefs = refs.STANDALONE, clock: Clock = SYSTEM
) -> None:
    cfg = repo.config
    # git logs custom ref namespaces only with "always"
    cfg["core.logAllRefUpdates"] = "always"
    # for `git notes merge` by hand: the union of lines, as jp merges them
    cfg[f"notes.{notes.meta.removeprefix('refs/notes/')}.mergeStrategy"] = "cat_sort_uniq"
    cfg[STORE_MARK] = "true"
    storeformat.write(repo)  # the format version (gitstore/storeformat.py)
    try:
        cfg["jp.machine"]
    except KeyError:
        cfg["jp.machine"] = clock.token(MACHINE_BYTES)


def init_bare(path: Path, clock: Clock = SYSTEM) -> tuple[pygit2.Repository, bool]:
    """Create a bare store at ``path`` (harmless when one exists).  Returns (repo, created).

    ``clock`` gives the store's machine id (``jp.machine``), as it gives every id the
    store makes."""
    if (path / "HEAD").exists() or (path / ".git").exists():
        repo = open_repo(path)
        _configure(repo, clock=clock)
        return repo, False
    if path.exists() and any(path.iterdir()):
        raise StoreError(str(path), "exists and is not an empty folder or a git repository")
    try:
        repo = pygit2.init_repository(str(path), bare=True)
    except pygit2.GitError as exc:
        raise StoreError(str(path), f"cannot create a repository: {exc}") from None
    _configure(repo, clock=clock)
    return repo, True


def init_store(path: Path, clock: Clock = SYSTEM) -> bool:
    """``jp init``: a bare store at ``path`` (harmless when one exists); True if made now."""
    return init_bare(path, clock)[1]


class ProjectStore(NamedTuple):
    """What ``jp init --here`` made of the repository around a folder."""

    path: str  # the repository's git directory, as git names it (no trailing slash)
    created: bool  # False when it was a store already
    notes: refs.NotesRefs


def init_project(start: Path, clock: Clock = SYSTEM) -> ProjectStore | None:
    """``jp init --here``: the git repository enclosing ``start`` becomes a store
    (refs only, see ``mark_project``); None when there is no repository there."""
    found = pygit2.discover_repository(str(start))
    if found is None:
        return None
    where = found.rstrip("/")
    created = not is_marked(Path(where))
    return ProjectStore(where, created, mark_project(open_repo(Path(found)), clock))


def mark_project(repo: pygit2.Repository, clock: Clock = SYSTEM) -> refs.NotesRefs:
    """Use an existing (non-bare) repository as a store: refs only, no work tree.

    Its notes go under ``refs/notes/jp/`` (the project's own notes are never
    jp's).  A repository that an earlier jp already made a store, without that
    mark, keeps the names its notes have.  Returns the notes refs in use.
    """
    cfg = repo.config
    if _flag(cfg, STORE_MARK) and not _flag(cfg, PROJECT_MARK):
        _configure(repo, clock=clock)
        return refs.STANDALONE
    cfg[PROJECT_MARK] = "true"
    _configure(repo, refs.PROJECT, clock)
    return refs.PROJECT


def _flag(cfg: pygit2.Config, name: str) -> bool:
    try:
        return bool(cfg.get_bool(name))
    except (KeyError, pygit2.GitError):
        return False


def notes_refs(gitdir: Path) -> refs.NotesRefs:
    """The notes refs of the store at ``gitdir`` (read as a file when it can be)."""
    found = config_flag(gitdir, "jp", "project")
    if found is None:
        try:
            found = _flag(pygit2.Repository(str(gitdir)).config, PROJECT_MARK)
        except (pygit2.GitError, KeyError):
            found = False
    return refs.PROJECT if found else refs.STANDALONE


def is_marked(path: Path) -> bool:
    """Whether `jp init --here` made the repository at ``path`` a store."""
    gitdir = plain_gitdir(path)
    found = config_flag(gitdir, "jp", "store") if gitdir is not None else None
    if found is not None:
        return found
    try:
        repo = pygit2.Repository(str(path))
    except (pygit2.GitError, KeyError):
        return False
    return _flag(repo.config, STORE_MARK)


def open_repo(path: Path) -> pygit2.Repository:
    try:
        repo = pygit2.Repository(str(path))
    except (pygit2.GitError, KeyError) as exc:
        reason = str(exc)
        try:
            reftable = "reftable" in gitconfig.text(path)
        except OSError:
            reftable = False
        if reftable:
            reason = (
                "it uses git's reftable ref format, which libgit2 cannot read; "
                "create the store with `jp init` (files ref format)"
            )
        raise StoreError(str(path), f"not a usable git repository: {reason}") from None
    try:
        if repo.config["extensions.refStorage"] == "reftable":
            raise StoreError(str(path), "reftable ref format is not supported; use `jp init`")
    except KeyError:
        pass
    return repo


def machine_id(repo: pygit2.Repository, clock: Clock = SYSTEM) -> str:
    try:
        return str(repo.config["jp.machine"])
    except KeyError:
        value = clock.token(MACHINE_BYTES)
        try:
            repo.config["jp.machine"] = value
        except pygit2.GitError:
            pass
        return value
