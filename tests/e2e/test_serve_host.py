"""`jp serve --host`: a loopback address other than 127.0.0.1 answers; on every
address (`0.0.0.0 --yes`) the machine's name and addresses answer and any other
name is refused (DNS rebinding); loopback is judged by address, not spelling."""

from __future__ import annotations

import http.client
import socket
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.e2e.harness import User
from tests.e2e.serve.store import serving

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def user(tmp_path_factory: pytest.TempPathFactory) -> User:
    person = User(tmp_path_factory.mktemp("host"))
    person.ok("init", str(person.store))
    return person


def status(connect: str, port: int, path: str, host: str, cookie: str = "") -> tuple[int, str]:
    conn = http.client.HTTPConnection(connect, port, timeout=30)
    try:
        conn.request("GET", path, headers={"Host": host, "Cookie": cookie})
        reply = conn.getresponse()
        return reply.status, (reply.getheader("Set-Cookie") or "").split(";")[0]
    finally:
        conn.close()


def test_another_loopback_address_answers(user: User) -> None:
    with serving(user, "--host", "127.0.0.2") as (url, _proc):
        parts = urlsplit(url)
        assert parts.hostname == "127.0.0.2"
        code, cookie = status("127.0.0.2", parts.port or 0, f"{parts.path}?{parts.query}", parts.netloc)
        assert code == 303
        assert status("127.0.0.2", parts.port or 0, parts.path, parts.netloc, cookie)[0] == 200
        assert status("127.0.0.2", parts.port or 0, parts.path, "evil.example", cookie)[0] == 421


def test_every_address_answers_by_the_machines_name_and_addresses(user: User) -> None:
    with serving(user, "--host", "0.0.0.0", "--yes") as (url, _proc):
        parts = urlsplit(url)
        port = parts.port or 0
        assert parts.hostname == socket.gethostname()
        login = f"{parts.path}?{parts.query}"
        code, cookie = status("127.0.0.1", port, login, f"127.0.0.1:{port}")
        assert code == 303
        for name in (socket.gethostname(), socket.getfqdn(), "127.0.0.1", "127.0.0.3"):
            assert status("127.0.0.1", port, parts.path, f"{name}:{port}", cookie)[0] == 200, name
        for name in ("evil.example", "127.example.com", f"{socket.gethostname()}.evil"):
            assert status("127.0.0.1", port, parts.path, f"{name}:{port}", cookie)[0] == 421, name


def test_a_name_that_looks_loopback_is_not(user: User, tmp_path: Path) -> None:
    proc = user.fail("serve", "--host", "127.example.com", "--port", "0")
    assert "error: refusing to listen on 127.example.com" in proc.stderr and "--yes" in proc.stderr
