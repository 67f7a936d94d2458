"""A remote that keeps a ref breaking the rules: every sync fails until the user
acknowledges it (`jp doctor --ack`); then pull, push, sync and doctor succeed,
the refusal stays named and its quarantine listed, and a new bad tip fails again."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.e2e.harness import User
from tests.e2e.test_hostile_input import pushed


def test_an_acknowledged_refusal_lets_every_sync_succeed(user: User, tmp_path: Path) -> None:
    cid, bad = pushed(user, tmp_path)
    bad.ref("refs/conversations/jp-c2", bad.event(b'{"type": "turn_start", "timestamp": \n'))
    bad.ref("refs/conversations/jp-c1", bad.blob("not a commit\n"))
    for verb in ("pull", "push", "sync"):
        assert "jp doctor --ack" in user.fail(verb, "origin", code=1).stderr
    assert user.run("doctor", "--no-fsck").returncode == 1

    acked = user.ok("doctor", "--ack", "--no-fsck")
    assert "acknowledged: origin's refs/conversations/jp-c2" in acked, acked
    assert "acknowledged: origin's refs/conversations/jp-c1" in acked, acked
    assert "(acknowledged)" in acked and "is healthy" in acked, acked
    user.ok("conversation", "edit", cid, "--title", "changed here")
    for verb in ("pull", "push", "sync"):
        proc = user.run(verb, "origin")
        assert proc.returncode == 0, proc.stderr
        assert "refused refs/conversations/jp-c2 from origin (acknowledged)" in proc.stderr
    rows = json.loads(user.ok("-F", "json", "pull", "origin"))
    assert {r["id"] for r in rows if r.get("acknowledged")} >= {"refs/conversations/jp-c2"}
    assert user.ref("refs/jp/quarantine/origin/conversations/jp-c2"), "the quarantine stays"
    report = json.loads(user.ok("-F", "json", "doctor", "--no-fsck"))
    assert report["healthy"]
    (kept,) = [f for f in report["findings"] if f["check"] == "quarantine"]
    assert kept["severity"] == "note" and "(acknowledged)" in kept["problem"]
    pushed_title = subprocess.run(
        ["git", "--git-dir", str(tmp_path / "remote.git"), "log", "-1", "-p", "refs/notes/meta"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "changed here" in pushed_title, "the rest of the push went through"

    # the remote moves the bad ref: a new refusal, not acknowledged
    bad.ref("refs/conversations/jp-c2", bad.event(b'{"type": "turn_start"}\n'))
    assert "refused refs/conversations/jp-c2" in user.fail("pull", "origin", code=1).stderr


def test_a_damaged_acknowledgement_file_acknowledges_nothing(user: User, tmp_path: Path) -> None:
    _, bad = pushed(user, tmp_path)
    bad.ref("refs/conversations/jp-c2", bad.event(b'{"type": "turn_start", "timestamp": \n'))
    user.fail("pull", "origin", code=1)
    user.ok("doctor", "--ack", "--no-fsck")
    acks = user.store / "jp" / "acknowledged.json"
    for damage in ('{"origin": {"refs/conversations/jp-c2": 7}}', "[1, 2", "\x00\xff"):
        acks.write_text(damage)
        proc = user.fail("pull", "origin", code=1)
        assert "refused refs/conversations/jp-c2 from origin:" in proc.stderr
    user.ok("doctor", "--ack", "--no-fsck")  # writes it anew
    user.ok("pull", "origin")
