"""The warm model process: started by the first `jp q`, reused by the next ones,
gone after its idle time or `jp model stop`; owner-only; and when it is
absent, broken or switched off, `jp q` calls the provider itself."""

from __future__ import annotations

import os
import socket
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.harness import User, warm_runtime
from tests.support.fake_messages import FakeMessages

DEADLINE = 60.0


@pytest.fixture
def warm(online: User) -> Iterator[tuple[User, Path]]:
    with warm_runtime(online) as run:
        yield online, run


def servers(user: User) -> list[dict[str, object]]:
    rows = user.json("model", "status")
    assert isinstance(rows, list)
    return rows


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_gone(pid: int) -> None:
    deadline = time.monotonic() + DEADLINE
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid), f"the warm process {pid} did not exit"


def test_the_first_query_starts_it_and_the_next_reuse_it(
    warm: tuple[User, Path], fake: FakeMessages
) -> None:
    user, run = warm
    assert servers(user) == []
    fake.reply_text("One.")
    assert "One." in user.ok("q", "--new", "first")
    (first,) = servers(user)
    fake.reply_text("Two.")
    assert "Two." in user.ok("q", "second")
    (again,) = servers(user)
    assert again["pid"] == first["pid"] and int(again["served"]) == int(first["served"]) + 1
    assert again["sdks"] == ["anthropic"]
    folder = run / "jp"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    sock = Path(str(first["socket"]))
    assert sock.parent == folder and stat.S_ISSOCK(sock.stat().st_mode)
    assert stat.S_IMODE(sock.stat().st_mode) == 0o600


def test_it_never_holds_the_key_in_its_environment_or_files(
    warm: tuple[User, Path], fake: FakeMessages
) -> None:
    user, run = warm
    fake.reply_text("Hi.")
    user.ok("q", "--new", "hello")
    (row,) = servers(user)
    environ = Path(f"/proc/{row['pid']}/environ")
    if environ.exists():
        held = environ.read_bytes()
        assert b"test-key" not in held and b"ANTHROPIC_API_KEY" not in held
    for path in run.rglob("*"):
        if path.is_file():
            assert b"test-key" not in path.read_bytes()


def test_it_exits_when_idle_and_when_stopped(warm: tuple[User, Path], fake: FakeMessages) -> None:
    user, _ = warm
    fake.reply_text("Quick.")
    # 6 s: long enough for the next command to see it on a loaded machine
    user.ok("--cfg", "assistant.warm.idle_minutes=0.1", "q", "--new", "hello")
    (row,) = servers(user)
    wait_gone(int(str(row["pid"])))
    assert servers(user) == []
    fake.reply_text("Back.")
    user.ok("q", "again")  # starts a new one
    (row,) = servers(user)
    out = user.ok("model", "stop")
    assert f"pid {row['pid']}" in out
    wait_gone(int(str(row["pid"])))
    assert "No warm model process" in user.ok("model", "stop")


def test_switched_off_no_process_is_started(online: User, fake: FakeMessages, tmp_path: Path) -> None:
    with warm_runtime(online) as run:
        fake.reply_text("Off.")
        online.ok("--cfg", "assistant.warm.enable=false", "q", "--new", "one")
        fake.reply_text("Off too.")
        online.ok("q", "two", env={"JP_WARM": "0"})
        assert servers(online) == []
        assert not list((run / "jp").glob("*.sock")) if (run / "jp").exists() else True


class Broken:
    """A listener on the warm socket's path that hangs up on every client."""

    def __init__(self, path: Path, reply: bytes = b"") -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        self.sock.listen(4)
        self.reply = reply
        self.served = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                self.served += 1
                conn.recv(1 << 16)
                conn.sendall(self.reply)

    def close(self) -> None:
        self.sock.close()


@pytest.mark.parametrize("reply", [b"", b"\x00\x00\x00\x05nope!"])
def test_a_broken_process_means_the_call_runs_here(
    warm: tuple[User, Path], fake: FakeMessages, reply: bytes
) -> None:
    user, _ = warm
    fake.reply_text("Warm.")
    user.ok("q", "--new", "hello")
    (row,) = servers(user)
    path = Path(str(row["socket"]))
    user.ok("model", "stop")
    wait_gone(int(str(row["pid"])))
    broken = Broken(path, reply)
    try:
        fake.reply_text("In process.")
        assert "In process." in user.ok("q", "are you there?")
        assert broken.served >= 1, "the query tried the socket first"
    finally:
        broken.close()
        path.unlink()


def test_a_stale_socket_is_replaced(warm: tuple[User, Path], fake: FakeMessages) -> None:
    user, _ = warm
    fake.reply_text("Warm.")
    user.ok("q", "--new", "hello")
    (row,) = servers(user)
    path = Path(str(row["socket"]))
    os.kill(int(str(row["pid"])), 9)  # gone without cleaning up: the socket file stays
    wait_gone(int(str(row["pid"])))
    assert path.exists()
    fake.reply_text("New one.")
    assert "New one." in user.ok("q", "again")
    (fresh,) = servers(user)
    assert fresh["pid"] != row["pid"]


def test_a_folder_that_is_not_private_is_not_used(online: User, fake: FakeMessages, tmp_path: Path) -> None:
    with warm_runtime(online) as run:
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        (run / "jp").symlink_to(elsewhere)
        fake.reply_text("Still answered.")
        assert "Still answered." in online.ok("q", "--new", "hello")
        assert list(elsewhere.iterdir()) == []
        assert servers(online) == []


def test_ctrl_c_and_errors_behave_as_in_process(warm: tuple[User, Path], fake: FakeMessages) -> None:
    user, _ = warm
    fake.reply_text("A long answer that streams in pieces")
    proc = user.run("q", "--new", "stop it", env={"JP_FAULT": "model:streaming:int"})
    assert proc.returncode == 130, proc.stderr
    cid = user.active()
    last = [line for line in proc.stderr.splitlines() if line.strip()][-1]
    assert last.startswith("interrupted: the request and ") and f"saved in {cid}; `jp q --retry`" in last
    assert "error:" not in proc.stderr
    assert user.kinds(cid)[1:3] == ["turn_start", "chat_request"]
    (row,) = servers(user)
    fake.reply_error(500, "api_error", "WARM-BOOM", retry_after_ms=10, times=3)
    proc = user.fail("q", "fail please", code=4)
    assert [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")] == [
        "error: anthropic returned 500 api_error: WARM-BOOM"
    ]
    assert len([r for r in fake.requests if "fail please" in str(r)]) == 3, "the SDK's retries"
    fake.reply_error(429, "rate_limit_error", "slow", retry_after_ms=10)
    fake.reply_text("After a retry.")
    assert "After a retry." in user.ok("q", "once more")
    (same,) = servers(user)
    assert same["pid"] == row["pid"], "the process outlived the interrupt and the errors"


def test_model_status_does_not_keep_it_alive(warm: tuple[User, Path], fake: FakeMessages) -> None:
    user, _ = warm
    fake.reply_text("One.")
    user.ok("q", "--new", "first")
    time.sleep(1.0)  # idle a while, so that a reset by the first look shows in the second
    (before,) = servers(user)
    (after,) = servers(user)
    assert float(after["idle_seconds"]) >= float(before["idle_seconds"]), (
        "`jp model status` reset the idle timer: looking at it kept it running"
    )
    assert int(after["served"]) == int(before["served"]) == 1
