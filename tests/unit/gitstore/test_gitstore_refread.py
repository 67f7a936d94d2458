"""Refs read as files agree with libgit2, loose, packed, symbolic and deleted."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pygit2
import pytest

from gitstore.git import refs
from gitstore.git.config import config_flag
from gitstore.git.refs.files import (
    Held,
    list_refs,
    matching_refs,
    packed_ref,
    packed_refs,
    plain_gitdir,
    read_ref,
    symbolic_target,
)
from gitstore.store.core import Store
from gitstore.store.repo import is_marked
from tests.unit.gitstore.builders import git, start, turn

PREFIXES = (refs.LIVE_PREFIX, refs.ARCHIVE_PREFIX)


def libgit2_refs(path: Path) -> dict[str, str]:
    repo = pygit2.Repository(str(path))
    return {
        r.name: str(r.target)
        for r in repo.references.iterator()
        if r.name.startswith(PREFIXES) and isinstance(r.target, pygit2.Oid)
    }


def make(store: Store, n: int, first: int = 0) -> list[str]:
    made = []
    for k in range(first, first + n):
        cid = f"jp-c1700000000{k}"
        store.log.create(cid, [start(cid), *turn(k)], None, "test")
        made.append(cid)
    return made


def test_loose_and_packed_refs_read_as_libgit2_reads_them(store: Store, path: Path) -> None:
    cids = make(store, 4)
    store.refs.archive(cids[1], "test")
    git(path, "pack-refs", "--all")
    assert packed_refs(path), "git packed them"
    # moved after packing: the loose file wins over the packed line
    tip = store.refs.require(cids[0]).tip
    store.log.append(cids[0], turn(9, 30), tip, "test")
    store.refs.delete(cids[2], "test")  # gone from packed-refs too
    cid = make(store, 1, first=5)[0]  # one more, loose only
    (path / refs.live(cids[3])).with_suffix(".lock").write_text("0" * 40 + "\n")
    assert list_refs(path, PREFIXES) == libgit2_refs(path)
    for name, oid in libgit2_refs(path).items():
        assert read_ref(path, name) == oid
    assert read_ref(path, refs.live(cids[2])) is None
    assert read_ref(path, refs.live(cid)) == store.refs.require(cid).tip
    for name, oid in packed_refs(path).items():  # found by bisection as in the parse
        assert packed_ref(path, name) == oid
    for missing in ("refs/conversations", refs.live(cids[0])[:-1], "refs/zzz", "HEAD", "a"):
        assert packed_ref(path, missing) is None
    held = Held(path, PREFIXES)  # one read: what is there, loose or packed, is not absent
    for name in libgit2_refs(path):
        assert not held.absent(name)
    assert held.absent(refs.live(cids[2])) and held.absent(refs.archived(cids[0]))
    assert not held.absent("refs/zzz/a"), "a folder not read is never told absent"


def test_packed_refs_are_found_sorted_or_not(path: Path) -> None:
    oids = [f"{n:040x}" for n in range(1, 400)]
    names = sorted(f"refs/conversations/jp-c1{n:010d}" for n in range(1, 400))
    lines = []
    for oid, name in zip(oids, names, strict=True):
        lines.append(f"{oid} {name}")
        if name.endswith("7"):
            lines.append("^" + oid)  # a peeled line, as for an annotated tag
    for header in (
        "# pack-refs with: peeled fully-peeled sorted \n",
        "",
        "# pack-refs with: peeled \n",
    ):
        body = lines if header.endswith("sorted \n") else lines[::-1]
        (path / "packed-refs").write_text(header + "\n".join(body))  # no final newline
        for oid, name in zip(oids, names, strict=True):
            assert packed_ref(path, name) == oid, (header, name)
        assert packed_ref(path, names[0][:-1]) is None
        assert packed_ref(path, names[-1] + "0") is None
        held = Held(path, PREFIXES)
        assert not any(held.absent(name) for name in names), header
        assert held.absent(names[0][:-1]) and held.absent(names[-1] + "0")
        assert held.absent(refs.ARCHIVE_PREFIX + names[0].rpartition("/")[2])


def test_a_folder_asked_often_is_told_from_its_names_as_bisection_tells_it(path: Path) -> None:
    names = [f"refs/conversations/jp-c1{n:010d}" for n in range(0, 120, 3)]
    lines = [f"{n + 1:040x} {name}" + ("\n^" + "f" * 40 if n % 7 == 0 else "") for n, name in
             enumerate(names)]  # fmt: skip
    (path / "packed-refs").write_text("# pack-refs with: peeled sorted \n" + "\n".join(lines))
    asked = [f"refs/conversations/jp-c1{n:010d}" for n in range(120)]
    asked += [names[0] + "0", names[-1][:-1], "refs/conversations/^" + "f" * 40]
    held = Held(path, PREFIXES)  # past BISECTED look-ups: the folder's names, taken out once
    for name in asked:
        assert held.absent(name) == (name not in names) == Held(path, PREFIXES).absent(name)


def _git_lists(path: Path, pattern: str) -> dict[str, str]:
    out = git(path, "for-each-ref", "--format=%(objectname) %(refname)", pattern)
    return dict(reversed(line.split(" ", 1)) for line in out.splitlines())


def test_patterns_match_in_packed_refs_as_git_matches_them(store: Store, path: Path) -> None:
    """A name or a glob is found by bisection in a sorted file, a folder by the parse
    of every line; either way what git's own listing finds, loose refs winning."""
    tips = [store.refs.require(c).tip for c in make(store, 3)]
    names = [f"refs/conversations/jp-c1{n:010d}" for n in range(300)]
    names += [f"refs/jp-remotes/o/conversations/jp-c1{n:010d}" for n in range(0, 300, 7)]
    names += ["refs/jp-remotes/o/jp/journal", "refs/notes/meta"]
    lines = [f"{tips[k % 3]} {name}" for k, name in enumerate(names)]  # sorted by name
    lines.insert(5, "^" + tips[1])  # a peeled line, as for an annotated tag
    patterns = [
        names[0], names[299], names[17][:-1], "refs/conversations/jp-c100000001*",
        "refs/jp-remotes/o/conversations/jp-c10000002*", "refs/jp-remotes/o/jp/journal*",
        "refs/conversations/", "refs/jp-remotes/o/", "refs/zzz*", "refs/a*", "refs/notes/meta",
    ]  # fmt: skip
    for header in (
        "# pack-refs with: peeled fully-peeled sorted \n",
        "# pack-refs with: peeled \n",
    ):
        git(path, "pack-refs", "--all")
        # names in git's order, or (not said sorted) backwards with no peeled line
        body = lines if "sorted" in header else (lines[:5] + lines[6:])[::-1]
        (path / "packed-refs").write_text(header + "\n".join(body) + "\n")
        (path / names[3]).write_text(tips[2] + "\n")  # loose: it wins over its packed line
        for pattern in patterns:
            assert matching_refs(path, [pattern]) == _git_lists(path, pattern), (header, pattern)
        both = matching_refs(path, [patterns[3], patterns[4]])
        assert both == {**_git_lists(path, patterns[3]), **_git_lists(path, patterns[4])}
        (path / names[3]).unlink()


def test_the_active_conversation_is_a_symbolic_ref(store: Store, path: Path) -> None:
    cid = make(store, 1)[0]
    store.refs.set_active(cid)
    assert symbolic_target(path, refs.ACTIVE) == refs.live(cid)
    assert read_ref(path, refs.ACTIVE) == store.refs.require(cid).tip
    assert symbolic_target(path, refs.live(cid)) is None
    store.refs.set_active(None)
    assert symbolic_target(path, refs.ACTIVE) is None


def test_only_plain_git_directories_are_read_as_files(tmp_path: Path, path: Path) -> None:
    assert plain_gitdir(path) == path
    project = tmp_path / "project"
    pygit2.init_repository(str(project))
    assert plain_gitdir(project) == project / ".git"
    git(path, "config", "extensions.refStorage", "reftable")  # what libgit2 refuses
    assert plain_gitdir(path) is None
    git(path, "config", "--unset", "extensions.refStorage")
    assert plain_gitdir(path) == path
    (path / "reftable").mkdir()
    assert plain_gitdir(path) is None
    assert plain_gitdir(tmp_path / "nothing") is None


def test_config_flags_read_as_git_reads_them(path: Path) -> None:
    assert config_flag(path, "jp", "store") is True and is_marked(path)
    for value, expected in (("false", False), ("on", True), ("0", False), ("YES", True)):
        git(path, "config", "jp.store", value)
        assert config_flag(path, "jp", "store") is expected
        assert is_marked(path) is expected
        assert git(path, "config", "--type=bool", "jp.store").strip() == str(expected).lower()
    git(path, "config", "jp.store", "maybe")
    assert config_flag(path, "jp", "store") is None  # libgit2 decides
    git(path, "config", "--unset", "jp.store")
    assert config_flag(path, "jp", "store") is False and not is_marked(path)
    git(path, "config", "jp.store", "true")
    git(path, "config", "include.path", "elsewhere")
    assert config_flag(path, "jp", "store") is None



def test_a_folder_git_prunes_under_a_pattern_read_finds_its_refs_packed(
    store: Store, path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git's pack-refs removes a folder it emptied: when that happens between the
    check that the folder is there and its listing, the refs are read packed."""
    copies = "refs/jp-remotes/origin/conversations/"  # git prunes folders below refs/*/
    for cid in make(store, 3):
        git(path, "update-ref", copies + cid, refs.live(cid))
    wanted = [copies + "jp-c1700*"]
    expected = matching_refs(path, wanted)
    assert expected is not None and len(expected) == 3
    listing = os.scandir
    pruned: list[bool] = []

    def gc_first(folder: Any) -> Any:  # git packs and prunes at the worst moment
        if not pruned:
            git(path, "pack-refs", "--all", "--prune")
            pruned.append(not Path(folder).exists())
        return listing(folder)

    monkeypatch.setattr(os, "scandir", gc_first)
    assert matching_refs(path, wanted) == expected
    assert pruned == [True]
