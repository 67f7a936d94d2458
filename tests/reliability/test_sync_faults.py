"""Pull under faults of this machine, and a remote that keeps a bad ref.

A full disk while a pack arrives is this machine's fault, not the remote's:
the pull fails with one line and the next one fetches again.  A remote ref
that breaks the rules is refused at every pull while the remote keeps it;
once the user acknowledges it, the rest of the sync reports success and the
ref stays listed in quarantine.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.reliability.harness import RUST, RUST_ID, TRACEBACK, Sandbox
from tests.reliability.test_environment import _on_tmpfs, needs_mounts
from tests.support.sandbox import JP

BIG = "17800000177-a-big-one"
BIG_ID = "jp-c17800000177"


def big_conversation(where: Path, name: str = BIG) -> Path:
    """The Rust conversation with a request of 600 KB that does not compress."""
    folder = where / name
    shutil.copytree(RUST, folder)
    events = json.loads((folder / "events.json").read_text())
    noise = base64.b64encode(os.urandom(450_000)).decode()
    request = next(e for e in events if e.get("type") == "chat_request")
    request["content"] = noise
    (folder / "events.json").write_text(json.dumps(events))
    return folder


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Sandbox, Sandbox]:
    """A remote, a store that pushed a big conversation to it, and one that has not pulled."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    sender, here = Sandbox(tmp_path / "sender"), Sandbox(tmp_path / "here")
    for box in (sender, here):
        box.ok("init")
        box.ok("remote", "add", "origin", str(remote))
    sender.ok("conversation", "import", str(big_conversation(tmp_path)))
    sender.ok("push", "origin")
    return sender, here


def on_a_full_disk(box: Sandbox, free_kb: int, *steps: str) -> list[tuple[int, str]]:
    """Run shell ``steps`` with the store copied onto a tmpfs with ``free_kb`` free
    (``$JP`` runs jp on it, ``$FILL`` is what fills the disk); each step's exit
    code and output."""
    script = _on_tmpfs(box, free_kb) + f" && FILL={box.root}/mnt/fill"
    for step in steps:
        script += f' && {{ {step}; echo "\n=== $?"; }}'
    proc = subprocess.run(
        ["unshare", "-m", "sh", "-c", script, "sh"],
        env={**box.env, "JP": str(JP)},
        cwd=box.root / "work",
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert TRACEBACK not in proc.stdout + proc.stderr, proc.stderr
    parts = proc.stdout.split("\n=== ")
    codes = [int(part.split("\n", 1)[0]) for part in parts[1:]]
    texts = [parts[0]] + [part.split("\n", 1)[1] if "\n" in part else "" for part in parts[1:]]
    assert len(codes) == len(steps), proc.stderr
    return list(zip(codes, texts[: len(codes)], strict=True))


@needs_mounts
def test_a_pull_that_fails_on_a_full_disk_is_retried_not_refused(
    pair: tuple[Sandbox, Sandbox],
) -> None:
    _, here = pair
    quarantine = "$JP_STORE/jp/quarantine/origin.json"
    out = on_a_full_disk(
        here,
        200,
        '"$JP" pull origin 2>&1',
        f"cat {quarantine} 2>/dev/null; true",
        'rm "$FILL" && "$JP" pull origin 2>&1',
        'git --git-dir="$JP_STORE" for-each-ref refs/conversations; "$JP" doctor --no-fsck',
    )
    (code, first), (_, reasons), (again, second), (_, after) = out
    assert code != 0, first
    errors = [line for line in first.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "no space left" in errors[0], first
    assert "refused" not in first and "internal error" not in first, first
    assert BIG_ID not in reasons.split("\n", 1)[-1], "remembered as the remote's fault"
    assert again == 0 and f"{BIG_ID}: new from origin" in second, second
    assert f"refs/conversations/{BIG_ID}" in after and "healthy" in after, after


def test_a_fetch_refusal_remembered_for_a_full_disk_is_retried(
    pair: tuple[Sandbox, Sandbox],
) -> None:
    """What an earlier jp remembered: the ref refused "at fetch" for a local fault."""
    sender, here = pair
    tip = sender.refs("refs/conversations")[f"refs/conversations/{BIG_ID}"]
    reasons = here.store / "jp" / "quarantine"
    reasons.mkdir(parents=True, exist_ok=True)
    why = "git could not fetch it (fatal: write error: No space left on device)"
    entry = {"tip": tip, "reason": why, "kept": False, "limit": 0, "stage": "fetch"}
    (reasons / "origin.json").write_text(json.dumps({f"refs/conversations/{BIG_ID}": entry}))
    here.ok("pull", "origin")
    assert f"refs/conversations/{BIG_ID}" in here.refs("refs/conversations")


# -- a full disk under the commands that mend and move back ------------------------------


def full_disk_then_freed(box: Sandbox, args: str, free_kb: int = 0) -> tuple[str, str, str]:
    """``jp args`` on a full disk, then git fsck, then the same once space is freed:
    the three outputs (each step's exit code checked here)."""
    fsck = 'git --git-dir="$JP_STORE" fsck --no-dangling --no-progress 2>&1'
    (code, full), (checked, fsck_out), (again, freed) = on_a_full_disk(
        box, free_kb, f'"$JP" {args} 2>&1', fsck, f'rm "$FILL" && "$JP" {args} 2>&1'
    )
    assert code != 0, full
    errors = [line for line in full.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "no space left" in errors[0], full
    assert "internal error" not in full and "another writer" not in full, full
    assert checked == 0, fsck_out
    assert again == 0, freed
    return full, fsck_out, freed


@pytest.fixture
def edited(tmp_path: Path) -> Sandbox:
    box = Sandbox(tmp_path / "box")
    box.ok("init")
    box.ok("conversation", "import", "--activate", str(RUST))
    box.ok("conversation", "edit", RUST_ID, "--title", "one")
    box.ok("conversation", "archive", RUST_ID, "--yes")
    return box


@needs_mounts
def test_undo_on_a_full_disk(edited: Sandbox) -> None:
    _, _, freed = full_disk_then_freed(edited, "undo")
    assert "Undid operation" in freed and "archive" in freed


@needs_mounts
def test_op_restore_on_a_full_disk(edited: Sandbox) -> None:
    first = edited.json("op", "log")[-1]["id"]
    _, _, freed = full_disk_then_freed(edited, f"op restore {first}")
    assert "Restored the store" in freed


@needs_mounts
def test_doctor_fix_on_a_full_disk(edited: Sandbox) -> None:
    edited.kill("move:committed", "conversation", "unarchive", RUST_ID)
    _, _, freed = full_disk_then_freed(edited, "doctor --fix --no-fsck")
    assert "is healthy" in freed


@needs_mounts
def test_a_pull_with_a_quarantined_ref_on_a_full_disk(
    pair: tuple[Sandbox, Sandbox], tmp_path: Path
) -> None:
    from tests.unit.sync.hostile import Hostile

    sender, here = pair
    bad = Hostile(tmp_path / "remote.git")
    bad.ref("refs/conversations/jp-c2", bad.event(b'{"type": "turn_start", "timestamp": \n'))
    here.fail("pull", "origin")
    here.ok("doctor", "--ack", "--no-fsck")
    assert here.refs("refs/jp/quarantine")
    sender.ok("conversation", "import", str(big_conversation(tmp_path, "17800000178-another")))
    sender.run("push", "origin")  # refuses the bad ref too, and sends the rest
    assert "refs/conversations/jp-c17800000178" in bad.git("for-each-ref")
    _, _, freed = full_disk_then_freed(here, "pull origin")
    assert "jp-c17800000178: new from origin" in freed
    assert "(acknowledged)" in freed


@needs_mounts
def test_a_query_with_an_attachment_on_a_full_disk(edited: Sandbox) -> None:
    edited.ok("conversation", "unarchive", RUST_ID)
    (edited.root / "work" / "notes.md").write_text("# notes\n" + "a line of notes\n" * 2000)
    before = edited.conversations()[RUST_ID].events
    _, _, freed = full_disk_then_freed(edited, f"q -i {RUST_ID} -a notes.md 'read this'")
    assert freed.strip(), "the freed query printed no answer"
    assert edited.conversations()[RUST_ID].events == before, "the copy on the tmpfs changed"


@needs_mounts
def test_a_warm_query_on_a_full_disk(edited: Sandbox) -> None:
    import tempfile

    from tests.support.fake_messages import FakeMessages

    edited.ok("conversation", "unarchive", RUST_ID)
    run = Path(tempfile.mkdtemp(prefix="jpw-", dir="/tmp"))  # a socket path stays short
    with FakeMessages() as fake:
        edited.env.update({**fake.env(), "JP_WARM": "1", "XDG_RUNTIME_DIR": str(run)})
        edited.config_file.write_text('[assistant.model]\nid = "anthropic/claude-test"\n')
        fake.reply_text("A warm answer.", times=None)
        try:
            _, _, freed = full_disk_then_freed(edited, f"q -i {RUST_ID} 'hello warm'")
            assert "A warm answer." in freed
        finally:
            edited.run("model", "stop")
            shutil.rmtree(run, ignore_errors=True)
