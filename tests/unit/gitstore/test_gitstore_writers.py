"""Writers' folders under ``<gitdir>/jp/``: a sweep beside a writer never takes a
live writer's folder for a dead one's (``writers.claim``, ``dead_writers``)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from gitstore.git import writers


def test_a_claimed_folder_is_never_swept_while_its_writer_lives(tmp_path: Path) -> None:
    top = tmp_path / "packing"
    stop = threading.Event()
    swept: list[Path] = []

    def sweep() -> None:
        while not stop.is_set():
            swept.extend(work for work, _ in writers.dead_writers(top))

    sweeper = threading.Thread(target=sweep)
    sweeper.start()
    try:
        held = [writers.claim(top, f"w{n}", b"pack-x.keep") for n in range(300)]
    finally:
        stop.set()
        sweeper.join()
    assert swept == []
    assert all((work / "owner").read_bytes() == b"pack-x.keep" for work, _ in held)
    for _, fd in held:
        os.close(fd)  # the writers end: every folder is now a dead writer's
    assert sorted(w.name for w, says in writers.dead_writers(top)) == sorted(
        f"w{n}" for n in range(300)
    )


def test_a_folder_left_under_its_making_name_is_swept_once_old(tmp_path: Path) -> None:
    top = tmp_path / "kept"
    young, old = top / ".young", top / ".old"
    young.mkdir(parents=True)
    old.mkdir()
    before = old.stat().st_mtime - writers.MAKING_SECONDS - 5
    os.utime(old, (before, before))
    assert [w.name for w, _ in writers.dead_writers(top)] == [".old"]
