"""Many `jp` processes creating conversations at once: each gets its own.

Twelve processes are started together, round after round: `q --new`,
`conversation new`, `conversation fork` and `conversation import`, all in the
same tenth of a second, so most of them pick the same id first.  Creation is a
compare-and-swap against absence under the ref's lock, so the losers take the
next free id; the store is then read back with git: every command exited 0,
every id is its own, every conversation holds exactly the requests of the
command that made it, and no reflog shows a creation over an existing ref.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from gitstore import faults
from gitstore.git.refs import transaction
from gitstore.store.core import Store
from gitstore.store.repo import init_bare
from porcelain.app.lifecycle import new_conversation
from porcelain.errors import UserError
from tests.reliability.harness import ID, RUST, RUST_ID, Sandbox

ROUNDS = 5
EACH = 3  # of each of the four kinds: twelve at once
CREATIONS = ("jp conversation new", "jp conversation fork", "jp conversation import")
ZERO = "0" * 40


@pytest.fixture
def box(tmp_path: Path) -> Sandbox:
    sandbox = Sandbox(tmp_path / "box")
    sandbox.ok("init")
    sandbox.ok("conversation", "import", str(RUST))
    return sandbox


def _start(box: Sandbox, work: Path, round_no: int) -> list[tuple[str, str, subprocess.Popen[str]]]:
    """The twelve commands of one round: (kind, its mark, the process).

    They read one clock (the testing hook, started at the same moment for all),
    so each picks the id the others pick, as processes started in one tenth of
    a second do, however slowly a busy machine starts them.
    """
    env = {"JP_TEST_CLOCK": f"2026-07-0{round_no + 1}T10:00:00Z/0.1"}
    made: list[tuple[str, str, subprocess.Popen[str]]] = []
    for n in range(EACH):
        mark = f"round {round_no} writer {n}"
        folder = _folder(work / f"import-{round_no}-{n}", round_no, mark)
        made.append(("q", mark, box.popen("--format", "json", "q", "--new", mark, env=env)))
        made.append(("new", mark, box.popen("conversation", "new", "--title", mark, env=env)))
        fork_args = ("conversation", "fork", RUST_ID, "--activate", "--title", mark)
        made.append(("fork", mark, box.popen(*fork_args, env=env)))
        made.append(("import", mark, box.popen("conversation", "import", str(folder), env=env)))
    return made


def _folder(parent: Path, round_no: int, mark: str) -> Path:
    """A JP folder whose first request is ``mark``; every import of a round asks for
    the same id (the folder's name), and none is the same import as another."""
    folder = parent / f"{17900000000 + round_no}-imported"
    shutil.copytree(RUST, folder)
    events = json.loads((folder / "events.json").read_text())
    first = next(e for e in events if e["type"] == "chat_request")
    first["content"] = mark
    (folder / "events.json").write_text(json.dumps(events))
    return folder


def _requests(events: Sequence[dict[str, object]]) -> list[str]:
    return [str(e.get("content")) for e in events if e.get("type") == "chat_request"]


def _creations(box: Sandbox, ref: str) -> list[str]:
    """The reflog lines of ``ref`` that created a conversation (old value, message)."""
    log = (box.store / "logs" / ref).read_text().splitlines()
    return [
        f"{line.split(' ', 1)[0]} {line.split(chr(9), 1)[-1]}"
        for line in log
        if line.split(chr(9), 1)[-1].startswith(CREATIONS) or line.startswith(ZERO)
    ]


def test_twelve_creations_at_once_each_get_their_own_conversation(
    box: Sandbox, tmp_path: Path
) -> None:
    rust = box.conversations()[RUST_ID].events
    rust_requests = _requests(rust)
    made: dict[str, tuple[str, str]] = {}  # id -> (kind, mark)
    for round_no in range(ROUNDS):
        procs = _start(box, tmp_path, round_no)
        for kind, mark, proc in procs:
            stdout, stderr = proc.communicate(timeout=120)
            assert "Traceback" not in stderr, stderr
            assert proc.returncode == 0, f"{kind} {mark!r} exited {proc.returncode}: {stderr}"
            found = ID.findall(stdout + stderr)
            assert found, f"{kind} {mark!r} printed no id: {stdout}{stderr}"
            cid = found[0]
            assert cid not in made, f"{cid} reported by {made.get(cid)} and by {kind} {mark!r}"
            made[cid] = (kind, mark)
    convs = box.conversations()
    assert set(made) <= set(convs), sorted(set(made) - set(convs))
    assert len(convs) == 1 + ROUNDS * EACH * 4
    for cid, (kind, mark) in made.items():
        events = convs[cid].events
        starts = [e for e in events if e.get("type") == "conversation_start"]
        if kind == "q":
            assert _requests(events) == [mark], (cid, _requests(events))
            assert len(starts) == 1 and starts[0]["conversation_id"] == cid
        elif kind == "new":
            assert events == starts and starts[0]["conversation_id"] == cid
            assert mark in (box.note("refs/notes/meta", cid) or ""), cid
        elif kind == "fork":
            assert events[:-1] == rust and events[-1]["conversation_id"] == cid, cid
            assert mark in (box.note("refs/notes/meta", cid) or ""), cid
        else:
            assert _requests(events) == [mark, *rust_requests[1:]], cid
            assert starts[0]["conversation_id"] == cid, cid
        ref = convs[cid].ref
        creations = _creations(box, ref)
        assert len(creations) == 1 and creations[0].startswith(ZERO), (ref, creations)
    box.fsck()


def _held_for_a_moment(lock: Path, seconds: float) -> threading.Thread:
    """A sibling's lock on ``lock``'s ref, let go after ``seconds``."""
    lock.write_text("0" * 40 + "\n")

    def release() -> None:
        time.sleep(seconds)
        lock.unlink()

    thread = threading.Thread(target=release)
    thread.start()
    return thread


@pytest.mark.parametrize(
    "args", [("conversation", "new"), ("q", "--new", "hello"), ("conversation", "fork", "-a")]
)
def test_a_jp_head_lock_held_for_a_moment_is_waited_for(
    box: Sandbox, args: tuple[str, ...]
) -> None:
    box.ok("conversation", "use", RUST_ID)
    thread = _held_for_a_moment(box.store / "JP_HEAD.lock", 0.6)
    try:
        out = box.ok("--format", "json", *args)
    finally:
        thread.join()
    cid = ID.findall(out)[0]
    assert cid != RUST_ID and box.head() == cid


def test_a_creation_whose_jp_head_stays_locked_says_it_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store.git"
    init_bare(path)
    store = Store(path)
    lock = path / "JP_HEAD.lock"

    def sibling(point: str) -> None:  # another writer takes JP_HEAD once the check passed
        if point == "create:objects-written":
            lock.write_text("0" * 40 + "\n")

    monkeypatch.setattr(transaction, "WAIT_SECONDS", 0.3)
    faults.install(sibling)
    try:
        with pytest.raises(UserError) as caught:
            new_conversation(store)
    finally:
        faults.install(None)
    cid = ID.findall(caught.value.message)[0]
    assert store.refs.exists(cid)
    assert "created conversation" in caught.value.message
    assert "nothing was changed" not in caught.value.message
    assert f"jp conversation use {cid}" in (caught.value.hint or "")
