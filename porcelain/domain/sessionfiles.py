"""Where other tools keep their sessions, and each file's path relative to the tool's root.

- Claude Code: the root is ``~/.claude/projects`` (``$CLAUDE_CONFIG_DIR/projects``);
  a session is ``<project>/<session>.jsonl``, a subagent stream
  ``<project>/<session>/subagents/agent-*.jsonl`` (older versions:
  ``<project>/agent-*.jsonl``).
- Codex: the root is ``$CODEX_HOME`` (``~/.codex``); rollouts are
  ``sessions/YYYY/MM/DD/rollout-*.jsonl`` and ``archived_sessions/rollout-*.jsonl``.

A PATH may be the root, a folder inside it or one file: the relative path is
the same whichever was given.  ``rel_path_problem`` checks a relative path read
back from a stored conversation (it may come from a remote) before export
writes anything at it.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path, PurePosixPath
from typing import BinaryIO, NamedTuple

from porcelain.errors import UserError

_DAY = r"^rollout-(\d{4})-(\d{2})-(\d{2})T"  # compiled when first used (re's cache)
_CODEX_TOP = ("sessions", "archived_sessions")
NAMES = {"claude-code": "Claude Code", "codex": "Codex"}


class Found(NamedTuple):
    path: Path  # where the file is
    rel: str  # relative to the tool's root, with ``/``
    agent: bool  # a Claude Code subagent stream


CREDENTIALS = frozenset({".credentials.json", "credentials.json", "auth.json", ".env"})


def open_session(path: Path) -> BinaryIO:
    """``path`` open for reading, refused unless it is a regular file (a FIFO or a
    device would block or never end)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def refusal(path: Path, root: Path) -> str | None:
    """Why a session file found under ``root`` is not read (None: it is): a link (of
    the file or a folder on the way) that leads out of the root, a tool's own
    credential file, anything but a regular file."""
    try:
        top = root.resolve(strict=True)
    except (OSError, RuntimeError):
        return _UNRESOLVED
    return _refused(path, root, top)[0]


_UNRESOLVED = "cannot be resolved (a broken or looping link)"


def _refused(path: Path, root: Path, top: Path | None) -> tuple[str | None, Path | None]:
    """``refusal`` of ``path``, with ``root`` resolved already (``top``; None: it could
    not be), and the file's resolved path."""
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return _UNRESOLVED, None
    if top is None:
        return _UNRESOLVED, real
    if real.name in CREDENTIALS or path.name in CREDENTIALS:
        return "a credential file: never imported", real
    if top != real and top not in real.parents:
        return f"a link out of {root}: never followed", real
    try:
        if not stat.S_ISREG(real.stat().st_mode):
            return "not a regular file", real
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}", real
    return None, real


def claude_deeper(target: Path) -> list[Path]:
    """Session files one folder deeper than ``claude_files`` reads under ``target``
    (``~/.claude`` given for ``~/.claude/projects``, say): not imported, so named."""
    if not target.is_dir() or target.name == "subagents":
        return []
    folders = (
        [target] if _project_files(target) else sorted(p for p in target.iterdir() if p.is_dir())
    )
    return [
        f
        for folder in folders
        for f in sorted(folder.glob("*/*.jsonl"))
        if f.parent.name != "subagents" and f.is_file()
    ]


def _claude_rel(path: Path) -> str:
    if path.parent.name == "subagents" and len(path.parents) >= 3:
        return f"{path.parents[2].name}/{path.parents[1].name}/subagents/{path.name}"
    return f"{path.parent.name or 'project'}/{path.name}"


def _claude_found(path: Path) -> Found:
    rel = _claude_rel(path)
    return Found(path, rel, path.parent.name == "subagents" or path.name.startswith("agent-"))


def _project_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.jsonl")) + sorted(folder.glob("*/subagents/*.jsonl"))


def claude_files(target: Path) -> list[Found]:
    """The session files of a root, a project folder or one file; sessions before subagents."""
    if not target.is_dir():
        return [_claude_found(target)]
    if target.name == "subagents":
        files = sorted(target.glob("*.jsonl"))
    elif _project_files(target):
        files = _project_files(target)
    else:
        files = [
            f
            for sub in sorted(p for p in target.iterdir() if p.is_dir())
            for f in _project_files(sub)
        ]
    found = [_claude_found(f) for f in files if f.is_file()]
    return [f for f in found if not f.agent] + [f for f in found if f.agent]


def _codex_rel(path: Path) -> str:
    for up in path.parents:
        if up.name in _CODEX_TOP:
            return path.relative_to(up.parent).as_posix()
    day = re.match(_DAY, path.name)
    return f"sessions/{'/'.join(day.groups())}/{path.name}" if day else f"sessions/{path.name}"


def codex_files(target: Path) -> list[Found]:
    """The rollouts of ``$CODEX_HOME``, a folder inside it or one file."""
    if not target.is_dir():
        return [Found(target, _codex_rel(target), False)]
    tops = [target / name for name in _CODEX_TOP if (target / name).is_dir()]
    files = [f for top in tops or [target] for f in sorted(top.rglob("*.jsonl"))]
    return [Found(f, _codex_rel(f), False) for f in files if f.is_file()]


def rel_path_problem(rel: object) -> str | None:
    """Why ``rel`` may not be written under an export folder (None when it may)."""
    if not isinstance(rel, str) or not rel or len(rel) > 1024:
        return "no relative path"
    if "\\" in rel or "\0" in rel or any(ord(c) < 32 for c in rel):
        return "a path with a control character or backslash"
    pure = PurePosixPath(rel)
    if pure.is_absolute() or any(part in ("", ".", "..") for part in rel.split("/")):
        return "not a plain relative path"
    if pure.suffix != ".jsonl":
        return "not a .jsonl file"
    return None


def detect(path: Path) -> str | None:
    """``claude-code``, ``codex`` or ``jp`` for what ``path`` holds (None: none of them)."""
    if path.is_dir():
        if (path / "events.json").is_file():
            return "jp"
        if any((path / name).is_dir() for name in _CODEX_TOP) or path.name in _CODEX_TOP:
            return "codex"
        first = next(iter(claude_files(path)), None)
        return None if first is None else _sniff(first.path)
    return _sniff(path) if path.is_file() else None


def _sniff(path: Path) -> str | None:
    """A file's tool, from its first line (Codex records are ``{timestamp, type, payload}``)."""
    try:
        with open(path, "rb") as handle:
            head = handle.readline(1 << 20)
    except OSError:
        return None
    if b'"payload"' in head and b'"type"' in head:
        return "codex"
    return "claude-code" if head.lstrip().startswith(b"{") else None


def default_roots(tool: str) -> list[Path]:
    """The tool's own location: ``$CLAUDE_CONFIG_DIR/projects`` or ``~/.claude/projects``;
    ``$CODEX_HOME`` (``~/.codex``), whose ``sessions`` and ``archived_sessions`` are read."""
    if tool == "claude-code":
        base = os.environ.get("CLAUDE_CONFIG_DIR")
        return [Path(base) / "projects" if base else Path.home() / ".claude" / "projects"]
    base = os.environ.get("CODEX_HOME")
    return [Path(base) if base else Path.home() / ".codex"]


def find_files(
    tool: str,
    paths: tuple[Path, ...],
    refused: list[str] | None = None,
    deeper: list[Path] | None = None,
) -> list[Found]:
    """The session files under ``paths`` (else the tool's own location), sessions
    before subagents; each one ``refusal`` names is left out and named in ``refused``,
    and Claude Code files one folder deeper than those read are added to ``deeper``."""
    given = bool(paths)
    roots = list(paths) or default_roots(tool)
    files: list[tuple[Found, Path]] = []
    for root in roots:
        if not root.exists():
            where = "" if given else f" ({NAMES[tool]}'s own location)"
            raise UserError(
                f"{root}: no such file or folder{where}",
                f"give the folder {NAMES[tool]} keeps its sessions in: "
                "jp conversation import --from " + tool + " PATH",
            )
        if not root.is_dir() and not root.is_file():
            raise UserError(
                f"{root}: not a session file or a folder (a FIFO or a device is never read)",
                f"give the folder {NAMES[tool]} keeps its sessions in, or one of its files",
            )
        top = root if root.is_dir() else root.parent
        if deeper is not None and tool == "claude-code":
            deeper += claude_deeper(root)
        try:
            real_top: Path | None = top.resolve(strict=True)  # once, not once a file
        except (OSError, RuntimeError):
            real_top = None
        for found in claude_files(root) if tool == "claude-code" else codex_files(root):
            why, real = _refused(found.path, top, real_top)
            if why is None and real is not None:
                files.append((found, real))
            elif refused is not None:
                refused.append(f"{found.path}: {why}")
    seen: set[Path] = set()
    unique = []
    for found, key in files:  # the same file by two paths (a link) is read once
        if key not in seen:
            seen.add(key)
            unique.append(found)
    return [f for f in unique if not f.agent] + [f for f in unique if f.agent]
