"""Integrating notes refs: the union merge over flat (older jp) and fan-out trees."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from gitstore.fs.place import Place
from gitstore.git import refs
from gitstore.store import notes
from gitstore.store.core import Store
from gitstore.store.repo import init_bare
from gitstore.sync import notes as notesync
from tests.unit.gitstore.builders import git, signature

REMOTE = "refs/jp-remotes/origin/notes/meta"


@pytest.fixture
def store(tmp_path: Path) -> Store:
    init_bare(tmp_path / "s.git")
    return Store(tmp_path / "s.git")


def line(key: str, value: object, stamp: int, machine: str) -> str:
    return notes.meta_line(key, value, stamp, machine) + "\n"


def test_a_flat_remote_and_a_fanned_out_local_merge_by_union(store: Store) -> None:
    repo, gitdir = store.repo, store.gitdir
    cids = [f"jp-c{n}" for n in range(1, 6)]
    for cid in cids:
        store.notes.set_meta(cid, {"title": f"local {cid}"}, "title")
    base = repo.lookup_reference(refs.NOTES_META).peel(pygit2.Commit)
    # the remote: older jp, a flat tree on the same base with other lines and a new note
    remote = {
        store.notes.anchor(cid): (store.notes.note(refs.NOTES_META, cid) or "")
        + line("labels", {"from": "remote"}, 10**13, "zzzz")
        for cid in cids[:3]
    }
    remote[store.notes.anchor("jp-c9")] = line("title", "remote only", 1, "zzzz")
    builder = repo.TreeBuilder()
    for target, text in remote.items():
        builder.insert(target, repo.create_blob(text.encode()), pygit2.GIT_FILEMODE_BLOB)
    repo.create_commit(REMOTE, signature(), signature(), "remote", builder.write(), [base.id])
    store.notes.set_meta("jp-c4", {"pinned_at": "2026-01-01T00:00:00.000000Z"}, "pin")

    action, dropped = notesync.integrate(
        Place.of(repo, gitdir), refs.NOTES_META, REMOTE, signature(), "merge"
    )
    assert action == notesync.NotesAction.MERGED and dropped == []
    for cid in cids[:3]:
        assert store.notes.meta(cid) == {"title": f"local {cid}", "labels": {"from": "remote"}}
    assert store.notes.meta("jp-c4")["pinned_at"] == "2026-01-01T00:00:00.000000Z"
    assert store.notes.meta("jp-c9") == {"title": "remote only"}
    paths = git(gitdir, "ls-tree", "-r", "--name-only", refs.NOTES_META).split()
    assert sorted(p.replace("/", "") for p in paths) == sorted(
        store.notes.anchor(c) for c in [*cids, "jp-c9"]
    ), "every note once"
    assert all(len(p.split("/")[0]) == 2 for p in paths), "the merge is written fanned out"
    shown = git(gitdir, "notes", "--ref=meta", "show", store.notes.anchor("jp-c9"))
    assert shown == remote[store.notes.anchor("jp-c9")]
    assert len(git(gitdir, "notes", "--ref=meta", "list").splitlines()) == len(cids) + 1
    # the next local write stays small: one subtree and the root
    store.notes.set_meta("jp-c9", {"title": "retitled"}, "title")
    assert store.notes.meta("jp-c9")["title"] == "retitled"
    assert len(git(gitdir, "ls-tree", "-r", "--name-only", refs.NOTES_META).split()) == 6
