"""Running one command tool with every resource bounded.

The command gets its arguments on stdin and runs in a process group of its
own.  Its stdout is kept up to ``cap`` bytes (the event limit: what the store
could keep) and read on past that without being kept, so a tool that prints
300 MB costs no more memory than one that prints the limit; its stderr keeps
its last ``STDERR_TAIL`` bytes.  At the timeout the whole group is killed,
and once the command itself has exited, a child it left holding the output
gets ``EXIT_GRACE`` seconds before it is killed too, so no wait is unbounded.

What it printed is bytes: ``decoded`` turns them into text, replacing what
is not UTF-8 and saying so.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import selectors
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from porcelain import clock

STDERR_TAIL = 64 * 1024
EXIT_GRACE = 0.5
_CHUNK = 1 << 16
_REPLACEMENT = "\ufffd".encode()


@dataclass
class Captured:
    """What one run printed (bounded) and how it ended."""

    stdout: bytearray = field(default_factory=bytearray)
    stdout_total: int = 0
    stderr: bytearray = field(default_factory=bytearray)
    returncode: int | None = None
    timed_out: bool = False


def capture(
    argv: Sequence[str], stdin: bytes, env: Mapping[str, str], timeout: float, cap: int
) -> Captured:
    """Run ``argv`` to its end or ``timeout``; OSError when it cannot start."""
    proc = subprocess.Popen(
        list(argv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(env),
        start_new_session=True,  # its own group: killed whole, children included
    )
    out = Captured()
    try:
        _pump(proc, stdin, out, clock.monotonic() + timeout, cap)
    finally:
        if proc.poll() is None or out.timed_out:
            _kill_group(proc)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
        _kill_group(proc)  # what it left behind holding a pipe
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
    out.returncode = proc.returncode
    return out


def _pump(
    proc: subprocess.Popen[bytes], stdin: bytes, out: Captured, deadline: float, cap: int
) -> None:
    assert proc.stdin and proc.stdout and proc.stderr
    selector = selectors.DefaultSelector()
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        os.set_blocking(pipe.fileno(), False)
    pending = memoryview(stdin)
    if pending:
        selector.register(proc.stdin, selectors.EVENT_WRITE)
    else:
        proc.stdin.close()
    selector.register(proc.stdout, selectors.EVENT_READ)
    selector.register(proc.stderr, selectors.EVENT_READ)
    exited_at: float | None = None
    reading = {proc.stdout.fileno(), proc.stderr.fileno()}
    with selector:
        while reading & set(selector.get_map()):
            now = clock.monotonic()
            if now >= deadline:
                out.timed_out = True
                return
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at >= EXIT_GRACE:
                return  # the command is done; a child of its holds the output
            wait = min(deadline - now, EXIT_GRACE if exited_at is None else EXIT_GRACE / 5)
            for key, _ in selector.select(wait):
                if key.fileobj is proc.stdin:
                    pending = _feed(proc, selector, pending)
                else:
                    _drain(key.fileobj, selector, out, cap, proc)


def _feed(
    proc: subprocess.Popen[bytes], selector: selectors.BaseSelector, pending: memoryview
) -> memoryview:
    assert proc.stdin
    try:
        sent = os.write(proc.stdin.fileno(), pending[:_CHUNK])
    except BlockingIOError:
        return pending
    except OSError:  # it does not read its stdin (or exited): what it got is enough
        sent = len(pending)
    pending = pending[sent:]
    if not pending:
        selector.unregister(proc.stdin)
        proc.stdin.close()
    return pending


def _drain(
    pipe: object,
    selector: selectors.BaseSelector,
    out: Captured,
    cap: int,
    proc: subprocess.Popen[bytes],
) -> None:
    fd = pipe.fileno()  # type: ignore[attr-defined]
    try:
        chunk = os.read(fd, _CHUNK)
    except BlockingIOError:
        return
    except OSError:
        chunk = b""
    if not chunk:
        selector.unregister(pipe)  # type: ignore[arg-type]
        return
    if pipe is proc.stdout:
        out.stdout_total += len(chunk)
        room = cap - len(out.stdout)
        if room > 0:
            out.stdout += chunk[:room]
    else:
        out.stderr += chunk
        if len(out.stderr) > STDERR_TAIL:
            del out.stderr[: len(out.stderr) - STDERR_TAIL]


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)


def decoded(data: bytes, cut: bool) -> tuple[str, int]:
    """``data`` as text, and how many of its bytes were not UTF-8 (each shown as
    U+FFFD).  When ``cut``, a character the cut split at the end is dropped."""
    try:
        text = codecs.getincrementaldecoder("utf-8")("strict").decode(data, final=not cut)
        return text, 0
    except UnicodeDecodeError:
        pass
    invalid = 0

    def count(exc: UnicodeError) -> tuple[str, int]:
        nonlocal invalid
        assert isinstance(exc, UnicodeDecodeError)
        invalid += exc.end - exc.start
        return "\ufffd", exc.end

    name = "jp-count-invalid"
    codecs.register_error(name, count)
    text = codecs.getincrementaldecoder("utf-8")(name).decode(data, final=not cut)
    return text, invalid
