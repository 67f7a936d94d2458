"""The warm model process killed in the middle of an answer, and git's own
maintenance running during a warm query: nothing the user wrote is lost, the
store stays sound, and the next `jp q` works."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.harness import User, warm_runtime
from tests.e2e.test_warm import servers, wait_gone
from tests.support.fake_messages import FakeMessages
from tests.support.sandbox import JP, TRACEBACK


@pytest.fixture
def warm(online: User) -> Iterator[User]:
    with warm_runtime(online):
        yield online


def _slow(seconds: float, needle: str) -> object:
    """A `when` that matches ``needle`` and holds the request ``seconds`` first."""

    def match(body: dict[str, object]) -> bool:
        if needle not in str(body.get("messages")):
            return False
        time.sleep(seconds)
        return True

    return match


def _fsck(user: User) -> None:
    proc = subprocess.run(
        ["git", "--git-dir", str(user.store), "fsck", "--strict", "--no-progress"],
        capture_output=True,
        text=True,
        env=user.env,
    )
    assert proc.returncode == 0, proc.stderr


def test_the_warm_process_killed_mid_answer_loses_nothing(warm: User, fake: FakeMessages) -> None:
    user = warm
    fake.reply_text("Warm.")
    user.ok("q", "--new", "hello")
    cid = user.active()
    (row,) = servers(user)
    pid = int(str(row["pid"]))
    before = len(user.kinds(cid))
    fake.reply_text("Never seen.", when=_slow(3.0, "KILL-ME"))  # type: ignore[arg-type]
    fake.reply_text("Answered after all.", times=None)
    query = subprocess.Popen(
        [str(JP), "q", "KILL-ME"],
        env=user.env,
        cwd=user.root,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while not any("KILL-ME" in str(b.get("messages")) for b in fake.requests):
        assert time.monotonic() < deadline and query.poll() is None, query.communicate()
        time.sleep(0.05)
    subprocess.run(["kill", "-9", str(pid)], check=True)
    wait_gone(pid)
    out, err = query.communicate(timeout=120)
    assert TRACEBACK not in err, err
    extra = user.kinds(cid)[before:]
    assert extra in (
        ["turn_start", "chat_request"],
        ["turn_start", "chat_request", "chat_response"],
    )
    requests = [e.get("content") for e in user.events(cid) if e["type"] == "chat_request"]
    assert requests[-1] == "KILL-ME", "the request is kept whatever happened to the answer"
    if query.returncode == 0:  # the call went on here, in process
        assert "Answered after all." in out and extra[-1] == "chat_response"
    else:  # one clear line, and the request waits for --retry
        assert [ln for ln in err.splitlines() if ln.startswith("error:")], err
        assert extra[-1] == "chat_request"
        assert "Answered after all." in user.ok("q", "--retry")
    _fsck(user)
    assert "Answered after all." in user.ok("q", "and after?")


def test_git_gc_during_a_warm_query_breaks_nothing(warm: User, fake: FakeMessages) -> None:
    user = warm
    fake.reply_text("Warm.")
    user.ok("q", "--new", "hello")
    cid = user.active()
    fake.reply_text("Slow but sure.", when=_slow(2.0, "DURING-GC"))  # type: ignore[arg-type]
    stop = threading.Event()

    def maintain() -> None:
        while not stop.is_set():
            subprocess.run(
                # git's own gc as jp's maintenance and git's auto gc run it: loose
                # objects younger than the prune expiry stay (`--prune=now` is unsafe
                # beside any writer, git's documentation says, jp included)
                ["git", "--git-dir", str(user.store), "gc", "--quiet"],
                env=user.env,
                capture_output=True,
            )

    gc = threading.Thread(target=maintain, daemon=True)
    gc.start()
    try:
        out = user.ok("q", "DURING-GC")
    finally:
        stop.set()
        gc.join(timeout=60)
    assert "Slow but sure." in out
    assert user.kinds(cid)[-3:] == ["turn_start", "chat_request", "chat_response"]
    _fsck(user)


def test_a_stopped_warm_process_never_hangs_a_query(warm: User, fake: FakeMessages) -> None:
    """SIGSTOP (or a frozen container): the socket still takes connections, nothing
    answers.  `jp q` bounds its wait and answers in process; `jp model status`
    names the process as not answering; `jp model stop` ends it."""
    user = warm
    fake.reply_text("Warm.")
    user.ok("q", "--new", "hello")
    (row,) = servers(user)
    pid = int(str(row["pid"]))
    os.kill(pid, signal.SIGSTOP)
    try:
        fake.reply_text("Answered here.")
        proc = user.run("q", "are you frozen?")  # the harness's timeout would catch a hang
        assert proc.returncode == 0 and "Answered here." in proc.stdout, proc.stderr
        (silent,) = servers(user)
        assert silent["answering"] is False and silent["pid"] == pid, silent
        assert "not answering" in user.ok("model", "status")
        assert str(pid) in user.ok("model", "stop")
        wait_gone(pid)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)
    assert user.kinds(user.active())[-1] == "chat_response"
    _fsck(user)


@pytest.mark.skipif(os.geteuid() != 0, reason="another user's runtime folder needs chown (root)")
def test_another_users_runtime_folder_is_not_used(online: User, fake: FakeMessages) -> None:
    """`su`/`sudo -E` keep another user's XDG_RUNTIME_DIR: jp puts nothing there (its
    socket folder goes to a private one in the temporary folder instead)."""
    theirs = Path(tempfile.mkdtemp(prefix="jpo-", dir="/tmp"))
    private_tmp = Path(tempfile.mkdtemp(prefix="jpt-", dir="/tmp"))
    planted = Path(tempfile.mkdtemp(prefix="jpx-", dir="/tmp"))
    os.chown(theirs, 4321, -1)
    (theirs / "jp").symlink_to(planted)  # what she prepared for root's socket folder
    env = {"JP_WARM": "1", "XDG_RUNTIME_DIR": str(theirs), "TMPDIR": str(private_tmp)}
    online.env.update(env)
    try:
        fake.reply_text("Answered.", times=None)
        assert "Answered." in online.ok("q", "--new", "hello")
        assert list(planted.iterdir()) == [], "nothing is created where she chose"
        assert sorted(p.name for p in theirs.iterdir()) == ["jp"]
        mine = private_tmp / f"jp-{os.getuid()}"
        assert mine.is_dir() and stat.S_IMODE(mine.stat().st_mode) == 0o700
    finally:
        online.run("model", "stop")
        for folder in (theirs, private_tmp, planted):
            shutil.rmtree(folder, ignore_errors=True)
