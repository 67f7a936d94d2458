"""What an append is compared with: the same event written three other ways.

- SQLite: one ``INSERT`` in its own transaction, WAL journal; ``synchronous``
  NORMAL (no fsync per commit, like jp's default) or FULL (fsync per commit).
- JP's layout: the whole conversation rewritten as one JSON array file, to a
  temporary file renamed over the old one (fsynced when durable).
- git's plumbing: ``hash-object -w``, ``mktree``, ``commit-tree`` and
  ``update-ref`` with the old value, one process each.

Every variant serialises the event inside the clock, as jp does.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from gitstore.commits import message
from gitstore.events import Event, canonical_json


class SqliteLog:
    def __init__(self, path: Path, events: Sequence[Event], durable: bool) -> None:
        path.unlink(missing_ok=True)
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
        self.db.execute(
            "CREATE TABLE events (conversation TEXT NOT NULL, seq INTEGER NOT NULL, "
            "json TEXT NOT NULL, PRIMARY KEY (conversation, seq))"
        )
        self.db.execute("BEGIN")
        self.db.executemany(
            "INSERT INTO events VALUES ('c', ?, ?)",
            ((n, json.dumps(e, sort_keys=True)) for n, e in enumerate(events)),
        )
        self.db.execute("COMMIT")
        self.seq = len(events)

    def append(self, event: Event) -> float:
        start = time.perf_counter()
        text = json.dumps(event, sort_keys=True, ensure_ascii=False)
        self.db.execute("INSERT INTO events VALUES ('c', ?, ?)", (self.seq, text))
        elapsed = time.perf_counter() - start
        self.seq += 1
        return elapsed

    def close(self) -> None:
        self.db.close()


class JsonFile:
    """JP's layout: ``events.json`` holds the whole conversation, rewritten per append."""

    def __init__(self, folder: Path, events: Sequence[Event], durable: bool) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / "events.json"
        self.events = list(events)
        self.durable = durable
        self._write()

    def _write(self) -> None:
        data = (json.dumps(self.events, indent=2, ensure_ascii=False) + "\n").encode()
        tmp = self.path.with_name(".events.json.tmp")
        with open(tmp, "wb") as handle:
            handle.write(data)
            if self.durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, self.path)
        if self.durable:
            fd = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def append(self, event: Event) -> float:
        start = time.perf_counter()
        self.events.append(event)
        self._write()
        return time.perf_counter() - start


class GitPlumbing:
    """Four git processes per event, on a ref of its own that starts at ``tip``."""

    def __init__(self, gitdir: Path, ref: str, tip: str, durable: bool) -> None:
        self.ref = ref
        self.tip = tip
        fsync = "committed" if durable else "none"
        self.base = ["git", "--git-dir", str(gitdir), "-c", f"core.fsync={fsync}"]
        self.env = dict(os.environ)
        for role in ("AUTHOR", "COMMITTER"):
            self.env[f"GIT_{role}_NAME"] = "jp"
            self.env[f"GIT_{role}_EMAIL"] = "jp@localhost"
        subprocess.run([*self.base, "update-ref", ref, tip], check=True)

    def _git(self, args: list[str], data: bytes | None = None) -> str:
        done = subprocess.run(
            [*self.base, *args], input=data, capture_output=True, check=True, env=self.env
        )
        return done.stdout.decode().strip()

    def append(self, event: Event) -> float:
        start = time.perf_counter()
        blob = self._git(["hash-object", "-w", "--stdin"], canonical_json(event))
        tree = self._git(["mktree"], f"100644 blob {blob}\tevent.json\n".encode())
        commit = self._git(["commit-tree", tree, "-p", self.tip, "-m", message(event)])
        self._git(["update-ref", "-m", "bench: append", self.ref, commit, self.tip])
        self.tip = commit
        return time.perf_counter() - start


class RefFile:
    """The floor of any loose-ref update: write 41 bytes to a lock file, rename it over."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / "ref"
        self.path.write_text("0" * 40 + "\n")

    def append(self, event: Event) -> float:
        start = time.perf_counter()
        lock = self.path.with_name("ref.lock")
        with open(lock, "w") as handle:
            handle.write(str(event["timestamp"]).ljust(40)[:40] + "\n")
        os.replace(lock, self.path)
        return time.perf_counter() - start
