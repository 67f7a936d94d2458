"""Running `jp` on a pseudo-terminal: stdin, stdout and stderr all on one pty,
as in a user's terminal window (TERM=xterm, NO_COLOR unset, PAGER=cat)."""

from __future__ import annotations

import os
import pty
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
