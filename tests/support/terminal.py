"""Running `jp` on a pseudo-terminal: stdin, stdout and stderr all on one pty,
as in a user's terminal window (TERM=xterm, NO_COLOR unset, PAGER=cat)."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from tests.support.sandbox import JP, TIMEOUT


def run_on_terminal(args: Sequence[str], env: Mapping[str, str], cwd: Path) -> tuple[int, bytes]:
    """``jp ARGS`` with every standard stream on a pty; (exit code, every byte shown)."""
    shown = dict(env, TERM="xterm", PAGER="cat")
    shown.pop("NO_COLOR", None)
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [str(JP), *args], stdin=slave, stdout=slave, stderr=slave, env=shown, cwd=cwd
    )
    os.close(slave)
    out = bytearray()
    deadline = time.monotonic() + TIMEOUT  # a hung jp fails the test instead of hanging it
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: every writer of the terminal has gone
                    break
                if not data:
                    break
                out += data
            elif proc.poll() is not None:
                break
        else:
            proc.kill()
            raise AssertionError(f"`jp {' '.join(args)}` did not finish: {bytes(out)!r}")
    finally:
        os.close(master)
    return proc.wait(timeout=TIMEOUT), bytes(out)


def raw_controls(data: bytes) -> list[str]:
    """Control characters a terminal acts on, in what it was sent (the pty turns
    each newline into CR LF, so CR before LF does not count)."""
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n")
    return [c for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F]


# the styles jp itself writes (ls: the unique prefix of an id bold, the rest dim)
_JP_STYLES = (b"\x1b[1;35m", b"\x1b[2m", b"\x1b[0m")


def without_styles(data: bytes) -> bytes:
    """``data`` without jp's own styling sequences, so what is left can be checked
    for control characters that came from untrusted text."""
    for style in _JP_STYLES:
        data = data.replace(style, b"")
    return data


class Terminal:
    """An interactive pseudo-terminal session, as a person at a terminal has one:
    the program is the leader of its own session with the pty as its controlling
    terminal (so `/dev/tty` works), ``send`` types, ``expect`` waits for text."""

    def __init__(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        cwd: Path,
        columns: int = 100,
        rows: int = 40,
    ) -> None:
        import fcntl
        import struct
        import termios

        shown = dict(env, TERM="xterm", PAGER="cat", COLUMNS=str(columns), LINES=str(rows))
        shown.pop("NO_COLOR", None)
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))

        def own_terminal() -> None:  # runs in the child, after setsid
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.proc = subprocess.Popen(
            list(argv),
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=shown,
            cwd=cwd,
            start_new_session=True,
            preexec_fn=own_terminal,  # noqa: PLW1509 (the test process forks nothing else meanwhile)
        )
        os.close(slave)
        self.seen = bytearray()

    def send(self, text: str) -> None:
        os.write(self.master, text.encode())

    def _read(self, wait: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], wait)
        if not ready:
            return True
        try:
            data = os.read(self.master, 65536)
        except OSError:  # EIO: every writer of the terminal has gone
            return False
        self.seen += data
        return bool(data)

    def expect(self, needle: bytes, timeout: float = TIMEOUT) -> bytes:
        """Wait until ``needle`` has been shown; everything shown so far."""
        deadline = time.monotonic() + timeout
        while needle not in self.seen:
            if time.monotonic() > deadline or not self._read(0.1):
                raise AssertionError(f"never shown: {needle!r}; shown: {bytes(self.seen)!r}")
        return bytes(self.seen)

    def finish(self, timeout: float = TIMEOUT) -> tuple[int, bytes]:
        """Read until the program ends; (exit code, everything shown)."""
        deadline = time.monotonic() + timeout
        while True:
            ready, _, _ = select.select([self.master], [], [], 0.1)
            if ready:
                try:
                    data = os.read(self.master, 65536)
                except OSError:  # EIO: every writer of the terminal has gone
                    break
                if not data:
                    break
                self.seen += data
            elif self.proc.poll() is not None:
                break
            elif time.monotonic() > deadline:
                self.proc.kill()
                raise AssertionError(f"did not finish: {bytes(self.seen)!r}")
        os.close(self.master)
        return self.proc.wait(timeout=timeout), bytes(self.seen)


_SEQUENCE = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b[^\[]")


def screen(data: bytes) -> list[str]:
    """The lines a terminal would show after ``data``, as far as jp drives one: text,
    CR (back to the first column), LF, styles dropped; a later write overwrites what
    an earlier one left in its columns, so an erased spinner leaves only spaces."""
    rows: list[list[str]] = [[]]
    column = 0
    for char in _SEQUENCE.sub(b"", data).decode("utf-8", errors="replace"):
        row = rows[-1]
        if char == "\n":
            rows.append([])
            column = 0
        elif char == "\r":
            column = 0
        elif char == "\b":
            column = max(0, column - 1)
        else:
            row.extend(" " * (column + 1 - len(row)))
            row[column] = char
            column += 1
    return ["".join(row).rstrip() for row in rows]
