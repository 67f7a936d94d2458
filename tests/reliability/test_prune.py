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
