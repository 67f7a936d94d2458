"""Writes beside git's prune: retried, and named when they cannot be.

git's prune removes an empty `objects/XX/` folder; when it does so between
libgit2's mkdir and rename of a new object, the write fails ("failed to
rename lockfile").  `git gc --prune=now` also removes the objects jp has just
written, before its ref points at them.  jp writes such objects again, so
every query lands whole; what cannot be saved is named as the prune, never as
an internal error or the disk's fault.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.reliability.harness import ID, Sandbox

WRITES = 12


@contextmanager
def pruning(box: Sandbox, commands: list[list[str]]) -> Iterator[None]:
    """git's ``commands`` over and over while the block runs."""
    stop = threading.Event()
    rounds = [0]

    def loop() -> None:
        while not stop.is_set():
            for command in commands:
                subprocess.run(
                    ["git", "--git-dir", str(box.store), *command],
                    env=box.env,
                    capture_output=True,
                )
            rounds[0] += 1

    worker = threading.Thread(target=loop, daemon=True)
    worker.start()
    try:
        yield
    finally:
        stop.set()
        worker.join(timeout=120)
    assert rounds[0] > 0


def _queries(box: Sandbox, commands: list[list[str]]) -> dict[str, str]:
    """``WRITES`` queries beside ``commands``: the id and text of each that succeeded;
    each that failed named the prune (no internal error, not the disk)."""
    asked: dict[str, str] = {}
    with pruning(box, commands):
        for n in range(WRITES):
            text = f"beside the prune {n}"
            proc = box.run("--format", "json", "q", "--new", text)
            if proc.returncode != 0:
                assert "internal error" not in proc.stderr, proc.stderr
                assert "prune" in proc.stderr, proc.stderr
                assert "disk did not keep" not in proc.stderr, proc.stderr
                continue
            asked[ID.findall(proc.stdout)[0]] = text
    return asked


def test_queries_beside_git_maintenance_land_whole(tmp_path: Path) -> None:
    """git gc and git prune as maintenance runs them (objects younger than the
    expiry stay; every emptied `objects/XX/` goes, under libgit2's new objects)."""
    box = Sandbox(tmp_path / "box")
    box.ok("init")
    commands = [["gc", "--quiet"], ["prune", "--expire=2.weeks.ago"]]
    asked = _queries(box, commands)
    assert len(asked) == WRITES
    convs = box.conversations()
    for cid, text in asked.items():
        requests = [e.get("content") for e in convs[cid].events if e["type"] == "chat_request"]
        assert requests == [text], (cid, requests)
    box.fsck()


# a user's `git gc --prune=now` (a bare `git prune --expire=now` holds no gc.pid:
# nothing tells a write it runs, and git's documentation calls it unsafe beside writers)
def test_notes_and_op_log_writes_beside_git_maintenance_all_land(tmp_path: Path) -> None:
    """Titles and labels (notes, each an operation) beside `git gc` and `git prune`
    with their grace: every emptied `objects/XX/` goes, also under libgit2's new
    objects, and every write lands (none is named): the folder race is not optional."""
    box = Sandbox(tmp_path / "box")
    box.ok("init")
    cid = box.new("beside maintenance")
    with pruning(box, [["gc", "--quiet"], ["prune", "--expire=2.weeks.ago"]]):
        for n in range(WRITES):
            box.ok("conversation", "edit", cid, "--title", f"title-{n}", "--label", f"k{n}=v{n}")
    shown = box.json("conversation", "show", cid)
    assert shown["title"] == f"title-{WRITES - 1}"
    assert all(f"k{n}" in shown["labels"] for n in range(WRITES)), shown["labels"]
    logged = [op["command"] for op in box.json("op", "log")]
    assert sum("--title" in line for line in logged) == WRITES, logged
    box.git("fsck", "--full", "--strict", "--no-progress")
    box.fsck()


NOW = [["gc", "--quiet", "--prune=now"]]
ROUNDS = 8


def _named(proc: subprocess.CompletedProcess[str]) -> bool:
    """Whether ``proc`` succeeded; a failure must name git's prune, one line."""
    if proc.returncode == 0:
        return True
    assert "internal error" not in proc.stderr, proc.stderr
    assert "prune" in proc.stderr, proc.stderr
    assert proc.stderr.count("error:") == 1, proc.stderr
    return False


def _edits_beside_prune(box: Sandbox, cid: str) -> tuple[str | None, list[str], list[str]]:
    """Titles, labels, a pin and its undo, and the op log read, round after round
    beside ``git gc --prune=now``: the last title
    that was set, the labels that were added, and every command line that
    reported success (each an operation)."""
    title: str | None = None
    labels: list[str] = []
    done: list[str] = []
    with pruning(box, NOW):
        for n in range(ROUNDS):
            edits = (["--title", f"title-{n}"], ["--label", f"k{n}=v{n}"])
            for flags in edits:
                if _named(box.run("conversation", "edit", cid, *flags)):
                    done.append(" ".join(["jp", "conversation", "edit", cid, *flags]))
                    title = f"title-{n}" if flags[0] == "--title" else title
                    labels += [f"k{n}"] if flags[0] == "--label" else []
            if _named(box.run("conversation", "edit", cid, "--pin")):
                done.append(f"jp conversation edit {cid} --pin")
                if _named(box.run("undo")):
                    done.append("jp undo")
            _named(box.run("-F", "json", "op", "log", "-n", "5"))
    return title, labels, done


def test_notes_and_op_log_writes_beside_prune_now_are_kept_or_named(tmp_path: Path) -> None:
    """Every note and operation commit is written loose before its ref moves, so
    `git gc --prune=now` (which deletes every unreachable loose object) may take it
    before the ref points at it: jp writes it again, once, before and after the
    move (``gitstore/git/pruned.py``), and a write or read it spoils again names the
    prune in one line.  After the loop the store is whole and holds every write
    that said it succeeded."""
    box = Sandbox(tmp_path / "box")
    box.ok("init")
    cid = box.new("beside the prune")
    title, labels, done = _edits_beside_prune(box, cid)
    box.git("fsck", "--full", "--strict", "--no-progress")
    box.fsck()
    shown = box.json("conversation", "show", cid)
    assert shown["title"] == title
    assert all(key in shown["labels"] for key in labels), (labels, shown["labels"])
    logged = [op["command"] for op in box.json("op", "log")]
    missing = [line for line in done if line not in logged]
    assert not missing, missing
