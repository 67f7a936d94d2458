"""Remote settings: jp's refspecs name jp's refs only, removal keeps local refs
and a project's own settings, and config changes are made in one step."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest

from gitstore.errors import RemoteSetupError, StoreError
from gitstore.git import config as configfile
from gitstore.git import refs
from gitstore.sync import remotes
from tests.support.background import repeating


@pytest.fixture
def repo(tmp_path: Path) -> pygit2.Repository:
    return pygit2.init_repository(str(tmp_path / "store.git"), bare=True)


def commit(repo: pygit2.Repository, message: str = "m") -> pygit2.Oid:
    sig = pygit2.Signature("t", "t@example.invalid")
    return repo.create_commit(None, sig, sig, message, repo.TreeBuilder().write(), [])


@pytest.mark.parametrize("notes", [refs.STANDALONE, refs.PROJECT])
def test_refspecs_name_jps_refs_only(notes: refs.NotesRefs) -> None:
    for spec in remotes.fetch_refspecs("o") + remotes.push_refspecs(notes):
        src, dst = spec.lstrip("+").split(":")
        assert src.startswith(("refs/conversations/", "refs/archive/", "refs/notes/"))
        assert not src.startswith("refs/notes/*") and not dst.startswith("refs/notes/*")
        if src.startswith("refs/notes/"):
            assert src.removesuffix("*") in (
                notes.meta,
                notes.source,
                "refs/notes/meta",
                "refs/notes/source",
            )
    assert "refs/notes/jp/meta*:refs/notes/meta*" in remotes.push_refspecs(refs.PROJECT)


def test_no_refspec_of_jp_puts_a_local_ref_where_a_conversation_is(
    repo: pygit2.Repository,
) -> None:
    """What libgit2's remote delete would delete: refs matching a refspec's
    destination.  jp's fetch refspecs point only into refs/jp-remotes/."""
    for spec in remotes.fetch_refspecs("o"):
        assert spec.split(":")[1].startswith("refs/jp-remotes/o/")


def test_remove_deletes_no_local_ref(repo: pygit2.Repository) -> None:
    remotes.add(repo, "origin", "/srv/x.git")
    tip = commit(repo)
    local = [
        "refs/conversations/jp-c1",
        "refs/archive/conversations/jp-c2",
        "refs/notes/meta",
        "refs/notes/source",
        "refs/notes/commits",
    ]
    for name in local:
        repo.create_reference_direct(name, tip, False)
    for rest in ("conversations/jp-c1", "notes/meta"):
        repo.create_reference_direct(f"refs/jp-remotes/origin/{rest}", tip, False)
    assert remotes.remove(repo, "origin") == "removed"
    assert sorted(repo.listall_references()) == sorted(local)
    with pytest.raises(Exception, match="no such remote"):
        remotes.remove(repo, "origin")


def test_copies_left_by_plain_git_are_removed(repo: pygit2.Repository) -> None:
    repo.create_reference_direct("refs/jp-remotes/gone/conversations/jp-c1", commit(repo), False)
    assert remotes.remove(repo, "gone") == "copies-removed"
    assert repo.listall_references() == []


def test_an_earlier_jps_refspecs_are_replaced_and_recognised(repo: pygit2.Repository) -> None:
    repo.remotes.create(
        "origin", "/srv/x.git", "+refs/conversations/*:refs/jp-remotes/origin/conversations/*"
    )
    for spec in (
        "+refs/archive/*:refs/jp-remotes/origin/archive/*",
        "+refs/notes/*:refs/jp-remotes/origin/notes/*",
    ):
        repo.remotes.add_fetch("origin", spec)
    for spec in (
        "refs/conversations/*:refs/conversations/*",
        "refs/archive/*:refs/archive/*",
        "refs/notes/*:refs/notes/*",
    ):
        repo.remotes.add_push("origin", spec)
    info = remotes.find(repo, "origin")
    assert info is not None and not info.foreign, "an earlier jp's remote is jp's"
    assert remotes.add(repo, "origin", "/srv/x.git") == "updated"
    info = remotes.find(repo, "origin")
    assert info is not None and info.configured
    assert set(info.fetch) == set(remotes.fetch_refspecs("origin"))
    assert set(info.push) == set(remotes.PUSH_REFSPECS)


def test_the_default_remote_is_never_one_with_settings_of_its_own(
    repo: pygit2.Repository,
) -> None:
    repo.remotes.create("origin", "/srv/code.git")
    remotes.add(repo, "origin", "/srv/code.git")
    assert remotes.default(repo) is None
    remotes.add(repo, "backup", "/srv/b.git")
    assert remotes.default(repo) == "backup"
    remotes.add(repo, "more", "/srv/m.git")
    assert remotes.default(repo) is None
    remotes.add(repo, "jp", "/srv/j.git")
    remotes.remove(repo, "origin")
    assert remotes.default(repo) is None, "three remotes of jp's, none called origin"


def test_a_config_edit_is_one_step(repo: pygit2.Repository) -> None:
    gitdir = Path(repo.path)
    config = gitdir / "config"
    before = config.read_bytes()
    seen: list[bytes] = []

    def change(cfg: pygit2.Config) -> None:
        cfg["jp.first"] = "1"
        seen.append(config.read_bytes())  # the real file does not change meanwhile
        cfg["jp.second"] = "2"

    assert configfile.edit(gitdir, change)
    assert seen == [before]
    text = config.read_text()
    assert "first = 1" in text and "second = 2" in text
    assert not configfile.edit(gitdir, lambda cfg: None), "no change, no write"
    assert not (gitdir / "config.lock").exists()
    assert [p.name for p in (gitdir / "jp").iterdir()] == [], "no copy left behind"


def test_a_config_edit_refuses_a_held_lock_and_redoes_a_change_made_meanwhile(
    repo: pygit2.Repository,
) -> None:
    gitdir = Path(repo.path)
    (gitdir / "config.lock").write_text("")
    with pytest.raises(StoreError, match="config.lock exists"):
        configfile.edit(gitdir, lambda cfg: cfg.__setitem__("jp.x", "1"))
    (gitdir / "config.lock").unlink()
    calls = 0

    def racing(cfg: pygit2.Config) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:  # another writer changes the file while jp works on its copy
            repo.config["other.writer"] = "kept"
        cfg["jp.x"] = "1"

    assert configfile.edit(gitdir, racing) and calls == 2
    text = (gitdir / "config").read_text()
    assert "writer = kept" in text and "x = 1" in text


def test_exact_matches_only_the_values() -> None:
    import re

    pattern = configfile.exact(["+refs/notes/meta*:refs/x/notes/meta*", "a.b"])
    assert re.fullmatch(pattern, "+refs/notes/meta*:refs/x/notes/meta*")
    assert re.fullmatch(pattern, "a.b") and not re.fullmatch(pattern, "axb")
    assert not re.fullmatch(pattern, "+refs/notes/meta*:refs/x/notes/meta*x")


def test_a_remote_with_only_a_url_keeps_it(repo: pygit2.Repository) -> None:
    """No refspec of its own, but jp did not make it: it has no push refspecs of jp's."""
    repo.config["remote.code.url"] = "/srv/code.git"
    assert remotes.add(repo, "code", "/srv/code.git") == "configured"
    info = remotes.find(repo, "code")
    assert info is not None and info.foreign and info.configured
    assert remotes.remove(repo, "code") == "unconfigured"
    info = remotes.find(repo, "code")
    assert info is not None and info.url == "/srv/code.git" and info.fetch == ()


@pytest.mark.parametrize("key", ["prune", "pushurl", "mirror", "tagOpt"])
def test_settings_of_its_own_make_a_remote_foreign(repo: pygit2.Repository, key: str) -> None:
    remotes.add(repo, "backup", "/srv/b.git")
    repo.config[f"remote.backup.{key}"] = "--no-tags" if key == "tagOpt" else "true"
    info = remotes.find(repo, "backup")
    assert info is not None and info.foreign and info.settings == (key.lower(),)
    assert remotes.default(repo) is None
    assert remotes.remove(repo, "backup") == "unconfigured"
    kept = remotes.find(repo, "backup")
    assert kept is not None and kept.url == "/srv/b.git" and not kept.fetch and not kept.push
    assert repo.config[f"remote.backup.{key}"]


def test_adding_a_remote_again_by_a_rewritten_url_changes_nothing(
    repo: pygit2.Repository,
) -> None:
    """git rewrites ``short:`` by ``url.<base>.insteadOf`` when it uses a URL, not in
    the config: the same ``remote add`` run again is compared with the URL as the
    config holds it, so it does nothing rather than name a URL nobody wrote."""
    repo.config["url./srv/.insteadOf"] = "short:"
    assert remotes.add(repo, "origin", "short:x.git") == "created"
    assert remotes.add(repo, "origin", "short:x.git") == "unchanged"
    with pytest.raises(RemoteSetupError, match="already exists with URL short:x.git"):
        remotes.add(repo, "origin", "short:y.git")
    assert repo.config["remote.origin.url"] == "short:x.git"


def _advance_beside_packing(repo: pygit2.Repository, drop: Callable[[int], None]) -> None:
    """300 rounds, beside `git pack-refs --all` run over and over: a local ref is
    made and advanced (loose, so each packing takes it), copies of ``origin`` are
    written, then ``drop(n)`` deletes them.  Each round every local ref reads at
    its new value and no copy is left.  libgit2's deletion rewrote ``packed-refs``
    from what it read before taking the file's lock: a packing in between lost
    the advance (the ref read at its old value, or was gone)."""
    path = Path(repo.path)
    old, new = commit(repo, "old"), commit(repo, "new")
    with repeating(["git", "--git-dir", str(path), "pack-refs", "--all"]) as rounds:
        for n in range(300):
            kept = f"refs/t/kept{n}"
            assert remotes.set_copy(repo, kept, str(old))  # a write that waits out git's locks
            for i in range(3):
                assert remotes.set_copy(repo, f"refs/jp-remotes/origin/conversations/c{n}-{i}", str(old))
            assert remotes.set_copy(repo, kept, str(new))
            drop(n)
            listed = subprocess.run(
                ["git", "--git-dir", str(path), "for-each-ref", "--format=%(refname) %(objectname)"],
                capture_output=True, text=True, check=True,
            ).stdout  # fmt: skip
            want = "".join(f"{name} {new}\n" for name in sorted(f"refs/t/kept{k}" for k in range(n + 1)))
            assert listed == want, f"round {n}"
    assert rounds[0] > 0


def test_removing_copies_beside_git_packing_refs_loses_no_local_move(repo: pygit2.Repository) -> None:
    _advance_beside_packing(repo, lambda n: remotes.drop_copies(repo, "origin"))


def test_deleting_a_copy_beside_git_packing_refs_loses_no_local_move(repo: pygit2.Repository) -> None:
    def drop(n: int) -> None:
        for i in range(3):
            assert remotes.set_copy(repo, f"refs/jp-remotes/origin/conversations/c{n}-{i}", None)

    _advance_beside_packing(repo, drop)
