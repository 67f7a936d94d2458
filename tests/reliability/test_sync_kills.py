"""`jp` killed at each rename and unlink it makes itself during a journaled push and
a first pull by clone, each followed by the same command, which must succeed and
leave what an unkilled run leaves (issue 47: a kill just before a pull unlinked
``refs/jp-remotes/<remote>/jp/incoming.lock`` stopped every later sync).

The kills are real: ``strace`` injects SIGKILL at the k-th call of one system
call on one path (``-P``), found by two traced runs of the same command from the
same state (a path with a random part, a temporary file's, is not aimed at).
Aimed at: refs, their logs, ``packed-refs`` and jp's own sync state.  Only
jp's own process is traced: the git processes it starts finish on their
own, as they would after a kill of jp alone.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.sync_machine import JP, Machine, bulk_conversations, remote_refs

CALLS = ("rename", "renameat", "renameat2", "unlink", "unlinkat")
# refs, their logs, packed-refs and jp's own state (not objects/: the packs a pull
# moves in are the object writer's, tested with it; nor the cache, SQLite's)
AIMED = ("refs/", "logs/", "packed-refs", "jp/journal/", "jp/ops/", "jp/quarantine/")
_LINE = re.compile(r'^(\w+)\((?:[^"]*)"([^"]+)"(?:, (?:[^"]*)"([^"]+)")?.*\) = 0$')

pytestmark = [
    pytest.mark.skipif(shutil.which("strace") is None, reason="no strace here"),
    pytest.mark.slow,
]


def _strace(machine: Machine, out: Path, args: tuple[str, ...], *extra: str) -> int:
    proc = subprocess.run(
        ["strace", "-qq", "-o", str(out), *extra, str(JP), *args],
        env=machine.env,
        cwd=machine.root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode


def _points(trace: Path, store: Path) -> list[tuple[str, str, int]]:
    """Each rename (by its target) and unlink under the store that succeeded, as
    (call, path, its count of that call on that path)."""
    seen: Counter[tuple[str, str]] = Counter()
    out = []
    for line in trace.read_text().splitlines():
        found = _LINE.match(line)
        if found is None or found[1] not in CALLS:
            continue
        path = found[3] if found[1].startswith("rename") and found[3] else found[2]
        if not path.startswith(tuple(f"{store}/{where}" for where in AIMED)):
            continue
        seen[(found[1], path)] += 1
        out.append((found[1], path, seen[(found[1], path)]))
    return out


def _every_kill(
    template: Callable[[Path], Machine], tmp: Path, args: tuple[str, ...],
    check: Callable[[Machine], None],
) -> int:  # fmt: skip
    """Kill ``jp args`` at each point in turn, each in a fresh copy of the template,
    then run it again: it succeeds and ``check`` holds.  Returns the points killed at."""
    runs = []
    for n in range(2):
        machine = template(tmp / f"dry{n}")
        trace = tmp / f"dry{n}.trace"
        probe = _strace(machine, trace, args, "-e", f"trace={','.join(CALLS)}")
        if probe != 0:
            pytest.skip("strace cannot trace here (no ptrace)")
        runs.append(
            [(c, p.replace(str(machine.store), "{store}"), k) for c, p, k in
             _points(trace, machine.store)]
        )  # fmt: skip
    points = [p for p in runs[0] if p in set(runs[1])]
    assert len(points) >= 3, runs[0]
    killed = 0
    for i, (call, path, k) in enumerate(points):
        machine = template(tmp / f"kill{i}")
        where = path.replace("{store}", str(machine.store))
        code = _strace(
            machine, tmp / f"kill{i}.trace", args,
            "-P", where, "-e", f"trace={call}", "-e", f"inject={call}:signal=KILL:when={k}",
        )  # fmt: skip
        killed += code in (-9, 137)
        again = machine.run(*args)
        assert again.returncode == 0, f"killed at {call} {path} #{k}: {again.stderr}"
        check(machine)
    return killed


@pytest.fixture(scope="module")
def pushed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Machine, Path]:
    """A machine whose conversation has events its remote lacks, the remote's journal
    already there (the push is a journaled one), and the remote."""
    base = tmp_path_factory.mktemp("pushed")
    remote = base / "remote.git"
    subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
    laptop = Machine(base / "laptop", remote)
    laptop.new("first")
    laptop.ok("push")
    laptop.ok("q", "second")
    return laptop, remote


def test_a_journaled_push_killed_at_each_rename_and_unlink_is_done_by_the_next(
    pushed: tuple[Machine, Path], tmp_path: Path
) -> None:
    laptop, remote = pushed

    def template(root: Path) -> Machine:
        there = root / "remote.git"
        shutil.copytree(remote, there)
        return laptop.copy(root / "m", there)

    def check(machine: Machine) -> None:
        there = machine.git("remote", "get-url", "origin").strip()
        theirs = subprocess.run(
            ["git", "--git-dir", there, "for-each-ref", "--format=%(refname) %(objectname)",
             "refs/conversations"], capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        assert dict(line.split() for line in theirs.splitlines()) == {
            k: v for k, v in machine.refs().items() if k.startswith("refs/conversations/")
        }
        assert "refs/jp/journal" in remote_refs(Path(there))

    assert _every_kill(template, tmp_path, ("push",), check) >= 3


@pytest.fixture(scope="module")
def cloned(tmp_path_factory: pytest.TempPathFactory) -> tuple[Machine, Path, dict[str, str]]:
    """A remote of 100 conversations (a first pull of it clones) and a machine that
    has never pulled it."""
    base = tmp_path_factory.mktemp("cloned")
    remote = base / "remote.git"
    subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
    source = Machine(base / "source", remote)
    bulk_conversations(source.store, 100, events=2)
    source.ok("push")
    return Machine(base / "fresh", remote), remote, source.refs()


def test_a_first_pull_by_clone_killed_at_each_rename_and_unlink_is_done_by_the_next(
    cloned: tuple[Machine, Path, dict[str, str]], tmp_path: Path
) -> None:
    fresh, remote, expected = cloned
    conversations = {k: v for k, v in expected.items() if k.startswith("refs/conversations/")}

    def template(root: Path) -> Machine:
        return fresh.copy(root / "m", remote)  # the pull only reads the remote

    def check(machine: Machine) -> None:
        mine = machine.refs()
        assert {k: v for k, v in mine.items() if k.startswith("refs/conversations/")} == (
            conversations
        )

    assert _every_kill(template, tmp_path, ("pull",), check) >= 3
