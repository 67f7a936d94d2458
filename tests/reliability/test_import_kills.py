"""`jp conversation import` of Claude Code sessions killed at each rename and unlink
it makes under the store, each followed by the same command, which must succeed and
leave what an unkilled import leaves: the same conversations at the same commits,
and the same rows in `ls` (issue 47: a kill at every rename and unlink of a session
import, as the sync's kills in test_sync_kills.py).

The kills are real, by ``strace``, as there: SIGKILL injected at the k-th call of
one system call on one path, found by two traced runs from the same state.  Only
jp's own process is traced (its refs are moved by the ``git update-ref`` it starts,
which finishes on its own after a kill of jp, as it would).  Aimed at what jp
moves itself: the packs it moves into ``objects/pack`` and the ``.keep`` it drops,
the operation log, and the import's own record of what it read
(``jp/session-import``); a path with a random part is not aimed at.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.test_sync_kills import CALLS, _strace
from tests.support.jpfolders import small_jp_folders
from tests.support.sync_machine import Machine

AIMED = ("refs/", "logs/", "packed-refs", "objects/pack/", "jp/oplog", "jp/session-import/")
_CALL = re.compile(r"^(?:\d+ +)?(\w+)\(")
_LINE = re.compile(r'^(?:\d+ +)?(\w+)\((?:[^"]*)"([^"]+)"(?:, (?:[^"]*)"([^"]+)")?.*\) = 0$')

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "sessions" / "claude-code"

pytestmark = [
    pytest.mark.skipif(shutil.which("strace") is None, reason="no strace here"),
    pytest.mark.slow,
]


def _points(trace: Path, store: Path) -> list[tuple[str, str, int]]:
    """Each rename (by its target) and unlink under ``AIMED`` that succeeded, as
    (call, path, which call of that kind it was in the whole run): the import's
    targets do not exist before it, so a kill is aimed by that count, not by path."""
    seen: Counter[str] = Counter()
    out = []
    for line in trace.read_text().splitlines():
        call = _CALL.match(line)
        if call is None or call[1] not in CALLS:
            continue
        seen[call[1]] += 1
        found = _LINE.match(line)
        if found is None:
            continue
        path = found[3] if found[1].startswith("rename") and found[3] else found[2]
        if path.startswith(tuple(f"{store}/{where}" for where in AIMED)):
            out.append((found[1], path, seen[call[1]]))
    return out


def _every_kill(
    template: Callable[[Path], Machine], tmp: Path, args: tuple[str, ...],
    check: Callable[[Machine], None], locks: bool = False,
) -> int:  # fmt: skip
    """Kill ``jp args`` at each point in turn, each in a fresh copy of the template,
    then run it again: it succeeds and ``check`` holds.  Returns the points killed at.
    ``locks``: a kill between a ref's lock file and its rename leaves the lock, as a
    killed git does; the next command names it and ``jp doctor --fix``, which
    clears it once it is stale (10 s: found a minute later here), and then the
    command succeeds."""
    runs = []
    for n in range(2):
        machine = template(tmp / f"dry{n}")
        trace = tmp / f"dry{n}.trace"
        if _strace(machine, trace, args, "-e", f"trace={','.join(CALLS)}") != 0:
            pytest.skip("strace cannot trace here (no ptrace)")
        runs.append(
            [(c, p.replace(str(machine.store), "{store}"), k) for c, p, k in
             _points(trace, machine.store)]
        )  # fmt: skip
    points = [p for p in runs[0] if p in set(runs[1])]  # the same call, path and count
    assert len(points) >= 3, runs[0]
    killed = 0
    for i, (call, path, k) in enumerate(points):
        machine = template(tmp / f"kill{i}")
        code = _strace(
            machine, tmp / f"kill{i}.trace", args,
            "-e", f"trace={call}", "-e", f"inject={call}:signal=KILL:when={k}",
        )  # fmt: skip
        killed += code in (-9, 137)
        again = machine.run(*args)
        if locks and again.returncode != 0 and "is locked" in again.stderr:
            assert "`jp doctor --fix` removes" in again.stderr, again.stderr
            for lock in machine.store.rglob("*.lock"):  # found a minute later: stale
                os.utime(lock, (time.time() - 60, time.time() - 60))
            machine.ok("doctor", "--fix")
            again = machine.run(*args)
        assert again.returncode == 0, f"killed at {call} {path} #{k}: {again.stderr}"
        check(machine)
    return killed


def _rows(machine: Machine) -> list[tuple[Any, ...]]:
    rows = machine.json("conversation", "ls", "--all")
    return sorted(
        (r["id"], r["title"], r["turns"], r["events"], str(r.get("imported_from"))) for r in rows
    )


def _conversations(machine: Machine) -> dict[str, str]:
    return {k: v for k, v in machine.refs().items() if k.startswith("refs/conversations/")}


def _machine(tmp_path: Path) -> tuple[Machine, Path, Path]:
    """A machine with no conversation, its bare remote, and a copy of the fixture's
    sessions at one path for every copy of the machine (the import records it)."""
    base = tmp_path / "base"
    remote = base / "remote.git"
    base.mkdir()
    subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
    sessions = base / "projects"
    shutil.copytree(FIXTURE, sessions)
    return Machine(base / "machine", remote), remote, sessions


def test_a_session_import_killed_at_each_rename_and_unlink_is_done_by_the_next(
    tmp_path: Path,
) -> None:
    fresh, remote, sessions = _machine(tmp_path)
    args = ("conversation", "import", "--from", "claude-code", str(sessions))
    clean = fresh.copy(tmp_path / "clean", remote)
    clean.ok(*args)
    expected, rows = _conversations(clean), _rows(clean)
    assert len(expected) >= 2  # the session and its subagent

    def template(root: Path) -> Machine:
        return fresh.copy(root / "m", remote)

    def check(machine: Machine) -> None:
        assert _conversations(machine) == expected
        assert _rows(machine) == rows
        again = machine.run(*args)  # a third run finds nothing new and changes nothing
        assert again.returncode == 0 and _conversations(machine) == expected, again.stderr

    assert _every_kill(template, tmp_path, args, check) >= 3


def _grow_and_contradict(sessions: Path) -> None:
    """The session's file changed in its middle (a fork) and its subagent's file
    grown by a record (an append): one import that both forks and appends."""
    main = next(sessions.glob("*/*.jsonl"))
    text = main.read_text(encoding="utf-8")
    swapped = text.replace("There are two files", "There are six files", 1)
    assert swapped != text
    main.write_text(swapped, encoding="utf-8")
    agent = next(sessions.glob("*/*/subagents/agent-*.jsonl"))
    last = agent.read_text(encoding="utf-8").splitlines()[-1]
    grown = last.replace('"uuid":"s-2"', '"uuid":"s-3"').replace(
        '"parentUuid":"s-1"', '"parentUuid":"s-2"'
    )
    grown = grown.replace("There are no TODO comments.", "One TODO, in main.rs.")
    assert grown != last
    with open(agent, "a", encoding="utf-8") as out:
        out.write(grown + "\n")


def test_an_import_that_appends_and_forks_killed_at_each_rename_and_unlink_is_done_by_the_next(
    tmp_path: Path,
) -> None:
    imported, remote, sessions = _machine(tmp_path)
    args = ("conversation", "import", "--from", "claude-code", str(sessions))
    imported.ok(*args)
    _grow_and_contradict(sessions)
    clean = imported.copy(tmp_path / "clean", remote)
    said = clean.ok(*args)
    assert "1 updated" in said and "1 changed (kept as forks)" in said, said
    expected, rows = _conversations(clean), _rows(clean)
    assert len(expected) == 3  # the session, its fork and the grown subagent

    def template(root: Path) -> Machine:
        return imported.copy(root / "m", remote)

    def check(machine: Machine) -> None:
        assert _conversations(machine) == expected  # a fork's id comes from its records
        assert _rows(machine) == rows
        again = machine.run(*args)  # a third run finds nothing new and changes nothing
        assert again.returncode == 0 and _conversations(machine) == expected, again.stderr

    assert _every_kill(template, tmp_path, args, check, locks=True) >= 3


def _titled_folders(root: Path, count: int) -> list[Path]:
    """``count`` small JP folders with a title each: past ``notes.PACK_FROM`` (32),
    so the import writes its titles' notes commit as one pack behind a ``.keep``."""
    return small_jp_folders(root, count, "titled")


def test_an_import_whose_titles_go_in_one_pack_killed_at_each_rename_and_unlink_is_done_by_the_next(
    tmp_path: Path,
) -> None:
    fresh, remote, _ = _machine(tmp_path)
    folders = _titled_folders(tmp_path / "folders", 40)
    args = ("conversation", "import", *map(str, folders))
    clean = fresh.copy(tmp_path / "clean", remote)
    clean.ok(*args)
    expected, rows = _conversations(clean), _rows(clean)
    assert len(expected) == 40 and all(r[1].startswith("titled ") for r in rows)

    def template(root: Path) -> Machine:
        return fresh.copy(root / "m", remote)

    def check(machine: Machine) -> None:
        assert _conversations(machine) == expected
        assert _rows(machine) == rows  # every title, once
        # a killed writer's .keep is swept by the next command: no pack pinned for ever
        assert not list((machine.store / "objects" / "pack").glob("*.keep"))
        machine.git("fsck", "--strict", "--no-progress")

    assert _every_kill(template, tmp_path, args, check, locks=True) >= 3
