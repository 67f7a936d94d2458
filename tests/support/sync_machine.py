"""Sealed machines for sync tests: a store, a home and a remote each, and the
real `jp` next to the running interpreter (no ANTHROPIC_* variables, so
queries use jp's offline model)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gitstore.events import now_text
from gitstore.store.core import Store
from tests.support.sandbox import JP, sealed_env


class Machine:
    def __init__(
        self,
        root: Path,
        remote: Path | str,
        extra: Mapping[str, str] | None = None,
        *,
        made: bool = False,
    ) -> None:
        """A new machine at ``root`` (`jp init`, origin ``remote``, a path or URL);
        ``extra``: what the client needs to reach it (``GIT_SSH_COMMAND`` for the
        test's sshd); with ``made``, the machine already there."""
        if not made:
            root.mkdir(parents=True)
        self.root = root
        self.extra = extra
        self.store = root / "store.git"
        self.env = sealed_env(root, self.store, root / "config", "T", "t@example.invalid", extra)
        if not made:
            self.ok("init")
            self.ok("remote", "add", "origin", str(remote))

    def copy(self, root: Path, remote: Path | str) -> Machine:
        """This machine's home and store copied to ``root`` (as `cp -a` does), its
        origin pointed at ``remote``: an expensive setup built once, one copy a test."""
        shutil.copytree(self.root, root, symlinks=True)
        other = Machine(root, remote, self.extra, made=True)
        other.git("remote", "set-url", "origin", str(remote))
        return other

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [str(JP), *args],
            env=self.env,
            cwd=self.root,
            text=True,
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=300,
        )
        assert "Traceback" not in proc.stderr, proc.stderr
        return proc

    def ok(self, *args: str) -> str:
        proc = self.run(*args)
        assert proc.returncode == 0, f"jp {args}: {proc.stdout}\n{proc.stderr}"
        return proc.stdout

    def json(self, *args: str) -> Any:
        return json.loads(self.ok("--format", "json", *args))

    def git(self, *args: str) -> str:
        return subprocess.run(
            ["git", "--git-dir", str(self.store), *args],
            env=self.env,
            text=True,
            capture_output=True,
            check=True,
        ).stdout

    def ids(self, archived: bool = False) -> set[str]:
        rows = self.json("conversation", "ls", *(["--archived"] if archived else []))
        return {row["id"] for row in rows}

    def tip(self, cid: str) -> str:
        for ref in (f"refs/conversations/{cid}", f"refs/archive/conversations/{cid}"):
            out = subprocess.run(
                ["git", "--git-dir", str(self.store), "rev-parse", "-q", "--verify", ref],
                text=True,
                capture_output=True,
            ).stdout
            if out.strip():
                return out.strip()
        raise AssertionError(f"no {cid}")

    def refs(self) -> dict[str, str]:
        out = self.git(
            "for-each-ref",
            "--format=%(refname) %(objectname)",
            "refs/conversations",
            "refs/archive",
            "refs/notes",
        )
        return dict(line.split(" ") for line in out.splitlines())

    def new(self, text: str) -> str:
        self.ok("q", "--new", text)
        return str(self.json("conversation", "show")["id"])

    def transcript(self, cid: str) -> str:
        return self.git("log", "--format=%B", self.tip(cid))


def remote_refs(remote: Path) -> list[str]:
    out = subprocess.run(
        ["git", "--git-dir", str(remote), "for-each-ref", "--format=%(refname)"],
        text=True,
        capture_output=True,
        check=True,
    ).stdout
    return out.split()


def bulk_conversations(
    store_path: Path,
    count: int,
    events: int = 5,
    prefix: int = 17000000000,
) -> list[str]:
    """``count`` small conversations written in process (fast), ids from ``prefix``."""
    store = Store(store_path)
    made = []
    for n in range(count):
        cid = f"jp-c{prefix + n}"
        stream: list[dict[str, Any]] = [
            {"type": "conversation_start", "timestamp": now_text(), "conversation_id": cid}
        ]
        for i in range(events - 1):
            stream.append(
                {
                    "type": "chat_request",
                    "timestamp": now_text(),
                    "content": f"message {i} of {cid}",
                }
            )
        store.log.create(cid, stream, None, "bulk")
        made.append(cid)
    return made
