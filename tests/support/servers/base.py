"""What both test servers share: a free loopback port, a process group of their
own that ends with the session, and the one line that says how to install them."""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path

HINT = "apt-get install openssh-server nginx fcgiwrap"
SBIN = ("/usr/sbin", "/sbin", "/usr/local/sbin")
LOOPBACK = "127.0.0.1"
START_TIMEOUT = 20.0


class ServerUnavailable(Exception):
    """A server cannot run here (a program is missing, or it would not start)."""


def program(name: str) -> str:
    """The absolute path of ``name`` (servers live in sbin, which PATH may lack)."""
    found = shutil.which(name) or shutil.which(name, path=os.pathsep.join(SBIN))
    if found is None:
        raise ServerUnavailable(f"{name} is not installed; to run these tests: {HINT}")
    return found


def free_port() -> int:
    """A loopback port nothing listens on now (the server binds it next; a clash
    with another worker is retried by ``start``)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


def listening(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((LOOPBACK, port)) == 0


def _die_with_parent() -> None:
    """In the child, before exec: a TERM when the test process that started it dies
    (a killed pytest would otherwise leave its servers running; Linux only)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


PR_SET_PDEATHSIG = 1


class Group:
    """Processes started in a session of their own, stopped together by their id."""

    def __init__(self, log: Path) -> None:
        self.log = log
        self.procs: list[subprocess.Popen[bytes]] = []

    def spawn(self, argv: Sequence[str], env: dict[str, str] | None = None) -> None:
        with self.log.open("ab") as out:
            self.procs.append(
                subprocess.Popen(
                    list(argv),
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=out,
                    env=env,
                    start_new_session=True,
                    preexec_fn=_die_with_parent,  # noqa: PLW1509 (runs before exec only)
                )
            )

    def wait_for(self, port: int, what: str) -> None:
        """Until ``port`` accepts connections; a process that exits first is an error."""
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            dead = [p for p in self.procs if p.poll() is not None]
            if dead:
                raise ServerUnavailable(f"{what} exited at start: {self.tail()}")
            if listening(port):
                return
            time.sleep(0.05)
        raise ServerUnavailable(f"{what} did not listen on {LOOPBACK}:{port}: {self.tail()}")

    def tail(self, count: int = 3) -> str:
        try:
            lines = self.log.read_text(errors="replace").strip().splitlines()
        except OSError:
            return "(no log)"
        return " | ".join(lines[-count:]) or "(nothing logged)"

    def stop(self) -> None:
        """Each process group, by the id of the process that leads it: TERM, then KILL."""
        for proc in self.procs:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)
        self.procs.clear()


def server_gitconfig(path: Path) -> Path:
    """The server side's own git configuration: nothing of the machine's, pushes allowed."""
    path.write_text("[http]\n\treceivepack = true\n[receive]\n\tdenyNonFastForwards = false\n")
    return path


class Dropper:
    """A loopback port that accepts each connection and closes it at once, as a
    server that drops its clients does (a context manager; ``port`` while open)."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind((LOOPBACK, 0))
        self.port = int(self.sock.getsockname()[1])
        self.thread: threading.Thread | None = None

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:  # closed: the test is over
                return
            conn.close()

    def __enter__(self) -> Dropper:
        self.sock.listen(16)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        if self.thread is not None:
            self.thread.join(timeout=5)
