"""The warm model process: a provider's SDK imported once, serving ``jp q``.

Started detached by the first ``jp q`` that finds none (``warm_client``):

    python -m porcelain.models.warm_server SOCKET IDLE_SECONDS READY_FD [KIND ...]

It imports the SDKs named, listens on SOCKET (0600, in the owner-only folder
of ``warm_wire``), writes ``ready`` to READY_FD and serves until it has been
idle for IDLE_SECONDS or is told to stop.  Each connection carries one
request: ``call`` (a ``calls.Call``: the key comes with it and is dropped
with the call; nothing is written anywhere), ``ping`` or ``stop``.  A call's
raw provider events stream back as they arrive, then ``done`` with the final
message, or ``failure`` (a ``calls.Failure``); ``accepted`` comes first and
``alive`` every ``HEARTBEAT`` seconds while the call runs, so a client can
bound every wait and tell a frozen process from a slow provider.  When the client hangs up (its
user pressed Ctrl-C) the provider stream is closed.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from porcelain import clock
from porcelain.models import warm_wire as wire
from porcelain.models.calls import Call, Failure
from porcelain.models.sdks import execute

MAX_CLIENTS = 8
HEARTBEAT = 5.0  # seconds between ``alive`` frames during a call (the client waits 6x)


class Server:
    def __init__(self, path: Path, idle: float) -> None:
        self.path = path
        self.idle = idle
        self.lock = threading.Lock()
        self.active = 0
        self.last = clock.monotonic()
        self.stopping = threading.Event()
        self.started = clock.current().time()
        self.served = 0
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.inode = 0

    def bind(self) -> None:
        old = os.umask(0o177)
        try:
            try:
                self.path.unlink()  # a socket left by a process that died
            except FileNotFoundError:
                pass
            self.listener.bind(str(self.path))
        finally:
            os.umask(old)
        os.chmod(self.path, 0o600)
        self.inode = os.stat(self.path).st_ino
        self.listener.listen(16)
        self.listener.settimeout(0.5)

    def serve(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                if self._idle_over():
                    break
                continue
            except OSError:
                break
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()
        self.close()

    def _idle_over(self) -> bool:
        with self.lock:
            return self.active == 0 and clock.monotonic() - self.last >= self.idle

    def close(self) -> None:
        self.listener.close()
        try:
            if os.stat(self.path).st_ino == self.inode:  # still ours, not a successor's
                self.path.unlink()
        except OSError:
            pass

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            if not wire.trusted_peer(conn):
                return
            with self.lock:
                busy = self.active >= MAX_CLIENTS
                if not busy:
                    self.active += 1
            called = False  # only a call counts as use: `jp model status` pings
            try:
                request = wire.receive(conn)
                if busy:
                    wire.send(conn, {"t": "busy"})
                    return
                called = request.get("op") == "call"
                self._answer(conn, request)
            except (wire.WireError, OSError):
                pass
            finally:
                if not busy:
                    with self.lock:
                        self.active -= 1
                        if called:
                            self.last = clock.monotonic()

    def _answer(self, conn: socket.socket, request: dict[str, Any]) -> None:
        op = request.get("op")
        if request.get("v") != wire.VERSION:
            wire.send(conn, {"t": "error", "message": "another protocol version"})
        elif op == "ping":
            wire.send(conn, self._status())
        elif op == "stop":
            wire.send(conn, {"t": "stopping", "pid": os.getpid()})
            self.stopping.set()
        elif op == "call":
            self._call(conn, Call.from_json(request["call"]))
        else:
            wire.send(conn, {"t": "error", "message": f"unknown op {op!r}"})

    def _status(self) -> dict[str, Any]:
        with self.lock:
            idle = clock.monotonic() - self.last
            active, served = self.active, self.served
        return {
            "t": "pong",
            "pid": os.getpid(),
            "started": self.started,
            "idle_seconds": round(idle, 1),
            "idle_limit": self.idle,
            "active": active - 1,  # not counting this ping
            "served": served,
            "sdks": sorted(m for m in ("anthropic", "openai") if m in sys.modules),
        }

    def _call(self, conn: socket.socket, call: Call) -> None:
        with self.lock:
            self.served += 1
        closers: list[Callable[[], None]] = []
        watcher = threading.Thread(target=_watch, args=(conn, closers), daemon=True)
        sending = threading.Lock()
        finished = threading.Event()

        def send(frame: dict[str, Any]) -> None:
            with sending:
                wire.send(conn, frame)

        def sink(event: dict[str, Any]) -> None:
            send({"t": "event", "e": event})

        def opened(close: Callable[[], None]) -> None:
            closers.append(close)

        send({"t": "accepted"})
        watcher.start()
        threading.Thread(target=_beat, args=(send, finished), daemon=True).start()
        try:
            final = execute(call, sink, opened)
        except Failure as exc:
            send({"t": "failure", "f": exc.to_json()})
            return
        except Exception as exc:  # a fault of its own: the client runs the call itself
            send({"t": "error", "message": f"{type(exc).__name__}: {exc}"})
            return
        finally:
            finished.set()
            del call  # the key goes with the call
        send({"t": "done", "final": final})


def _beat(send: Callable[[dict[str, Any]], None], finished: threading.Event) -> None:
    """``alive`` every HEARTBEAT seconds until the call is finished."""
    while not finished.wait(HEARTBEAT):
        try:
            send({"t": "alive"})
        except OSError:
            return


def _watch(conn: socket.socket, closers: list[Callable[[], None]]) -> None:
    """When the client hangs up before the answer is complete, close the stream."""
    try:
        while conn.recv(1024):
            pass
    except OSError:
        pass
    for close in closers:
        try:
            close()
        except Exception:
            pass


def main(argv: list[str]) -> int:
    path, idle, ready_fd, kinds = Path(argv[0]), float(argv[1]), int(argv[2]), argv[3:]
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in the terminal is for jp q
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    for kind in kinds:
        if kind == "anthropic":
            # lazy: the warm process imports the SDKs once, before its first call
            import anthropic  # noqa: F401  (the point: paid once)
        elif kind == "openai":
            # lazy: the warm process imports the SDKs once, before its first call
            import openai  # noqa: F401
    server = Server(path, idle)
    server.bind()
    with os.fdopen(ready_fd, "w") as ready:
        ready.write(f"ready {os.getpid()}\n")
    server.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
