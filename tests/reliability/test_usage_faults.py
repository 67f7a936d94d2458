"""`jp usage` killed while it keeps its rows, beside `git gc --prune=now`, and on a cache
whose kept rows were damaged: the next run gives the same figures as an undisturbed one."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import threading
import time
from pathlib import Path

from tests.reliability.harness import Sandbox

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "usage"


def imported(tmp_path: Path) -> tuple[Sandbox, str]:
    box = Sandbox(tmp_path / "box")
    box.ok("init")
    box.ok("conversation", "import", "--from", "claude-code", str(FIXTURES / "claude" / "projects"))
    box.ok("conversation", "import", "--from", "codex", str(FIXTURES / "codex"))
    before = box.ok("-F", "json", "usage", "--by", "model")
    for _ in range(3):  # forks share commits: more rows, the same figures
        box.ok("conversation", "fork", box.json("conversation", "ls")[0]["id"])
    expected = box.ok("-F", "json", "usage", "--by", "model")
    assert '"gpt-5-codex"' in expected and expected == before
    return box, expected


def no_cache(box: Sandbox) -> None:
    for path in (box.store / "jp").glob("cache.sqlite*"):
        path.unlink()


def test_a_killed_usage_leaves_rows_the_next_one_reads(tmp_path: Path) -> None:
    box, expected = imported(tmp_path)
    for delay in (0.0, 0.1, 0.3, 0.6):
        no_cache(box)
        proc = box.popen("-F", "json", "usage", "--by", "model")
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        assert box.ok("-F", "json", "usage", "--by", "model") == expected, delay
        assert box.ok("-F", "json", "usage", "--by", "model") == expected, "from the kept rows"


def test_usage_beside_git_gc_prune_now(tmp_path: Path) -> None:
    box, expected = imported(tmp_path)
    stop = threading.Event()

    def gc() -> None:
        while not stop.is_set():
            subprocess.run(
                ["git", "--git-dir", str(box.store), "gc", "--quiet", "--prune=now"],
                env=box.env,
                capture_output=True,
            )

    worker = threading.Thread(target=gc)
    worker.start()
    try:
        for _ in range(4):
            no_cache(box)
            assert box.ok("-F", "json", "usage", "--by", "model") == expected
    finally:
        stop.set()
        worker.join()


def test_damaged_kept_rows_are_made_again_from_git(tmp_path: Path) -> None:
    box, expected = imported(tmp_path)
    damages = [
        "'[1]'",
        '\'{"first": 0, "entries": [["k", 0, null, "jp", null, null, -1, 0, 0, 0]]}\'',
        '\'{"first": "x", "entries": []}\'',
        "'not json'",
    ]
    for damage in damages:
        with sqlite3.connect(box.store / "jp" / "cache.sqlite") as db:
            changed = db.execute(
                f"UPDATE derived SET json = {damage} WHERE name LIKE 'usage/%'"
            ).rowcount
        assert changed > 0
        assert box.ok("-F", "json", "usage", "--by", "model") == expected, damage
