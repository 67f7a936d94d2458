"""What an append is compared with: the same event written three other ways.

- SQLite: one ``INSERT`` in its own transaction, WAL journal; ``synchronous``
  NORMAL (no fsync per commit, like jp's default) or FULL (fsync per commit).
- JP's layout: the whole conversation rewritten as one JSON array file, to a
  temporary file renamed over the old one (fsynced when durable).
- git's plumbing: ``hash-object -w``, ``mktree``, ``commit-tree`` and
  ``update-ref`` with the old value, one process each.
- the floor of the design: the least any store of one commit per event can
  write, done with plain system calls (three loose objects, a locked ref
  compared and renamed over, one reflog line), with none of jp's checks.

Every variant serialises the event inside the clock, as jp does.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import time
import zlib
from collections.abc import Sequence
from pathlib import Path

from gitstore.events import Event, canonical_json
from gitstore.events.commits import message
from gitstore.fs import atomic


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
        atomic.replace(tmp, self.path, durable=self.durable)

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


class LooseFloor:
    """One commit per event at its cheapest: what git's object and ref formats require.

    Three loose objects (zlib at git's default loose level, each a temporary
    file renamed into its fan-out folder), then the ref: lock file, the old
    value compared, the new one written, a reflog line appended, the lock
    renamed over the ref.  No validation, no cache, no libgit2.
    """

    def __init__(self, gitdir: Path, ref: str, tip: str) -> None:
        self.objects = gitdir / "objects"
        self.ref = gitdir / ref
        self.log = gitdir / "logs" / ref
        self.ref.parent.mkdir(parents=True, exist_ok=True)
        self.log.parent.mkdir(parents=True, exist_ok=True)
        self.ref.write_text(tip + "\n")
        self.tip = tip

    def _object(self, kind: bytes, body: bytes) -> str:
        raw = kind + b" %d\0" % len(body) + body
        oid = hashlib.sha1(raw).hexdigest()
        folder = self.objects / oid[:2]
        path = folder / oid[2:]
        if not path.exists():
            folder.mkdir(exist_ok=True)
            tmp = folder / f"tmp_obj_{oid}"
            tmp.write_bytes(zlib.compress(raw, 1))
            atomic.replace(tmp, path)
        return oid

    def append(self, event: Event) -> float:
        start = time.perf_counter()
        blob = self._object(b"blob", canonical_json(event))
        tree = self._object(b"tree", b"100644 event.json\0" + bytes.fromhex(blob))
        who = f"jp <jp@localhost> {int(time.time())} +0000"
        body = f"tree {tree}\nparent {self.tip}\nauthor {who}\ncommitter {who}\n\n{message(event)}"
        commit = self._object(b"commit", body.encode())
        lock = self.ref.with_name(self.ref.name + ".lock")
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            if self.ref.read_text().strip() != self.tip:
                raise RuntimeError("the floor's ref moved under it")
            os.write(fd, f"{commit}\n".encode())
        finally:
            os.close(fd)
        with open(self.log, "a") as log:
            log.write(f"{self.tip} {commit} {who}\tbench: append\n")
        atomic.replace(lock, self.ref)
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
        atomic.replace(lock, self.path)
        return time.perf_counter() - start
