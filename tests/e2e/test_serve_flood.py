"""`jp serve` under a bounded flood on loopback: hundreds of idle, half-sent
requests and clients that reset never exhaust the server's descriptors (its
limit is lowered to 256 here), never print a traceback, and the viewer is
answered again once the idle ones overstay the header limit."""

from __future__ import annotations

import http.client
import os
import resource
import socket
import struct
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import SplitResult, urlsplit

import pytest

from tests.e2e.harness import JP, User

pytestmark = pytest.mark.e2e
FLOOD = 400  # more than the descriptors the server may open


def _low_fd_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))


def _answer(port: int, path: str, cookie: str) -> int | None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=3)
    try:
        conn.request("GET", path, headers={"Host": f"127.0.0.1:{port}", "Cookie": cookie})
        return conn.getresponse().status
    except OSError:
        return None
    finally:
        conn.close()


def _serve(user: User, preexec: Callable[[], None] | None = None) -> subprocess.Popen[str]:
    user.ok("init", str(user.store))
    return subprocess.Popen(
        [str(JP), "serve", "--port", "0"],
        env=user.env,
        cwd=user.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=preexec,
    )


def _login(proc: subprocess.Popen[str]) -> tuple[SplitResult, int, str, str]:
    """The URL the server printed, its port and root, and the cookie its token buys."""
    assert proc.stdout is not None
    url = urlsplit(proc.stdout.readline().strip())
    port, root = url.port or 0, url.path.rstrip("/")
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", f"{url.path}?{url.query}", headers={"Host": url.netloc})
    cookie = (conn.getresponse().getheader("Set-Cookie") or "").split(";")[0]
    conn.close()
    return url, port, root, cookie


def test_a_flood_of_idle_and_reset_clients_is_bounded_and_quiet(tmp_path: Path) -> None:
    user = User(tmp_path)
    proc = _serve(user, _low_fd_limit)
    held: list[socket.socket] = []
    try:
        url, port, root, cookie = _login(proc)
        for i in range(FLOOD):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            if i % 20 == 0:  # a whole request, then a reset before the answer is read
                sock.sendall(f"GET {root}/ HTTP/1.0\r\nHost: {url.netloc}\r\nCookie: {cookie}\r\n\r\n".encode())
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                sock.close()
            else:  # half a request, then nothing
                sock.sendall(f"GET {root}/ HTTP/1.1\r\nHost: ".encode())
                held.append(sock)
        open_fds = len(os.listdir(f"/proc/{proc.pid}/fd"))
        assert open_fds < 64 + 40, open_fds  # the bound, not the flood
        answered = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and answered != 200:
            answered = _answer(port, f"{root}/", cookie)
            time.sleep(0.5)
        assert answered == 200  # the idle ones were shut after the header limit
        assert proc.poll() is None
    finally:
        for sock in held:
            sock.close()
        proc.terminate()
        _, err = proc.communicate(timeout=60)
    assert "Traceback" not in err, err[-2000:]


def _from(source: str, port: int) -> socket.socket:
    """A connection to the server from the loopback address ``source``."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(5)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    return sock


def _status(sock: socket.socket, root: str, port: int, cookie: str) -> bytes:
    sock.sendall(
        f"GET {root}/ HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nCookie: {cookie}\r\n\r\n".encode()
    )
    return sock.recv(64).split(b"\r\n")[0]


def test_one_client_holds_a_few_connections_and_the_others_are_still_served(
    tmp_path: Path,
) -> None:
    """One address holding idle connections gets 429 past its share; a second
    address is answered meanwhile, and the first again once it lets go."""
    from porcelain.serve.server import PER_CLIENT  # the bound under test

    user = User(tmp_path)
    proc = _serve(user)
    held: list[socket.socket] = []
    try:
        _, port, root, cookie = _login(proc)
        for _ in range(PER_CLIENT):
            sock = _from("127.0.0.3", port)
            sock.sendall(f"GET {root}/ HTTP/1.1\r\nHost: ".encode())  # and then nothing
            held.append(sock)
        time.sleep(0.3)  # the server has taken them all in
        refused = _from("127.0.0.3", port)
        first = _status(refused, root, port, cookie)
        refused.close()
        assert first == b"HTTP/1.0 429 Too Many Requests", first
        other = _from("127.0.0.4", port)
        assert _status(other, root, port, cookie) == b"HTTP/1.0 200 OK"
        other.close()
        for sock in held:
            sock.close()
        held.clear()
        again = None
        deadline = time.monotonic() + 10
        while again != b"HTTP/1.0 200 OK" and time.monotonic() < deadline:
            sock = _from("127.0.0.3", port)
            again = _status(sock, root, port, cookie)
            sock.close()
            time.sleep(0.2)
        assert again == b"HTTP/1.0 200 OK"  # its connections closed, its share is back
    finally:
        for sock in held:
            sock.close()
        proc.terminate()
        _, err = proc.communicate(timeout=60)
    assert "Traceback" not in err, err[-2000:]
