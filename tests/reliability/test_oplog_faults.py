"""The operation log under faults: a stale lock on the log, a held conversation,
a command line that is not UTF-8, a full disk under undo and restore.

Each case checks what a user sees (one `error:` line naming the next command)
and that the store is as it was, then that everything works once the fault
is gone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.reliability.harness import RUST_ID, Sandbox
from tests.reliability.test_oplog import COMPACTED, base, state
from tests.support.sandbox import JP

__all__ = ["base"]  # the prepared store of test_oplog, shared


def _stale_oplog_lock(box: Sandbox) -> Path:
    """A `refs/jp/oplog.lock` a command killed inside its rename left, a minute old."""
    lock = box.store / "refs" / "jp" / "oplog.lock"
    lock.write_text(box.git("rev-parse", "refs/jp/oplog").strip() + "\n")
    old = time.time() - 60
    os.utime(lock, (old, old))
    return lock


def test_a_stale_oplog_lock_makes_undo_refuse_and_keeps_the_order(
    base: Sandbox, tmp_path: Path
) -> None:
    box = base.copy(tmp_path / "box")
    lock = _stale_oplog_lock(box)
    ran = [f"title {n}" for n in range(4)]
    for title in ran[:2]:
        out = box.run("conversation", "edit", RUST_ID, "--title", title)
        assert out.returncode == 0 and "jp doctor --fix" in out.stderr, out.stderr
    box.ok("conversation", "archive", COMPACTED, "--yes")
    for title in ran[2:]:
        box.ok("conversation", "edit", RUST_ID, "--title", title)
    before = state(box)
    proc = box.fail("undo")
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert any("operation log is behind" in line for line in lines), proc.stderr
    assert "nothing was undone" in proc.stderr and "jp doctor --fix" in proc.stderr
    assert state(box) == before, "a refused undo changed something"
    assert "jp doctor --fix" in box.fail("op", "restore", box.json("op", "log")[0]["id"]).stderr
    box.run("doctor", "--fix", "--no-fsck")
    assert not lock.exists()
    log = box.json("op", "log")
    commands = [op["command"] for op in log[:5]]
    assert commands == [
        f"jp conversation edit {RUST_ID} --title '{ran[3]}'",
        f"jp conversation edit {RUST_ID} --title '{ran[2]}'",
        f"jp conversation archive {COMPACTED} --yes",
        f"jp conversation edit {RUST_ID} --title '{ran[1]}'",
        f"jp conversation edit {RUST_ID} --title '{ran[0]}'",
    ], "the pending operations were written out of the order they ran"
    assert "title 3" in box.ok("undo")
    assert state(box)["JP_HEAD"] == before["JP_HEAD"]
    box.fsck()


def test_undo_waits_for_then_refuses_a_conversation_a_query_holds(
    base: Sandbox, tmp_path: Path
) -> None:
    """A turn runs a slow tool; `jp undo` (even `--force`, which its own conflict
    error suggests) must not move the conversation under it: the answer is kept."""
    from tests.support.fake_messages import FakeMessages

    box = base.copy(tmp_path / "box")
    go = tmp_path / "go"  # the tool runs until the test has tried every undo
    with FakeMessages() as fake:
        box.env.update(fake.env())
        box.config_file.write_text(
            '[assistant.model]\nid = "anthropic/claude-test"\n'
            "[conversation.tools.slow]\n"
            f'command = ["sh", "-c", "while [ ! -e {go} ]; do sleep 0.05; done"]\n'
            'description = "Wait a moment"\nconfirm = false\n'
        )
        fake.reply_text("First answer.")
        box.ok("q", "-i", RUST_ID, "first")
        fake.reply_blocks([{"type": "tool_use", "name": "slow", "input": {}}])
        fake.reply_text("The paid-for answer.")
        turn = box.popen("q", "-i", RUST_ID, "wait for it")
        deadline = time.monotonic() + 30
        while "tool_call_request" not in box.conversations()[RUST_ID].kinds[-1:]:
            assert time.monotonic() < deadline, "the tool call never arrived"
            time.sleep(0.05)
        during = state(box)
        for args in (
            ("undo",),
            ("undo", "--force"),
            ("op", "restore", box.json("op", "log")[1]["id"]),
        ):
            proc = box.fail(*args)
            assert f"conversation {RUST_ID} is in use" in proc.stderr, proc.stderr
            assert "nothing was changed" in proc.stderr and "wait for it to finish" in proc.stderr
            assert state(box) == during, f"jp {args} moved a held conversation"
        go.write_text("")
        _, err = turn.communicate(timeout=60)
    assert turn.returncode == 0, err
    events = box.conversations()[RUST_ID].events
    assert "The paid-for answer." in str(events[-1]), events[-1]
    newest = box.json("op", "log")[0]
    assert "wait for it" in newest["command"]
    assert "wait for it" in box.ok("undo"), "undo reverses the query once it is done"
    box.fsck()


def test_undo_waits_for_a_command_that_has_not_written_its_operation(
    base: Sandbox, tmp_path: Path
) -> None:
    """A query lets go of its conversation a moment before its operation is in the
    log: its record (held by a live process) names the conversation, so undo waits,
    then refuses, rather than reversing the operation before it."""
    box = base.copy(tmp_path / "box")
    box.ok("q", "-i", RUST_ID, "a first question")  # the operation an undo would reverse
    record = box.store / "jp" / "oplog" / "0123456789abcdef.pending"
    record.parent.mkdir(parents=True, exist_ok=True)
    ref = f"refs/conversations/{RUST_ID}"
    tip = box.refs("refs/conversations")[ref]
    record.write_text(
        json.dumps({"id": "0123456789abcdef", "command": "jp q", "started": time.time()})
        + "\n"
        + json.dumps({"g": 1, "u": [[ref, tip, tip]]})
        + "\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(record)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        before = state(box)
        proc = box.fail("undo", "--force")
        assert f"conversation {RUST_ID} is in use" in proc.stderr, proc.stderr
        assert state(box) == before
    finally:
        holder.kill()
        holder.wait()
    record.unlink()
    box.ok("undo")


HOLD = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(120)
"""


def _raw(box: Sandbox, *args: bytes) -> subprocess.CompletedProcess[bytes]:
    """`jp` run with a command line of bytes (what a shell passes for a Latin-1 word)."""
    return subprocess.run(
        [os.fsencode(str(JP)), *args],
        env=box.env,
        cwd=box.root / "work",
        capture_output=True,
        timeout=120,
    )


def test_a_command_line_that_is_not_utf8_is_refused_at_the_boundary(
    base: Sandbox, tmp_path: Path
) -> None:
    box = base.copy(tmp_path / "box")
    before = state(box)
    for args in (
        (b"conversation", b"edit", RUST_ID.encode(), b"--title", b"caf\xe9"),
        (b"conversation", b"edit", RUST_ID.encode(), b"--label", b"k=\xff"),
        (b"q", b"--new", b"r\xe9sum\xe9"),
    ):
        proc = _raw(box, *args)
        err = proc.stderr.decode()
        assert proc.returncode != 0 and err.startswith("error: "), err
        assert "not UTF-8" in err and "Traceback" not in err and "internal" not in err, err
        assert "\\xe9" in err or "\\xff" in err, "the byte is named, escaped"
        assert state(box) == before
    assert list((box.store / "jp" / "oplog").glob("*.pending")) == []
    for read in (("conversation", "ls"), ("conversation", "show", RUST_ID), ("op", "log")):
        box.ok(*read)


def test_a_pending_record_with_bytes_that_are_not_utf8_is_recovered(
    base: Sandbox, tmp_path: Path
) -> None:
    """A record an older jp wrote for such a command line (its JSON holds the bytes as
    surrogate escapes): every command used to fail on it with an internal error."""
    box = base.copy(tmp_path / "box")
    before = state(box)
    box.kill("move:committed", "conversation", "archive", COMPACTED, "--yes")
    (record,) = (box.store / "jp" / "oplog").glob("*.pending")
    lines = record.read_text().splitlines()
    header = json.loads(lines[0])
    header["command"] = f"jp conversation archive {COMPACTED} --yes --title 'caf\udce9'"
    record.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    box.ok("conversation", "ls")
    newest = box.json("op", "log")[0]
    assert newest["recovered"] and newest["command"].endswith("'caf\\xe9'"), newest
    assert "caf\\xe9" in box.ok("op", "log", "-n", "1")
    stored = box.git("cat-file", "-p", f"{box.git('rev-parse', 'refs/jp/oplog').strip()}:op.json")
    assert json.loads(stored)["command"] == header["command"], "the bytes survive in the log"
    box.ok("undo")
    assert state(box) == before
    box.fsck()


def test_reads_survive_a_title_stored_with_bytes_that_are_not_utf8(
    base: Sandbox, tmp_path: Path
) -> None:
    """A metadata note written by plain git (or an older jp) whose title holds a
    Latin-1 byte and an escape sequence: every read works, and so does the next edit."""
    box = base.copy(tmp_path / "box")
    anchor = box.git("hash-object", "--stdin", input=f"jp-conversation {RUST_ID}\n").strip()
    git = ["git", "--git-dir", str(box.store)]
    shown = [*git, "notes", "--ref=refs/notes/meta", "show", anchor]
    old = subprocess.run(shown, capture_output=True, check=True).stdout
    bad = b'{"k": "title", "m": "52e208e3c382", "t": 9796162359619, "v": "caf\xe9 \x1b[2J"}\n'
    blob = subprocess.run(
        [*git, "hash-object", "-w", "--stdin"], input=old + bad, capture_output=True, check=True
    ).stdout.decode()
    subprocess.run(
        [*git, "notes", "--ref=refs/notes/meta", "add", "-f", "-C", blob.strip(), anchor],
        capture_output=True,
        check=True,
    )
    for read in (
        ("conversation", "ls"),
        ("--format", "json", "conversation", "ls"),
        ("conversation", "show", RUST_ID),
        ("conversation", "print", RUST_ID),
        ("op", "log"),
    ):
        out = box.ok(*read)
        assert "\x1b" not in out, f"jp {read} printed a raw escape"
    box.ok("conversation", "edit", RUST_ID, "--title", "fine")
    assert "fine" in box.ok("conversation", "ls")
