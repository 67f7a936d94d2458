"""A hostile remote built with plain git plumbing, and the checks every hostile
pull must pass: git fsck clean, local conversations unchanged, the refusal named."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pygit2

from gitstore.store.core import Store
from gitstore.sync import journal
from gitstore.sync.pull import Outcome

ENV = {
    "GIT_AUTHOR_NAME": "attacker",
    "GIT_AUTHOR_EMAIL": "a@example.invalid",
    "GIT_COMMITTER_NAME": "attacker",
    "GIT_COMMITTER_EMAIL": "a@example.invalid",
    "PATH": "/usr/local/bin:/usr/bin:/bin",
}
T = "2026-01-05T09:00:00.000000Z"


class Hostile:
    """Plain git on the bare remote: what anyone who can push there can do.  With
    ``journal`` (the default) each ref it writes is named in the remote's journal
    too, as a jp would, so that a pull fetches it without a reconcile."""

    def __init__(self, path: Path, journal: bool = True) -> None:
        self.path = path
        self.journaled = journal

    def git(self, *args: str, input: str | bytes | None = None) -> str:
        data = input.encode() if isinstance(input, str) else input
        proc = subprocess.run(
            ["git", "--git-dir", str(self.path), *args],
            input=data,
            capture_output=True,
            env=ENV,
            check=True,
        )
        return proc.stdout.decode().strip()

    def blob(self, data: str | bytes) -> str:
        return self.git("hash-object", "-w", "--stdin", input=data)

    def tree(self, lines: list[str]) -> str:
        return self.git("mktree", input="".join(line + "\n" for line in lines))

    def nest(self, tree: str, name: str, levels: int) -> str:
        """``tree`` inside ``levels`` folders called ``name``: the trees `git mktree`
        makes, written in process (thousands of git processes cost seconds)."""
        repo = pygit2.Repository(str(self.path))
        oid = pygit2.Oid(hex=tree)
        for _ in range(levels):
            builder = repo.TreeBuilder()
            builder.insert(name, oid, pygit2.GIT_FILEMODE_TREE)
            oid = builder.write()
        return str(oid)

    def commit(self, tree: str, *parents: str, message: str = "forged") -> str:
        args = ["commit-tree", tree, "-m", message]
        for parent in parents:
            args += ["-p", parent]
        return self.git(*args)

    def event(self, data: str | bytes | dict[str, Any], *parents: str) -> str:
        """A commit whose tree holds one event.json with these bytes."""
        if isinstance(data, dict):
            data = json.dumps(data, sort_keys=True, indent=1) + "\n"
        blob = self.blob(data)
        return self.commit(self.tree([f"100644 blob {blob}\tevent.json"]), *parents)

    def ref(self, name: str, oid: str) -> None:
        self.git("update-ref", name, oid)
        self.journal(name)

    def delete(self, name: str) -> None:
        self.git("update-ref", "-d", name)
        self.journal(name)

    def journal(self, *names: str) -> None:
        """A journal entry naming ``names`` (those a pull may fetch), on the journal."""
        if not self.journaled:
            return
        listed = [n for n in names if journal.name_problem(n) is None]
        try:
            parent = ["-p", self.tip(journal.REMOTE_REF)]
        except subprocess.CalledProcessError:
            parent = []
        empty = self.tree([])
        entry = self.git("commit-tree", empty, *parent, "-m", journal.message(listed).strip())
        self.git("update-ref", journal.REMOTE_REF, entry)

    def tip(self, name: str) -> str:
        return self.git("rev-parse", "--verify", name)

    def add_note_lines(self, target: str, text: bytes) -> None:
        """Append raw lines to the metadata note on ``target`` (any bytes)."""
        old = subprocess.run(
            ["git", "--git-dir", str(self.path), "notes", "--ref=refs/notes/meta", "show", target],
            capture_output=True,
            env=ENV,
        ).stdout
        if old and not old.endswith(b"\n"):
            old += b"\n"
        note = self.path / "note.bin"
        note.write_bytes(old + text)
        self.git("notes", "--ref=refs/notes/meta", "add", "-f", "-F", str(note), target)
        self.journal("refs/notes/meta")


def request(text: str) -> dict[str, Any]:
    return {"type": "chat_request", "timestamp": T, "content": text}


def snapshot(store: Store) -> dict[str, tuple[str, list[Any]]]:
    """Every local conversation: its tip and its events read back."""
    out: dict[str, tuple[str, list[Any]]] = {}
    for loc in store.refs.list(None):
        events, _ = store.log.read_chain(loc.tip)
        out[loc.ref] = (loc.tip, events)
    return out


def fsck(store: Store) -> None:
    proc = subprocess.run(
        ["git", "--git-dir", str(store.gitdir), "fsck", "--strict", "--no-progress"],
        capture_output=True,
        text=True,
    )
    report = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "error" not in report.lower(), report


def refused(outcomes: list[Outcome]) -> dict[str, Outcome]:
    return {o.id: o for o in outcomes if o.kind == "refused"}


def intact(store: Store, before: dict[str, tuple[str, list[Any]]]) -> None:
    """The local conversations read back unchanged (the hostile pull added nothing bad)."""
    fsck(store)
    now = snapshot(store)
    for ref, state in before.items():
        assert now.get(ref) == state, f"{ref} changed"
