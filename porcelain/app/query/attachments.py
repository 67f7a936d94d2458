"""`jp q -a PATH|GLOB|-` and `--attach-cmd CMD`: what a query attaches.

An attachment is read once, when the query runs, and recorded in the
request event (``attachments``: kind, source, content), so the history says
exactly what the model was shown and a later turn sends the same bytes.
Everything read here is untrusted data: only UTF-8 text is taken, each
attachment is bounded (``MAX_BYTES``) and so is their sum (``MAX_TOTAL``),
a glob names at most ``MAX_FILES`` files, and a command runs without a
shell, without the provider's credentials, with no standard input and a
time limit.  Nothing here prints.
"""

from __future__ import annotations

import glob
import os
import selectors
import shlex
import stat
import subprocess
import sys
import threading
from typing import Any, BinaryIO

from porcelain.domain.escaping import untrusted_field
from porcelain.errors import UserError

KiB = 1024
MAX_BYTES = 512 * KiB
MAX_TOTAL = 2 * 1024 * KiB
MAX_FILES = 100
COMMAND_TIMEOUT = 60.0
_GLOB_CHARS = set("*?[")
# what a command the user attaches never sees: provider credentials
_SECRET_PREFIXES = ("ANTHROPIC_", "OPENAI_")


def collect(
    paths: tuple[str, ...], commands: tuple[str, ...], stdin: BinaryIO | None = None
) -> list[dict[str, Any]]:
    """Every attachment of a query, in the order given (files, then commands)."""
    found: list[dict[str, Any]] = []
    for path in paths:
        if path == "-":
            found.append(_attachment("stdin", "-", _read_stdin(stdin)))
        else:
            for name in _expand(path):
                found.append(_attachment("file", name, _read_file(name)))
    for command in commands:
        found.append(_attachment("command", command, _run(command)))
    total = sum(len(a["content"].encode()) for a in found)
    if total > MAX_TOTAL:
        raise UserError(
            f"the attachments hold {total // KiB} KiB; at most {MAX_TOTAL // KiB} KiB "
            "go with one query",
            "attach fewer or smaller files",
        )
    return found


def _attachment(kind: str, source: str, content: str) -> dict[str, Any]:
    return {"kind": kind, "source": source, "content": content}


def _expand(path: str) -> list[str]:
    if os.path.lexists(path) or not _GLOB_CHARS & set(path):
        return [path]
    names = sorted(n for n in glob.glob(path, recursive=True) if os.path.isfile(n))
    if not names:
        raise UserError(f"no file matches {untrusted_field(path)}", "check the pattern (-a)")
    if len(names) > MAX_FILES:
        raise UserError(
            f"{untrusted_field(path)} matches {len(names)} files; at most {MAX_FILES} "
            "are attached to one query",
            "narrow the pattern",
        )
    return names


def _decode(raw: bytes, what: str) -> str:
    if len(raw) > MAX_BYTES:
        raise UserError(
            f"{what} is larger than {MAX_BYTES // KiB} KiB, the most one attachment holds",
            "attach a part of it (for example with --attach-cmd 'head -c 100000 FILE')",
        )
    if b"\0" in raw:
        raise UserError(f"{what} is not text (it holds NUL bytes)", "attach text files only")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{what} is not UTF-8 text", "attach text files only") from None


def _read_file(path: str) -> str:
    shown = untrusted_field(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise UserError(f"no such file: {shown}", "check the path given to -a") from None
    except IsADirectoryError:
        raise UserError(
            f"{shown} is a directory", f"attach its files with a glob: -a '{shown}/*'"
        ) from None
    except OSError as exc:
        raise UserError(f"cannot read {shown}: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise UserError(
                f"{shown} is a directory", f"attach its files with a glob: -a '{shown}/*'"
            )
        if not stat.S_ISREG(info.st_mode):
            raise UserError(f"{shown} is not a regular file", "use -a - for a pipe or a device")
        with os.fdopen(fd, "rb", closefd=False) as stream:
            raw = stream.read(MAX_BYTES + 1)
    except OSError as exc:
        raise UserError(f"cannot read {shown}: {exc.strerror}") from None
    finally:
        os.close(fd)
    return _decode(raw, shown)


def _read_stdin(stdin: BinaryIO | None) -> str:
    source = stdin if stdin is not None else sys.stdin.buffer
    if getattr(source, "isatty", lambda: False)():
        raise UserError(
            "-a - attaches standard input, which is a terminal",
            "pipe the text in: `cmd | jp q -a - QUESTION`",
        )
    return _decode(source.read(MAX_BYTES + 1), "standard input")


def _environment() -> dict[str, str]:
    return {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(_SECRET_PREFIXES) and not k.endswith("_API_KEY")
    }


def _run(command: str) -> str:
    shown = untrusted_field(command)
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise UserError(f"cannot parse --attach-cmd {shown}: {exc}") from None
    if not argv:
        raise UserError("--attach-cmd needs a command", "for example --attach-cmd 'git diff'")
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_environment(),
        )
    except OSError as exc:
        raise UserError(f"cannot run {shown}: {exc.strerror or exc}") from None
    out, err, timed_out = _bounded_output(proc)
    if timed_out:
        raise UserError(
            f"{shown} did not finish within {COMMAND_TIMEOUT:.0f} s", "nothing was sent"
        )
    if len(out) > MAX_BYTES:
        return _decode(out, f"the output of {shown}")
    if proc.returncode != 0:
        last = err.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        detail = f": {untrusted_field(last[0][:200])}" if last[0] else ""
        raise UserError(f"{shown} exited with {proc.returncode}{detail}", "nothing was sent")
    return _decode(out, f"the output of {shown}")


def _bounded_output(proc: subprocess.Popen[bytes]) -> tuple[bytes, bytes, bool]:
    """Read at most MAX_BYTES + 1 of stdout (and 64 KiB of stderr); a command that
    passes the limit, or is still running after COMMAND_TIMEOUT, is killed."""
    assert proc.stdout is not None and proc.stderr is not None
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    buffers = {out_fd: bytearray(), err_fd: bytearray()}
    caps = {out_fd: MAX_BYTES + 1, err_fd: 64 * KiB}
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        proc.kill()

    timer = threading.Timer(COMMAND_TIMEOUT, expire)
    timer.start()
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(out_fd, selectors.EVENT_READ)
            selector.register(err_fd, selectors.EVENT_READ)
            while selector.get_map() and len(buffers[out_fd]) <= MAX_BYTES:
                for key, _ in selector.select():
                    fd = int(key.fd)
                    chunk = os.read(fd, 65536)
                    if not chunk:
                        selector.unregister(fd)
                        continue
                    buffers[fd] += chunk[: max(0, caps[fd] - len(buffers[fd]))]
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    finally:
        timer.cancel()
        proc.stdout.close()
        proc.stderr.close()
    return bytes(buffers[out_fd]), bytes(buffers[err_fd]), expired.is_set()
