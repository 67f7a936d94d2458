"""Another tool's own configuration file, edited in place by `jp mcp install` and
`jp hooks install` (Claude Code's JSON, Codex's TOML and JSON).

What they share: where the files are, reading one (a missing file is empty; one
that does not parse, or is not a table at the top, is a `UserError` and is never
rewritten), writing it back whole (TOML through tomlkit, so comments and layout
survive; JSON indented as the tools write it; the file's mode kept, through a
symbolic link to the file it names), and jp's record, beside its own
config.toml, of what each install added and what was there before, which the
uninstall reads to take back exactly that.
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitstore import files
from porcelain.domain.places import user_config_path
from porcelain.errors import UserError

MAX_BYTES = 64 << 20  # ~/.claude.json keeps every project's state: megabytes, not more
LOCK = "tool-files.lock"  # beside jp's config.toml: one jp at a time edits tools' files
WAIT = 10.0  # seconds another jp's edit is waited for


@dataclass(frozen=True)
class ToolFile:
    tool: str  # claude-code or codex
    path: Path

    @property
    def toml(self) -> bool:
        return self.path.suffix == ".toml"


def _home(environ: Mapping[str, str]) -> Path:
    return Path(environ.get("HOME") or Path.home())


def claude_dir(environ: Mapping[str, str]) -> Path | None:
    """``$CLAUDE_CONFIG_DIR`` when set (None: the defaults, which differ per file)."""
    folder = environ.get("CLAUDE_CONFIG_DIR")
    return Path(folder) if folder else None


def claude_settings(environ: Mapping[str, str]) -> Path:
    """Claude Code's user settings: ``~/.claude/settings.json``."""
    return (claude_dir(environ) or _home(environ) / ".claude") / "settings.json"


def claude_state(environ: Mapping[str, str]) -> Path:
    """Claude Code's own state, user-scope MCP servers among it: ``~/.claude.json``."""
    folder = claude_dir(environ)
    return folder / ".claude.json" if folder else _home(environ) / ".claude.json"


def codex_home(environ: Mapping[str, str]) -> Path:
    codex = environ.get("CODEX_HOME")
    return Path(codex) if codex else _home(environ) / ".codex"


# -- one jp at a time ---------------------------------------------------------------------


@contextmanager
def editing(environ: Mapping[str, str], wait: float = WAIT) -> Iterator[None]:
    """Held while an install or uninstall reads and writes a tool's file and jp's
    record of it: two jp at once would each write what it read, and the second
    would drop the first's entry or its record (the uninstall could not take it
    back).  An ``flock`` the kernel drops when its holder dies, so a killed jp
    leaves no stale lock; waited for up to ``wait`` seconds."""
    path = user_config_path(environ).parent / LOCK
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise UserError(f"cannot lock {path}: {exc}") from None
    try:
        for attempt in files.retry_until(wait, 0.05):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if attempt.last:
                    raise UserError(
                        f"another jp is editing a tool's files ({path} is locked)",
                        "run the command again when it is done",
                    ) from None
        yield
    finally:
        os.close(fd)  # the lock goes with the descriptor


# -- the other tool's file ---------------------------------------------------------------


def load(file: ToolFile) -> tuple[Any, str | None]:
    """The parsed file (an empty one when it is missing) and its text."""
    text = _read(file)
    if file.toml:
        # lazy: tomlkit only for Codex's config.toml (`jp status` reads JSON ones)
        from porcelain.config import tomldoc

        try:
            doc: Any = tomldoc.parse(text or "")
        except ValueError as exc:
            raise invalid(file, f"{file.path} is not valid TOML: {exc}") from None
    else:
        try:
            doc = json.loads(text) if text and text.strip() else {}
        except ValueError as exc:
            raise invalid(file, f"{file.path} is not valid JSON: {exc}") from None
        if not isinstance(doc, dict):
            raise invalid(file, f"{file.path} does not hold a JSON object")
    return doc, text


def _read(file: ToolFile) -> str | None:
    """The file's text (None: missing); never a FIFO or a device, nothing huge."""
    try:
        with open(file.path, "rb", opener=_nonblocking) as handle:
            found = os.fstat(handle.fileno())
            if not stat.S_ISREG(found.st_mode):
                raise invalid(file, f"{file.path} is not a regular file")
            if found.st_size > MAX_BYTES:
                raise invalid(file, f"{file.path} is larger than {MAX_BYTES >> 20} MiB")
            return handle.read(MAX_BYTES + 1).decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read {file.path}: {exc}") from None


def _nonblocking(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_NONBLOCK)  # a FIFO's open must not wait for a writer


def invalid(file: ToolFile, message: str) -> UserError:
    """``file`` refused as it is, with ``message``."""
    return UserError(message, f"fix it by hand (jp left {file.path} as it was)")


def save(file: ToolFile, doc: Any, before: str | None) -> None:
    """``doc`` as the file's whole text; its mode kept (0600 for a new one)."""
    if file.toml:
        # lazy: tomlkit only for Codex's config.toml
        from porcelain.config import tomldoc

        text = tomldoc.dumps(doc)
    else:
        text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    path = Path(os.path.realpath(file.path))  # a linked file (dotfiles) stays linked
    if _read(file) != before:  # the tool (or you) wrote it since jp read it
        raise UserError(
            f"{file.path} changed while jp was editing it; jp left it as it is now",
            "run the command again",
        )
    mode = None
    if before is not None:
        mode = path.stat().st_mode & 0o7777  # ~/.claude.json holds credentials: 0600
    files.write_atomic(path, text, durable=True, mode=mode if mode is not None else 0o600)


def remove(file: ToolFile) -> None:
    """The file gone (one jp made and that holds nothing of anyone's now)."""
    try:
        Path(os.path.realpath(file.path)).unlink(missing_ok=True)
    except OSError as exc:
        raise UserError(f"cannot remove {file.path}: {exc}") from None


def plain(value: Any) -> Any:
    """A tomlkit item as plain Python (JSON values are plain already)."""
    # lazy: tomlkit only where a TOML file is edited
    from porcelain.config import tomldoc

    return tomldoc.plain(value)


# -- jp's record of its installs ---------------------------------------------------------


@dataclass(frozen=True)
class Records:
    """``name`` beside jp's own config.toml: per tool, what ``command`` installed."""

    name: str  # mcp-installed.json, hooks-installed.json
    command: str  # `jp mcp install`, for the messages

    def path(self, environ: Mapping[str, str]) -> Path:
        return user_config_path(environ).parent / self.name

    def read(self, environ: Mapping[str, str]) -> dict[str, Any]:
        path = self.path(environ)
        try:
            found = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise UserError(
                f"cannot read {path}: {exc}",
                f"it records what `{self.command}` changed; fix or remove it",
            ) from None
        return found if isinstance(found, dict) else {}

    def keep(self, environ: Mapping[str, str], records: dict[str, Any]) -> None:
        path = self.path(environ)
        path.parent.mkdir(parents=True, exist_ok=True)
        files.write_atomic(path, json.dumps(records, indent=2, sort_keys=True) + "\n")
