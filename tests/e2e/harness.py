"""Drive the installed `jp` as a user would, in a sealed environment, and read
the store back with plain git.

Every `User` has its own HOME, XDG folders and store; nothing of the
developer's environment leaks in except PATH and the locale.  ANTHROPIC_*
variables are set only when a test points the real SDK at the loopback fake
(`User.connect`).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.support.sandbox import (
    ID,
    JP,
    OWN_FIXTURES,
    ROOT,
    TIMEOUT,
    TRACEBACK,
    GitReader,
    sealed_env,
)
from tests.support.sandbox import RUST as RUST  # re-exported for the tests

OWN = OWN_FIXTURES
NO_MARKERS = OWN / "17800000102-no-turn-markers"
WITH_COMPACTION = OWN / "17800000103-with-compaction"
OWN_FOLDERS = [RUST, NO_MARKERS, WITH_COMPACTION]  # the project's own JP folders
SHARED = ROOT.parent / "shared"
REAL = SHARED / "fixtures" / "jp-conversations"
PINNED_START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def pinned_clock(run: int) -> dict[str, str]:
    """The testing hook of porcelain/clock.py for the ``run``-th `jp` of a pinned user:
    each run starts a minute after the one before, its own seed, one second a reading."""
    start = PINNED_START + timedelta(minutes=run)
    return {"JP_TEST_CLOCK": start.strftime("%Y-%m-%dT%H:%M:%SZ"), "JP_TEST_SEED": str(run)}


class User(GitReader):
    """One sealed user: a home, a config folder, a store.

    A ``pinned`` user's `jp` runs on a seeded clock (``pinned_clock``), so the same
    commands write the same ids, times and commits and print the same text.
    """

    def __init__(self, root: Path, name: str = "user", *, pinned: bool = False) -> None:
        self.pinned = pinned
        self.runs = 0
        self.root = root / name
        self.root.mkdir(parents=True, exist_ok=True)
        self.store = self.root / "store.git"
        self.config_dir = self.root / "config"
        (self.config_dir / "jp").mkdir(parents=True, exist_ok=True)
        self.config_file = self.config_dir / "jp" / "config.toml"
        env = sealed_env(
            self.root,
            self.store,
            self.config_dir,
            "Tess Ter",
            "tess@example.invalid",
            {"COLUMNS": "120"},
        )
        (self.root / "home").mkdir(exist_ok=True)
        self.env = env

    # -- the model ---------------------------------------------------------------

    def connect(self, env: Mapping[str, str], model: str = "anthropic/claude-test") -> None:
        """Point the real SDK at a fake (its ``env()``) and make ``model`` the default."""
        self.env.update(env)
        if model:
            self.config(f'[assistant.model]\nid = "{model}"\n')

    def config(self, text: str) -> None:
        self.config_file.write_text(text)

    # -- running jp ----------------------------------------------------------------

    def run(
        self,
        *args: str,
        input: str = "",
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        drop: Sequence[str] = (),
    ) -> subprocess.CompletedProcess[str]:
        """Run jp; ``env`` adds variables, ``drop`` removes some of the user's."""
        clock = pinned_clock(self.runs) if self.pinned else {}
        self.runs += 1
        merged = {k: v for k, v in {**self.env, **clock, **(env or {})}.items() if k not in drop}
        proc = subprocess.run(
            [str(JP), *args],
            env=merged,
            cwd=cwd or self.root,
            input=input,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        assert TRACEBACK not in proc.stderr + proc.stdout, (
            f"`jp {' '.join(args)}` printed a traceback:\n{proc.stderr}"
        )
        return proc

    def ok(self, *args: str, input: str = "", env: Mapping[str, str] | None = None) -> str:
        proc = self.run(*args, input=input, env=env)
        assert proc.returncode == 0, (
            f"`jp {' '.join(args)}` exited {proc.returncode}\n"
            f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
        )
        return proc.stdout

    def fail(
        self,
        *args: str,
        input: str = "",
        code: int | None = None,
        env: Mapping[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """An expected failure: non-zero exit, an `error:` line, no traceback."""
        proc = self.run(*args, input=input, env=env)
        assert proc.returncode != 0, (
            f"`jp {' '.join(args)}` should have failed\n"
            f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
        )
        if code is not None:
            assert proc.returncode == code, (proc.returncode, proc.stderr)
        assert proc.stderr.strip(), f"`jp {' '.join(args)}` failed without a message"
        assert "internal error" not in proc.stderr, proc.stderr
        return proc

    def json(self, *args: str) -> Any:
        return json.loads(self.ok("--format", "json", *args))

    def show(self, target: str | None = None) -> dict[str, Any]:
        data = self.json("conversation", "show", *([target] if target else []))
        assert isinstance(data, dict), data
        return data

    def ls(self, *flags: str) -> list[dict[str, Any]]:
        rows = self.json("conversation", "ls", *flags)
        assert isinstance(rows, list)
        return rows

    def import_(self, *folders: Path) -> str:
        """Import folders; returns the last new id."""
        found = ID.findall(self.ok("conversation", "import", *map(str, folders)))
        assert len(found) == len(folders), found
        return str(found[-1])

    def active(self) -> str:
        return str(self.show()["id"])

    # -- reading the store with git ------------------------------------------------------

    def ref(self, name: str) -> str | None:
        return self.git("rev-parse", "--verify", "--quiet", name, check=False).strip() or None

    def tip(self, cid: str) -> str:
        for name in (f"refs/conversations/{cid}", f"refs/archive/conversations/{cid}"):
            found = self.ref(name)
            if found:
                return found
        raise AssertionError(f"no ref for {cid}")

    def commits(self, cid: str) -> list[str]:
        """The conversation's commits, oldest first."""
        return self.git("rev-list", "--reverse", self.tip(cid)).split()

    def event(self, commit: str) -> dict[str, Any]:
        data = json.loads(self.git("show", f"{commit}:event.json"))
        assert isinstance(data, dict)
        return data

    def events(self, cid: str) -> list[dict[str, Any]]:
        """Every event of the chain, oldest first (one `git log`, one `cat-file`)."""
        return self.chain_events(self.tip(cid))

    def kinds(self, cid: str) -> list[str]:
        return [str(e["type"]) for e in self.events(cid)]

    def anchor(self, cid: str) -> str:
        return self.git("hash-object", "--stdin", input=f"jp-conversation {cid}\n").strip()

    def note(self, ref: str, cid: str) -> str | None:
        proc = subprocess.run(
            ["git", "--git-dir", str(self.store), "notes", f"--ref={ref}", "show", self.anchor(cid)],
            env=self.env,
            capture_output=True,
            text=True,
        )
        return proc.stdout if proc.returncode == 0 else None

    def fsck(self) -> None:
        # jp may have started `git gc --auto` in the background; a concurrent fsck
        # sees objects move into packs and reports them missing
        deadline = time.monotonic() + 60
        while (self.store / "gc.pid").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        proc = subprocess.run(
            ["git", "--git-dir", str(self.store), "fsck", "--strict", "--no-progress"],
            env=self.env,
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "error" not in (proc.stdout + proc.stderr).lower(), proc.stdout + proc.stderr

    def snapshot(self) -> dict[str, str]:
        """Every ref, for "nothing changed" checks."""
        return self.refs()


def ids_in(text: str) -> list[str]:
    return ID.findall(text)


def request_text(body: Mapping[str, Any]) -> str:
    """Everything one Messages API request shows the model, as text."""
    system = body.get("system") or ""
    if not isinstance(system, str):
        system = "\n".join(str(b.get("text", "")) for b in system)
    return system + "\n" + "\n".join(_content_text(m.get("content")) for m in body["messages"])


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content or []:
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind == "tool_use":
            parts.append(json.dumps(block.get("input"), ensure_ascii=False))
        elif kind == "tool_result":
            parts.append(_content_text(block.get("content", "")))
        elif kind == "thinking":
            parts.append(str(block.get("thinking", "")))
    return "\n".join(parts)


def blocks(body: Mapping[str, Any], kind: str) -> list[dict[str, Any]]:
    """Every content block of ``kind`` in a request, in order."""
    found: list[dict[str, Any]] = []
    for message in body["messages"]:
        content = message.get("content")
        if isinstance(content, list):
            found += [b for b in content if b.get("type") == kind]
    return found


def user_texts(body: Mapping[str, Any]) -> list[str]:
    """The text blocks of the user messages, in order."""
    out: list[str] = []
    for message in body["messages"]:
        if message["role"] != "user":
            continue
        content = message["content"]
        if isinstance(content, str):
            out.append(content)
        else:
            out += [str(b["text"]) for b in content if b.get("type") == "text"]
    return out


def tool_use(name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": arguments}


def write_conversation(
    folder: Path,
    turns: int,
    *,
    tools_every: int = 2,
    tool_bytes: int = 0,
    title: str = "synthetic",
) -> Path:
    """A JP folder of ``turns`` turns with marked tokens: <<Q07>> is turn 7's
    request, <<A07>> its answer, <<R07>> its reasoning, <<T07>> its tool result."""
    import base64

    def b64(text: str) -> str:
        return base64.b64encode(text.encode()).decode()

    events: list[dict[str, Any]] = []
    second = 0

    def at() -> str:
        nonlocal second
        second += 3
        return f"2026-02-01 10:{second // 60:02d}:{second % 60:02d}.5"

    for n in range(1, turns + 1):
        tag = f"{n:02d}"
        events.append({"type": "turn_start", "timestamp": at()})
        events.append({"type": "chat_request", "timestamp": at(), "content": f"Q{tag} <<Q{tag}>>"})
        events.append(
            {
                "type": "chat_response",
                "timestamp": at(),
                "reasoning": f"thinking <<R{tag}>>",
                "metadata": {"anthropic_thinking_signature": b64(f"sig-{tag}")},
            }
        )
        if tools_every and n % tools_every == 0:
            events.append(
                {
                    "type": "tool_call_request",
                    "timestamp": at(),
                    "id": f"toolu_{tag}",
                    "name": "fs_read_file",
                    "arguments": {"path": b64(f"src/f{tag}.rs")},
                }
            )
            events.append(
                {
                    "type": "tool_call_response",
                    "timestamp": at(),
                    "id": f"toolu_{tag}",
                    "content": b64(f"contents <<T{tag}>>" + "\nfiller line" * (tool_bytes // 12)),
                    "is_error": False,
                }
            )
        events.append(
            {"type": "chat_response", "timestamp": at(), "message": f"A{tag} <<A{tag}>>"}
        )
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "events.json").write_text(json.dumps(events, indent=2) + "\n")
    meta = {"title": title, "last_activated_at": events[-1]["timestamp"]}
    (folder / "metadata.json").write_text(json.dumps(meta, indent=2) + "\n")
    return folder


@contextlib.contextmanager
def warm_runtime(user: User) -> Iterator[Path]:
    """The user's queries go through a warm model process of their own: a short
    private runtime folder (a socket path must stay short), stopped afterwards."""
    run = Path(tempfile.mkdtemp(prefix="jpw-", dir="/tmp"))
    user.env.update({"JP_WARM": "1", "XDG_RUNTIME_DIR": str(run)})
    try:
        yield run
    finally:
        user.run("model", "stop")
        shutil.rmtree(run, ignore_errors=True)
