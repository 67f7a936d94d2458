"""Handing a provider call to the warm model process, starting it when needed.

``runner(warm)`` is how a model runs its calls: through the warm process when
it is on (``assistant.warm.enable``, and ``JP_WARM`` is not ``0``), else in
this process.  When no process answers, the first ``jp q`` starts one
(detached, in its own session, its output to /dev/null) and waits until it
has imported the SDK, so the import is paid once, there.  Whenever the
process is absent, busy, broken or not ours, the call runs in this process
instead, exactly as it would have there.  Nothing here imports an SDK.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import socket
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from porcelain import clock
from porcelain.domain.secrets import PROVIDER_KEYS
from porcelain.models import warm_wire as wire
from porcelain.models.calls import Call, Failure, Runner, Sink
from porcelain.models.catalog import Warm
from porcelain.models.sdks import in_process

ENV_SWITCH = "JP_WARM"
READY_TIMEOUT = 30.0
CONNECT_TIMEOUT = 2.0
# a process that does not take a call this fast is frozen or gone: the call runs here
ACCEPT_TIMEOUT = 5.0
# the server says ``alive`` every HEARTBEAT (5 s) during a call; silence this long is a stop
FRAME_TIMEOUT = 30.0
# what the SDKs read the key and the URL from: sent per call, never inherited
_NOT_INHERITED = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENROUTER_API_KEY",
    "JP_FAULT",
)


class Unavailable(Exception):
    """No warm process took the call; nothing of it streamed."""


def enabled(warm: Warm, environ: Mapping[str, str]) -> bool:
    switch = environ.get(ENV_SWITCH, "").strip().lower()
    if switch in ("0", "false", "no", "off"):
        return False
    return warm.enable


def runner(warm: Warm, environ: Mapping[str, str] | None = None) -> Runner:
    env = os.environ if environ is None else environ
    if not enabled(warm, env):
        return in_process
    return Client(warm, env).run


class Client:
    def __init__(self, warm: Warm, environ: Mapping[str, str]) -> None:
        self.warm = warm
        self.environ = environ

    def _socket_path(self, call: Call) -> Path | None:
        base = wire.private_folder(self.environ)
        if base is None:
            return None
        secrets = frozenset(_NOT_INHERITED)
        return wire.socket_path(base, wire.fingerprint(secrets, self.environ))

    def run(self, call: Call, sink: Sink) -> Any:
        path = self._socket_path(call)
        if path is None:
            return in_process(call, sink)
        try:
            conn = _connect(path)
            if conn is None:
                conn = self._start(path, call.kind)
            if conn is None:
                raise Unavailable("no warm process")
            return _exchange(conn, call, sink)
        except Unavailable:
            return in_process(call, sink)

    def _start(self, path: Path, kind: str) -> socket.socket | None:
        """Start the process (unless another jp is starting it) and connect."""
        with _spawn_lock(path) as mine:
            if not mine:
                return None
            conn = _connect(path)  # started while this one waited for the lock
            if conn is not None:
                return conn
            if not spawn(path, self.warm.idle_seconds, [kind], self.environ, self.warm.keys):
                return None
        return _connect(path)


def _connect(path: Path) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(CONNECT_TIMEOUT)
    try:
        sock.connect(str(path))
    except OSError:
        sock.close()
        return None
    if not wire.trusted_peer(sock):
        sock.close()
        return None
    sock.settimeout(None)
    return sock


def _exchange(conn: socket.socket, call: Call, sink: Sink) -> Any:
    """Send the call; feed its events to ``sink``; the final message, or the
    failure the provider reported.  ``Unavailable`` while nothing streamed."""
    streamed = False
    with conn:
        try:
            conn.settimeout(ACCEPT_TIMEOUT)  # every wait is bounded: a frozen process
            wire.send(conn, {"v": wire.VERSION, "op": "call", "call": call.to_json()})
            while True:
                frame = wire.receive(conn)
                conn.settimeout(FRAME_TIMEOUT)
                kind = frame.get("t")
                if kind in ("accepted", "alive"):
                    continue
                if kind == "event":
                    streamed = True
                    sink(frame.get("e") or {})
                elif kind == "done":
                    return frame.get("final")
                elif kind == "failure":
                    raise Failure.from_json(frame.get("f") or {})
                elif streamed:
                    raise _broken(str(frame.get("message") or kind))
                else:  # busy, or a fault of its own before anything streamed
                    raise Unavailable(str(kind))
        except (wire.WireError, OSError) as exc:
            if not streamed:
                raise Unavailable(str(exc)) from None
            raise _broken(str(exc)) from None


def _broken(detail: str) -> Failure:
    text = f"the warm model process stopped answering ({detail})"
    return Failure("stream", "other", text, detail=text)


@contextlib.contextmanager
def _spawn_lock(path: Path) -> Iterator[bool]:
    """True when this process may start the server (no other jp is starting it)."""
    lock = path.with_suffix(".lock")
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError:
        yield False
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def server_environment(
    environ: Mapping[str, str], keys: frozenset[str] = frozenset()
) -> dict[str, str]:
    """What the process inherits: this environment without any key (``keys``: the
    user's own providers' variables) or URL (those come with each call) and
    without jp's testing hooks."""
    drop = set(_NOT_INHERITED) | set(PROVIDER_KEYS) | keys
    return {k: v for k, v in environ.items() if k not in drop and not k.endswith("_API_KEY")}


def spawn(
    path: Path,
    idle: float,
    kinds: list[str],
    environ: Mapping[str, str],
    keys: frozenset[str] = frozenset(),
) -> bool:
    """Start the server detached; True once it says it is ready."""
    read_end, write_end = os.pipe()
    argv = [
        sys.executable,
        "-P",
        "-m",
        "porcelain.models.warm_server",
        str(path),
        str(idle),
        str(write_end),
        *kinds,
    ]
    try:
        subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(write_end,),
            start_new_session=True,
            env=server_environment(environ, keys),
            cwd="/",
        )
    except OSError:
        os.close(read_end)
        return False
    finally:
        os.close(write_end)
    try:
        return _ready(read_end)
    finally:
        os.close(read_end)


def _ready(fd: int) -> bool:
    deadline = clock.monotonic() + READY_TIMEOUT
    seen = b""
    while clock.monotonic() < deadline:
        readable, _, _ = select.select([fd], [], [], max(0.0, deadline - clock.monotonic()))
        if not readable:
            return False
        chunk = os.read(fd, 256)
        if not chunk:  # it exited before it was ready
            return False
        seen += chunk
        if seen.startswith(b"ready"):
            return True
    return False


# -- `jp model status` / `jp model stop` ---------------------------------------------


def servers(environ: Mapping[str, str]) -> list[Path]:
    base = wire.private_folder(environ, create=False)
    if base is None:
        return []
    return sorted(base.glob(f"{wire.SOCKET_PREFIX}*.sock"))


def ask(path: Path, op: str) -> dict[str, Any] | None:
    """``ping`` or ``stop`` one server; None when nothing listens there, and
    ``{"t": "silent", "pid": ...}`` when a process took the connection but did not
    answer in time (stopped, or frozen with its container)."""
    conn = _connect(path)
    if conn is None:
        return None
    with conn:
        pid = wire.peer_pid(conn)
        try:
            conn.settimeout(CONNECT_TIMEOUT)
            wire.send(conn, {"v": wire.VERSION, "op": op})
            return wire.receive(conn)
        except TimeoutError:
            return {"t": "silent", "pid": pid}
        except (wire.WireError, OSError):
            return None
