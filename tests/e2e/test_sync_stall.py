"""A remote that accepts the connection and then says nothing: pull, push and sync
give up after ``sync.stall_seconds`` without a byte, in one line, and leave no git
running (docs/sync.md, "A remote that stops answering")."""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.sync_machine import Machine

STALLED = "said nothing for 1 seconds; gave up waiting (sync.stall_seconds sets how long)"


@pytest.fixture(scope="module")
def silent() -> Iterator[int]:
    """A loopback TCP server that accepts every connection and never writes a byte."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(32)
    held: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            held.append(conn)

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield server.getsockname()[1]
    finally:
        server.close()
        for conn in held:
            conn.close()


URLS = {
    "git": "git://127.0.0.1:{port}/store.git",
    "http": "http://127.0.0.1:{port}/store.git",
    "ssh": "ssh://git@127.0.0.1:{port}/store.git",
}


def _machine(tmp_path: Path, url: str) -> Machine:
    machine = Machine(tmp_path / "m", url)
    config = machine.root / "config" / "jp" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[sync]\nstall_seconds = 1\n")
    return machine


def _gits_of(machine: Machine) -> list[str]:
    """The processes still running that name this machine's store or remote."""
    out = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if str(machine.root) in line and "ps -eo" not in line]


@pytest.mark.parametrize("kind", sorted(URLS))
def test_a_silent_remote_is_given_up_in_one_line(
    silent: int, tmp_path: Path, kind: str
) -> None:
    machine = _machine(tmp_path, URLS[kind].format(port=silent))
    started = time.monotonic()
    proc = machine.run("pull")
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [f"error: sync with origin failed: origin {STALLED}"]
    assert time.monotonic() - started < 60
    assert _gits_of(machine) == []


@pytest.mark.parametrize("verb", ["push", "sync"])
def test_push_and_sync_give_up_too(silent: int, tmp_path: Path, verb: str) -> None:
    machine = _machine(tmp_path, URLS["git"].format(port=silent))
    machine.new("waiting")
    proc = machine.run(verb)
    assert proc.returncode == 1 and STALLED in proc.stderr and len(proc.stderr.splitlines()) == 1
