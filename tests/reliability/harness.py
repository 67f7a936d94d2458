"""A sealed sandbox for the reliability tests: the real `jp` in a subprocess,
its own HOME/XDG folders and store, and plain git to check what it left.

Nothing of the developer's environment leaks in except PATH and the locale;
ANTHROPIC_* variables are set only when a test points the SDK at the loopback
fake.  `kill` runs `jp` with JP_FAULT so that it SIGKILLs itself at a named
fault point (see gitstore/faults.py).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.background import repeating
from tests.support.sandbox import ID, JP, TIMEOUT, TRACEBACK, GitReader, sealed_env
from tests.support.sandbox import RUST as RUST  # re-exported for the tests

RUST_ID = "jp-c17800000101"
STALE = 1.1  # seconds after which repair calls a dead writer's ref lock stale


@dataclass(frozen=True)
class Conversation:
    """One conversation as plain git shows it."""

    cid: str
    ref: str
    tip: str
    events: list[dict[str, Any]]

    @property
    def archived(self) -> bool:
        return self.ref.startswith("refs/archive/")

    def ref_tip(self) -> tuple[str, str]:
        return self.ref, self.tip

    @property
    def kinds(self) -> list[str]:
        return [str(e.get("type")) for e in self.events]


class Sandbox(GitReader):
    """One sealed user with one store."""

    def __init__(self, root: Path, env: Mapping[str, str] | None = None) -> None:
        self.root = root
        self.store = root / "store.git"
        for sub in ("home", "config/jp", "data", "cache", "work"):
            (root / sub).mkdir(parents=True, exist_ok=True)
        self.env = sealed_env(
            root, self.store, root / "config", "Rel Iable", "rel@example.invalid", env
        )
        # No background `git gc --auto` (gitstore/maintenance.py): a `git fsck`
        # that runs while it packs reports the loose objects it just removed.
        gitconfig = root / "home" / ".gitconfig"
        if not gitconfig.exists():
            gitconfig.write_text("[gc]\n\tauto = 0\n")

    def copy(self, root: Path) -> Sandbox:
        """A sandbox at ``root`` holding a copy of this one's store and config."""
        shutil.copytree(self.root, root, symlinks=True)
        other = Sandbox(root)
        other.env.update({k: v for k, v in self.env.items() if k.startswith("ANTHROPIC_")})
        return other

    @property
    def config_file(self) -> Path:
        return self.root / "config" / "jp" / "config.toml"

    # -- running jp -------------------------------------------------------------------

    def run(
        self, *args: str, input: str = "", env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [str(JP), *args],
            env={**self.env, **(env or {})},
            cwd=self.root / "work",
            input=input,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        assert TRACEBACK not in proc.stdout + proc.stderr, f"jp {args}:\n{proc.stderr}"
        return proc

    def ok(self, *args: str, input: str = "", env: Mapping[str, str] | None = None) -> str:
        proc = self.run(*args, input=input, env=env)
        assert proc.returncode == 0, f"jp {args} exited {proc.returncode}:\n{proc.stderr}"
        return proc.stdout

    def fail(
        self, *args: str, input: str = "", env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """A failure users can act on: non-zero, an `error:` line, not an internal error."""
        proc = self.run(*args, input=input, env=env)
        assert proc.returncode != 0, f"jp {args} should have failed:\n{proc.stdout}"
        assert "error:" in proc.stderr, proc.stderr
        assert "internal error" not in proc.stderr, proc.stderr
        return proc

    def kill(self, fault: str, *args: str, input: str = "") -> None:
        """Run ``jp args`` and assert it died by SIGKILL at ``fault``."""
        proc = self.run(*args, input=input, env={"JP_FAULT": fault})
        assert proc.returncode == -signal.SIGKILL, (
            f"jp {args} with JP_FAULT={fault} exited {proc.returncode} instead of being "
            f"killed (the point was not reached):\n{proc.stderr}"
        )

    def popen(
        self, *args: str, env: Mapping[str, str] | None = None, stdin: bool = False
    ) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [str(JP), *args],
            env={**self.env, **(env or {})},
            cwd=self.root / "work",
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def json(self, *args: str) -> Any:
        return json.loads(self.ok("--format", "json", *args))

    def new(self, text: str = "hello") -> str:
        found = ID.findall(self.ok("--format", "json", "q", "--new", text))
        assert found, "no id printed"
        return found[0]

    # -- reading the store with git ------------------------------------------------------

    def head(self) -> str | None:
        """The active conversation JP_HEAD names."""
        target = self.git("symbolic-ref", "-q", "JP_HEAD", check=False).strip()
        return target.rsplit("/", 1)[-1] if target else None

    def conversations(self) -> dict[str, Conversation]:
        """Every conversation, live and archived, read with git alone."""
        out: dict[str, Conversation] = {}
        for ref, tip in self.refs("refs/conversations", "refs/archive/conversations").items():
            cid = ref.rsplit("/", 1)[-1]
            assert cid not in out, f"{cid} is both live and archived"
            out[cid] = Conversation(cid, ref, tip, self.events(tip))
        return out

    def events(self, tip: str) -> list[dict[str, Any]]:
        return self.chain_events(tip, first_parent=True)

    def note(self, ref: str, cid: str) -> str | None:
        anchor = self.git("hash-object", "--stdin", input=f"jp-conversation {cid}\n").strip()
        proc = subprocess.run(
            ["git", "--git-dir", str(self.store), "notes", f"--ref={ref}", "show", anchor],
            env=self.env,
            capture_output=True,
            text=True,
        )
        return proc.stdout if proc.returncode == 0 else None

    def fsck(self) -> None:
        proc = subprocess.run(
            ["git", "--git-dir", str(self.store), "fsck", "--strict", "--no-progress"],
            env=self.env,
            capture_output=True,
            text=True,
        )
        text = proc.stdout + proc.stderr
        assert proc.returncode == 0, text
        bad = [line for line in text.splitlines() if not line.startswith(("dangling ", "notice:"))]
        assert not bad, text

    def leftovers(self) -> list[str]:
        """Journals and ref lock files that a finished repair must not leave."""
        found = [str(p.relative_to(self.store)) for p in (self.store / "jp" / "ops").glob("*")]
        found += [
            str(p.relative_to(self.store))
            for p in self.store.rglob("*.lock")
            if "jp/locks" not in p.as_posix()  # flock files: persistent by design
        ]
        return sorted(found)

    def settle(self) -> None:
        """Wait until ref locks a killed writer left count as stale for repair."""
        time.sleep(STALE)


AROUND = ("alone", "packing", "stale-locks")
"""What else is going on while jp is killed and while the store is repaired:
nothing; git packing refs over and over (what git gc does to refs, and the
background gc jp starts); lock files and leftovers of other, dead writers."""


def remote_pair(root: Path, names: tuple[str, str] = ("one", "two")) -> tuple[Sandbox, Sandbox]:
    """Two stores under ``root`` with one bare remote, ``origin``, between them."""
    remote = root / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    pair = Sandbox(root / names[0]), Sandbox(root / names[1])
    for box in pair:
        box.ok("init")
        box.ok("remote", "add", "origin", str(remote))
    return pair


class Others:
    """The other processes, or their leftovers, that a crash test runs among.

    ``packing`` runs ``git pack-refs --all`` in a loop while ``running()`` is
    entered (paused for the checks, whose lock-file scan would see git's own
    ``packed-refs.lock``).  ``stale-locks`` plants, before the crash, the lock
    files of dead writers on refs the operation does not touch (which jp must
    leave alone: ``planted``), an abandoned journal temp file and a killed bulk
    writer's folder (which jp removes).
    """

    def __init__(self, box: Sandbox, kind: str) -> None:
        assert kind in AROUND, kind
        self.box = box
        self.kind = kind
        self.planted: list[str] = []
        if kind == "stale-locks":
            self._plant()

    def _plant(self) -> None:
        old = time.time() - 60
        for name in ("refs/conversations/jp-c1.lock", "refs/archive/conversations/jp-c2.lock"):
            path = self.box.store / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("0" * 40 + "\n")
            self.planted.append(name)
        ops = self.box.store / "jp" / "ops"
        ops.mkdir(parents=True, exist_ok=True)
        (ops / "abandoned.tmp").write_text('{"upd')
        dead = self.box.store / "jp" / "packing" / "1-dead"
        dead.mkdir(parents=True, exist_ok=True)
        (dead / "chunk-0.pack").write_bytes(b"PACK")
        (self.box.store / "jp" / "locks").mkdir(parents=True, exist_ok=True)
        (self.box.store / "jp" / "locks" / f"{RUST_ID}.lock").write_text("")  # an flock, free
        for path in [ops / "abandoned.tmp", *self.box.store.rglob("*.lock")]:
            os.utime(path, (old, old))
        self.planted.sort()

    @contextmanager
    def running(self) -> Iterator[None]:
        if self.kind != "packing":
            yield
            return
        argv = ["git", "--git-dir", str(self.box.store), "pack-refs", "--all"]
        with repeating(argv, self.box.env) as rounds:
            yield
        assert rounds[0] > 0


def extends(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> bool:
    """``new`` is ``old`` with events appended (nothing lost, nothing rewritten)."""
    return new[: len(old)] == old
