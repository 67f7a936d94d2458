"""`jp q --attach-cmd CMD`: run a command and attach what it printed.

The command runs without a shell (its line is split as a shell would), with
no standard input, in a session and process group of its own, with the same
minimal environment as a command tool (``porcelain/config/toolenv.py``:
PATH, HOME, LANG, TMPDIR, TERM and ``LC_*``, never a provider's key, the
user's own ``[providers.NAME] api_key_env`` included), and for at most
``COMMAND_TIMEOUT`` seconds: then, or once its output passes the limit, the
whole group is killed, so a child left holding its output cannot keep jp
waiting.  Nothing here prints.
"""

from __future__ import annotations

import os
import selectors
import shlex
import signal
import subprocess
import threading

from porcelain.config.toolenv import PROVIDER_KEYS, tool_environment
from porcelain.domain.escaping import untrusted_field
from porcelain.errors import UserError

KiB = 1024
# the most read of its output: as much as the largest attachment (attachments.py)
MAX_OUTPUT = 3 * 1024 * KiB + 768 * KiB
COMMAND_TIMEOUT = 60.0
_GRACE = 0.5  # seconds of silence after the command ended before its output counts as done


def run_command(command: str, secrets: frozenset[str] = frozenset()) -> bytes:
    """The output of ``command`` (at most ``MAX_OUTPUT + 1`` bytes); raises
    ``UserError`` when it cannot run, fails or runs out of time."""
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
            env=tool_environment({}, os.environ, PROVIDER_KEYS | secrets),
            start_new_session=True,
        )
    except OSError as exc:
        raise UserError(f"cannot run {shown}: {exc.strerror or exc}") from None
    out, err, timed_out = _bounded_output(proc)
    if timed_out:
        raise UserError(
            f"{shown} did not finish within {COMMAND_TIMEOUT:.0f} s", "nothing was sent"
        )
    if len(out) <= MAX_OUTPUT and proc.returncode != 0:
        last = err.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        detail = f": {untrusted_field(last[0][:200])}" if last[0] else ""
        raise UserError(f"{shown} exited with {proc.returncode}{detail}", "nothing was sent")
    return out


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _bounded_output(proc: subprocess.Popen[bytes]) -> tuple[bytes, bytes, bool]:
    """Read at most MAX_OUTPUT + 1 of stdout (and 64 KiB of stderr); a command that
    passes the limit, or is still running after COMMAND_TIMEOUT, is killed with its
    whole process group (and so is anything it left behind when it ends)."""
    assert proc.stdout is not None and proc.stderr is not None
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    buffers = {out_fd: bytearray(), err_fd: bytearray()}
    caps = {out_fd: MAX_OUTPUT + 1, err_fd: 64 * KiB}
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        _kill_group(proc)

    timer = threading.Timer(COMMAND_TIMEOUT, expire)
    timer.start()
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(out_fd, selectors.EVENT_READ)
            selector.register(err_fd, selectors.EVENT_READ)
            while selector.get_map() and len(buffers[out_fd]) <= MAX_OUTPUT:
                ready = selector.select(timeout=_GRACE)
                if not ready and proc.poll() is not None:
                    break  # it ended; what still holds its output is left behind
                for key, _ in ready:
                    fd = int(key.fd)
                    chunk = os.read(fd, 65536)
                    if not chunk:
                        selector.unregister(fd)
                        continue
                    buffers[fd] += chunk[: max(0, caps[fd] - len(buffers[fd]))]
        _kill_group(proc)  # what is left of it: the command itself when over the limit
        proc.wait()
    finally:
        timer.cancel()
        proc.stdout.close()
        proc.stderr.close()
    return bytes(buffers[out_fd]), bytes(buffers[err_fd]), expired.is_set()
