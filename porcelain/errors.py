"""Errors a user sees, and their exit codes.  ``cli.main`` is the one place that
turns them (and the store's typed errors) into an ``error: ...`` line."""

from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    OK = 0
    USER = 1
    USAGE = 2
    CONFIG = 3
    PROVIDER = 4
    INTERRUPTED = 130
    INTERNAL = 255


class JpError(Exception):
    """An expected failure: one line of message, an optional next step."""

    exit_code: int = Exit.USER

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class UserError(JpError):
    """Bad input or a state that refuses the operation (not found, blocked, ...)."""


class UsageError(JpError):
    """Flags that do not go together, values that do not parse."""

    exit_code = Exit.USAGE


class ConfigError(JpError):
    """Configuration that cannot be read; the message names the file and key."""

    exit_code = Exit.CONFIG


class ProviderError(JpError):
    """The model provider failed (after the SDK's retries)."""

    exit_code = Exit.PROVIDER


class FaultError(JpError):
    """The machine refused: a read-only or full disk, a path that is not a folder."""


class Interrupted(JpError):
    """Ctrl-C: the message says what was kept (printed as is, not as an error)."""

    exit_code = Exit.INTERRUPTED


class Declined(JpError):
    """The user answered no at a prompt: nothing was changed."""


class NoAnswer(Declined):
    """A confirmation nobody could answer (stdin closed or not a terminal): a no."""
