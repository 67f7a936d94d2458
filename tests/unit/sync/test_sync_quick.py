"""``gitstore.sync.pull_quick.nothing_to_pull`` and ``porcelain.early.pull.parse``: the files
path of a no-op pull says yes only when it is sure, on real stores and a real bare
remote (tests/e2e/test_sync_noop.py runs it through `jp`)."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from gitstore.sync import journalstate
from gitstore.sync.pull_quick import nothing_to_pull
from porcelain.early.pull import parse
from tests.support.noop_pull import synced
from tests.support.sync_machine import Machine


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Machine, Path]:
    root = tmp_path_factory.mktemp("quick")
    _, desktop, _ = synced(root)
    return desktop, root / "remote.git"


@pytest.fixture
def desk(built: tuple[Machine, Path], tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the synced store and of its remote: (store, remote)."""
    machine, remote = built
    there = tmp_path / "remote.git"
    shutil.copytree(remote, there, symlinks=True)
    other = machine.copy(tmp_path / "desktop", there)
    return other.store, there


def _ask(store: Path, name: str | None = None) -> str | None:
    found = nothing_to_pull(store, name, [], os.geteuid())
    return None if found is None else found[0]


def _pulls(store: Path) -> int:
    return int(json.loads((store / "jp" / "journal" / "origin.json").read_text())["pulls"])


def test_it_answers_and_counts_when_nothing_moved(desk: tuple[Path, Path]) -> None:
    store, _ = desk
    assert _ask(store) == "origin" and _pulls(store) == 1
    assert _ask(store, "origin") == "origin" and _pulls(store) == 2
    assert _ask(store, "elsewhere") is None, "no such remote"


def test_a_running_sync_or_unfinished_repair_takes_the_whole_pull(
    desk: tuple[Path, Path],
) -> None:
    store, _ = desk
    fd = os.open(store / "jp" / "locks" / "sync.origin.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert _ask(store) is None, "a pull or push holds the lock"
    finally:
        os.close(fd)
    assert _ask(store) == "origin"
    (store / "jp" / "ops" / "left.json").write_text("{}")
    assert _ask(store) is None, "a killed command's ref journal waits for the repair"
    (store / "jp" / "ops" / "left.json").unlink()
    (store / "jp" / "quarantine").mkdir(exist_ok=True)
    (store / "jp" / "quarantine" / "origin.json").write_text("{}")
    assert _ask(store) is None, "refused refs are looked at again by the whole pull"


def test_a_config_git_could_read_otherwise_takes_the_whole_pull(
    desk: tuple[Path, Path], tmp_path: Path
) -> None:
    store, remote = desk
    config = store / "config"
    plain = config.read_text()
    for odd in (
        "[include]\n\tpath = other\n",
        '[remote "origin"]\n\tpushurl = /elsewhere\n',
        '[remote "origin"]\n\tuploadpack = /bin/evil\n',
        '[core]\n\tnote = "quoted"\n',
    ):
        config.write_text(plain + odd)
        assert _ask(store) is None, odd
    second = '[remote "second"]\n\turl = /x\n\tpush = refs/conversations/*:refs/conversations/*\n'
    config.write_text(plain + second)
    assert _ask(store) == "origin", "two of jp's remotes: origin is the default, as in the pull"
    config.write_text(plain.replace('"origin"', '"first"') + second)
    assert _ask(store) is None, "two of jp's remotes, neither origin: no default"
    config.write_text(plain)
    rewrite = tmp_path / "gitconfig"
    rewrite.write_text(f'[url "/elsewhere"]\n\tinsteadOf = {remote}\n')
    assert nothing_to_pull(store, None, [rewrite], os.geteuid()) is None, "a URL rewrite elsewhere"
    with (remote / "config").open("a") as f:
        f.write("[uploadpack]\n\thideRefs = refs/jp\n")
    assert _ask(store) is None, "the remote may hide its journal from git"


def test_another_users_remote_or_store_takes_the_whole_pull(desk: tuple[Path, Path]) -> None:
    store, _ = desk
    assert nothing_to_pull(store, None, [], os.geteuid() + 1) is None  # git refuses it


def test_only_the_plainest_command_line_qualifies() -> None:
    assert parse(["pull"]) == {"fmt": "text"}
    assert parse(["--store", "/s", "pull", "origin", "-v"]) == {
        "fmt": "text",
        "store": "/s",
        "remote": "origin",
    }
    assert parse(["pull", "-F", "json"]) == {"fmt": "json"}
    assert parse(["--format=json", "pull"]) == {"fmt": "json"}
    for other in (
        ["pull", "--full"],
        ["--cfg", "a=b", "pull"],
        ["-c", "x.toml", "pull"],
        ["pull", "a", "b"],
        ["push"],
        ["pull", "-F", "yaml"],
        ["-y", "pull"],
        ["pull", "--help"],
        ["conversation", "pull"],
    ):
        assert parse(other) is None, other


def test_the_remotes_packed_journal_is_read_only_from_a_plain_line(
    desk: tuple[Path, Path],
) -> None:
    store, remote = desk
    subprocess.run(["git", "--git-dir", str(remote), "pack-refs", "--all"], check=True)
    assert not (remote / "refs" / "jp" / "journal").exists()
    assert _ask(store) == "origin", "packed: found by its line"
    packed = remote / "packed-refs"
    lines = packed.read_text()
    oid = next(ln.split()[0] for ln in lines.splitlines() if ln.endswith(" refs/jp/journal"))
    for odd in (
        f"{oid} refs/x refs/jp/journal\n",
        f"{oid} refs/jp/journal\n",
        "x refs/jp/journalz\n",
    ):
        packed.write_text(lines + odd)
        assert _ask(store) is None, odd


def test_one_rule_says_when_there_is_nothing_to_pull(
    desk: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``journalstate`` holds the rule the whole pull's fetch applies to the journal it
    fetched, and the files path asks it too: told that the journal moved, it doubts."""
    store, _ = desk
    tip, other = "a" * 40, "b" * 40
    assert journalstate.nothing_to_pull(tip, tip, recheck=False)
    assert not journalstate.nothing_to_pull(tip, other, recheck=False), "the journal moved"
    assert not journalstate.nothing_to_pull(tip, tip, recheck=True), "a refused ref waits"
    assert not journalstate.nothing_to_pull(None, None, recheck=False), "no copy: reconcile"
    state = store / "jp" / "journal" / "origin.json"
    for pulls, found, due in ((49, 1000, None), (50, 1000, "due"), (0, 999, "small")):
        state.write_text(json.dumps({"pulls": pulls, "refs": found}))
        why = journalstate.reconcile_due(store, "origin")
        assert (why is None) if due is None else (due in (why or "")), (pulls, found, why)
    state.write_text(json.dumps({"pulls": 0, "refs": 5000}))
    assert _ask(store) == "origin"
    monkeypatch.setattr(journalstate, "nothing_to_pull", lambda *_a, **_k: False)
    assert _ask(store) is None
