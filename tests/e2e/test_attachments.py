"""`jp q -a` and `--attach-cmd` as an attacker would use them: links out of the
folder, devices, FIFOs, huge and disguised files, a command that leaves a child
behind or looks for a key; and what the user sees of attachments afterwards."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from tests.e2e.harness import User, request_text, warm_runtime
from tests.support.fake_messages import FakeMessages

PIXEL = Path(__file__).parents[1] / "support" / "media" / "pixel.png"
SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- SECRET-KEY-MATERIAL-4471"


def _requests(user: User, cid: str) -> list[dict[str, Any]]:
    return [e for e in user.events(cid) if e["type"] == "chat_request"]


def _clone_with_a_planted_link(tmp_path: Path) -> tuple[Path, Path]:
    """A 'cloned repository' whose NOTES.md is a link to a private key outside it."""
    home = tmp_path / "home" / ".ssh"
    home.mkdir(parents=True)
    key = home / "id_ed25519"
    key.write_text(SECRET + "\n")
    repo = tmp_path / "clone"
    (repo / "docs").mkdir(parents=True)
    (repo / "README.md").write_text("README-TEXT\n")
    (repo / "docs" / "guide.md").write_text("GUIDE-TEXT\n")
    (repo / "NOTES.md").symlink_to(key)
    (repo / "docs" / "also.md").symlink_to(key)
    (repo / "inside.md").symlink_to(repo / "README.md")  # a link that stays inside is fine
    return repo, key


def test_a_glob_skips_links_out_of_its_folder_and_says_so(
    online: User, fake: FakeMessages, tmp_path: Path
) -> None:
    repo, _ = _clone_with_a_planted_link(tmp_path)
    fake.reply_text("Read them.")
    proc = online.run("q", "--new", "-a", str(repo / "**" / "*.md"), "what is here?")
    assert proc.returncode == 0, proc.stderr
    sent = request_text(fake.requests[-1])
    assert "README-TEXT" in sent and "GUIDE-TEXT" in sent
    assert "SECRET-KEY-MATERIAL" not in sent, "a link out of the folder was followed"
    assert "SECRET-KEY-MATERIAL" not in online.git("log", "-p", "--all")
    assert "NOTES.md" in proc.stderr and "also.md" in proc.stderr and "skipped" in proc.stderr
    sources = [a["source"] for a in _requests(online, online.active())[0]["attachments"]]
    assert any(s.endswith("inside.md") for s in sources)


def test_a_named_link_out_of_its_folder_is_refused(
    online: User, fake: FakeMessages, tmp_path: Path
) -> None:
    repo, key = _clone_with_a_planted_link(tmp_path)
    before = online.snapshot()
    proc = online.fail("q", "--new", "-a", str(repo / "NOTES.md"), "read my notes", code=1)
    assert proc.stderr.startswith("error: ") and "link" in proc.stderr
    assert str(key) in proc.stderr, "the refusal does not say where the link leads"
    assert online.snapshot() == before and not fake.requests


def test_devices_fifos_huge_and_disguised_files_are_refused(
    online: User, fake: FakeMessages, tmp_path: Path
) -> None:
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    (tmp_path / "huge.md").write_bytes(b"x" * (8 * 1024 * 1024))
    (tmp_path / "program.md").write_bytes(b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 64)
    (tmp_path / "zero.md").symlink_to("/dev/zero")
    (tmp_path / "big.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * (4 * 1024 * 1024))
    many = tmp_path / "many"
    many.mkdir()
    for i in range(6):
        (many / f"{i}.txt").write_text("y" * (500 * 1024))
    before = online.snapshot()
    for flags in (
        ["-a", "/dev/zero"],
        ["-a", str(fifo)],
        ["-a", str(tmp_path / "huge.md")],
        ["-a", str(tmp_path / "program.md")],
        ["-a", str(tmp_path / "zero.md")],
        ["-a", str(tmp_path / "big.png")],
        ["-a", str(many / "*.txt")],  # each one fits, together they do not
    ):
        proc = online.fail("q", "--new", *flags, "question", code=1)
        assert proc.stderr.startswith("error: ") and len(proc.stderr.splitlines()) <= 2, proc.stderr
    assert online.snapshot() == before, "a refused attachment left something in the store"
    assert not fake.requests


def test_a_glob_says_what_it_skipped_that_is_no_regular_file(
    online: User, fake: FakeMessages, tmp_path: Path
) -> None:
    (tmp_path / "a.md").write_text("A-TEXT\n")
    os.mkfifo(tmp_path / "b.md")
    fake.reply_text("ok")
    proc = online.run("q", "--new", "-a", str(tmp_path / "*.md"), "read")
    assert proc.returncode == 0, proc.stderr
    assert "b.md" in proc.stderr and "not a regular file" in proc.stderr
    assert "A-TEXT" in request_text(fake.requests[-1])


def test_an_attached_command_gets_the_minimal_environment(online: User, fake: FakeMessages) -> None:
    online.config(
        '[assistant.model]\nid = "anthropic/claude-test"\n'
        '[providers.llama]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'api_key_env = "LLAMA_TOKEN"\n'
    )
    online.env.update({"LLAMA_TOKEN": "llama-secret-9931", "MY_OWN_SETTING": "kept-out"})
    fake.reply_text("ok")
    probe = "import os, json; print(json.dumps(sorted(os.environ)))"
    online.ok("q", "--new", "--attach-cmd", f"python3 -c '{probe}'", "env?")
    request = _requests(online, online.active())[0]
    names = json.loads(request["attachments"][0]["content"])
    assert "LLAMA_TOKEN" not in names and "ANTHROPIC_API_KEY" not in names
    assert "MY_OWN_SETTING" not in names, "the command saw more than a command tool would"
    assert "PATH" in names
    assert "llama-secret-9931" not in online.git("log", "-p", "--all")


def test_an_attached_command_that_leaves_a_child_behind_does_not_hold_jp(
    online: User, fake: FakeMessages, tmp_path: Path
) -> None:
    pidfile = tmp_path / "child.pid"
    script = tmp_path / "leave.sh"
    script.write_text(f"#!/bin/sh\nsleep 600 &\necho $! > {pidfile}\necho LEFT-BEHIND\n")
    script.chmod(0o755)
    fake.reply_text("ok")
    # before the fix jp waited for the child's end of the pipe: the harness's timeout
    online.ok("q", "--new", "--attach-cmd", str(script), "what did it say?")
    assert "LEFT-BEHIND" in request_text(fake.requests[-1])
    child = int(pidfile.read_text())
    for _ in range(200):  # the group was killed: the child goes as soon as it is reaped
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        os.kill(child, signal.SIGKILL)
        raise AssertionError("the command's child outlived it")


def test_attachments_are_shown_by_print_and_named_in_the_commit(
    online: User, fake: FakeMessages, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("NOTE-BODY-55\n")
    fake.reply_text("ok")
    online.ok("q", "--new", "-a", str(tmp_path / "notes.txt"), "read the notes")
    cid = online.active()
    chat = online.ok("conversation", "print", "--style", "chat")
    assert "notes.txt" in chat and "13 bytes" in chat and "NOTE-BODY-55" not in chat
    full = online.ok("conversation", "print", "--style", "full")
    assert "notes.txt" in full and "NOTE-BODY-55" in full
    log = online.git("log", "--format=%B", f"refs/conversations/{cid}")
    assert "Attached: file" in log and "notes.txt (13 bytes)" in log


def test_the_warm_process_never_inherits_a_configured_providers_key(
    online: User, fake: FakeMessages
) -> None:
    online.config(
        '[assistant.model]\nid = "anthropic/claude-test"\n'
        '[providers.llama]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'api_key_env = "LLAMA_TOKEN"\n'
    )
    online.env["LLAMA_TOKEN"] = "llama-secret-9931"
    with warm_runtime(online):
        fake.reply_text("Warm.")
        online.ok("q", "--new", "hello")
        (row,) = online.json("model", "status")
        environ = Path(f"/proc/{row['pid']}/environ")
        if environ.exists():
            held = environ.read_bytes()
            assert b"LLAMA_TOKEN" not in held and b"llama-secret-9931" not in held


def test_git_gc_beside_queries_with_attachments_loses_nothing(
    online: User, fake: FakeMessages, tmp_path: Path
) -> None:
    (tmp_path / "pixel.png").write_bytes(PIXEL.read_bytes())
    (tmp_path / "notes.txt").write_text("GC-NOTES\n")
    fake.reply_text("Seen.", times=None)
    online.ok("q", "--new", "start")
    cid = online.active()
    stop = threading.Event()

    def maintain() -> None:
        while not stop.is_set():
            subprocess.run(
                ["git", "--git-dir", str(online.store), "gc", "--quiet"],
                env=online.env,
                capture_output=True,
            )

    gc = threading.Thread(target=maintain, daemon=True)
    gc.start()
    try:
        for n in range(3):
            online.ok(
                "q",
                "-a",
                str(tmp_path / "pixel.png"),
                "-a",
                str(tmp_path / "notes.txt"),
                f"look {n}",
            )
    finally:
        stop.set()
        gc.join(timeout=60)
    requests = _requests(online, cid)[1:]
    assert [r["content"] for r in requests] == ["look 0", "look 1", "look 2"]
    for request in requests:
        image, notes = request["attachments"]
        assert base64.b64decode(image["data"]) == PIXEL.read_bytes()
        assert notes["content"] == "GC-NOTES\n"
    online.fsck()


def test_a_glob_that_only_meets_links_out_says_what_it_skipped(
    online: User, fake: FakeMessages, tmp_path: Path
) -> None:
    repo, _ = _clone_with_a_planted_link(tmp_path)
    proc = online.fail("q", "--new", "-a", str(repo / "NOTES*"), "notes?", code=1)
    assert proc.stderr.startswith("error: no file to attach matches")
    assert "NOTES.md: a link to outside" in proc.stderr and not fake.requests
