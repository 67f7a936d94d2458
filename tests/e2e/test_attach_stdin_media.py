"""Piped standard input with `jp q TEXT` (llm's idiom), and images and PDFs
through `-a`: sent in each provider's format, stored once, shown by name."""

from __future__ import annotations

import base64
import contextlib
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import User, blocks, request_text, warm_runtime
from tests.support.fake_chat import FakeChat
from tests.support.fake_messages import FakeMessages
from tests.support.sandbox import JP, TIMEOUT
from tests.support.terminal import run_on_terminal

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(range(64))
PDF = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n"
OPENAI = '[assistant]\nmax_retries = 0\n[assistant.model]\nid = "openai/gpt-test"\n'


def _requests(user: User) -> list[dict[str, Any]]:
    return [e for e in user.events(user.active()) if e["type"] == "chat_request"]


def _shell(user: User, line: str) -> subprocess.CompletedProcess[str]:
    """A command line as a person types it in a shell (real pipes, real redirections)."""
    return subprocess.run(
        ["sh", "-c", line.replace("jp ", f"{shlex.quote(str(JP))} ", 1)],
        env=user.env,
        cwd=user.root,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        stdin=subprocess.DEVNULL,
    )


# -- standard input ------------------------------------------------------------------


def test_piped_stdin_goes_with_the_text_and_is_said(online: User, fake: FakeMessages) -> None:
    fake.reply_text("Summarized.")
    proc = _shell(online, "printf 'PIPED-7781 one\\ntwo\\n' | jp q --new 'summarize this'")
    assert proc.returncode == 0, proc.stderr
    sent = request_text(fake.requests[-1])
    assert "summarize this" in sent and "PIPED-7781" in sent
    said = [line for line in proc.stderr.splitlines() if "standard input" in line]
    assert len(said) == 1 and "-a -" in said[0], proc.stderr
    (request,) = _requests(online)
    assert request["content"] == "summarize this"
    assert [a["kind"] for a in request["attachments"]] == ["stdin"]


@pytest.mark.parametrize("stdin", ["", "</dev/null", "printf '' |", "printf '\\n\\n' |"])
def test_an_empty_stdin_adds_nothing_and_says_nothing(
    online: User, fake: FakeMessages, stdin: str
) -> None:
    fake.reply_text("ok")
    line = (
        f"{stdin} jp q --new 'just this'"
        if stdin.endswith("|")
        else f"jp q --new 'just this' {stdin}"
    )
    proc = _shell(online, line)
    assert proc.returncode == 0, proc.stderr
    assert "standard input" not in proc.stderr
    (request,) = _requests(online)
    assert "attachments" not in request


def test_dash_a_dash_stays_explicit(online: User, fake: FakeMessages) -> None:
    fake.reply_text("ok")
    proc = _shell(online, "printf 'FROM-PIPE' | jp q --new -a - 'read it'")
    assert proc.returncode == 0, proc.stderr
    assert "standard input" not in proc.stderr, "an explicit -a - needs no notice"
    (request,) = _requests(online)
    assert [a["kind"] for a in request["attachments"]] == ["stdin"]


def test_a_terminal_on_stdin_is_never_read(online: User, fake: FakeMessages) -> None:
    fake.reply_text("ANSWERED-ON-A-TTY")
    code, shown = run_on_terminal(["q", "--new", "hello there"], online.env, online.root)
    assert code == 0, shown
    assert b"ANSWERED-ON-A-TTY" in shown and b"standard input" not in shown
    (request,) = _requests(online)
    assert "attachments" not in request


def test_a_piped_image_is_attached_as_an_image(
    online: User, fake: FakeMessages, tmp_path: Path
) -> None:
    (tmp_path / "shot.bin").write_bytes(PNG)
    fake.reply_text("A picture.")
    proc = _shell(online, f"cat {tmp_path / 'shot.bin'} | jp q --new 'what is this?'")
    assert proc.returncode == 0, proc.stderr
    (image,) = blocks(fake.requests[-1], "image")
    assert base64.b64decode(image["source"]["data"]) == PNG


# -- images and PDFs -------------------------------------------------------------------


def test_images_and_pdfs_go_to_anthropic_as_blocks_and_are_stored_once(
    online: User, fake: FakeMessages, tmp_path: Path
) -> None:
    (tmp_path / "diagram.md").write_bytes(PNG)  # the name says text, the bytes say PNG
    (tmp_path / "paper.pdf").write_bytes(PDF)
    fake.reply_text("Seen.")
    online.ok(
        "q", "--new", "-a", str(tmp_path / "diagram.md"), "-a", str(tmp_path / "paper.pdf"), "look"
    )
    body = fake.requests[-1]
    (image,) = blocks(body, "image")
    (document,) = blocks(body, "document")
    assert image["source"] == {
        "type": "base64",
        "media_type": "image/png",
        "data": base64.b64encode(PNG).decode(),
    }
    assert document["source"]["media_type"] == "application/pdf"
    assert "diagram.md" in request_text(body), "the text does not name the image"
    (request,) = _requests(online)
    stored = request["attachments"][0]
    assert stored["media_type"] == "image/png" and stored["size"] == len(PNG)
    fake.reply_text("Still seen.")
    online.ok("q", "and now?")
    assert len(blocks(fake.requests[-1], "image")) == 1, "the next turn did not send it again"
    assert len(_requests(online)) == 2 and "attachments" not in _requests(online)[1]
    shown = online.ok("conversation", "print", "--style", "full")
    assert "diagram.md (image/png, 80 bytes)" in shown and "paper.pdf (application/pdf" in shown
    online.fsck()


@pytest.fixture
def chat() -> Iterator[FakeChat]:
    with FakeChat() as server:
        yield server


@pytest.mark.parametrize("warm", [False, True], ids=["in-process", "warm"])
def test_chat_completions_get_the_attachments(
    user: User, chat: FakeChat, tmp_path: Path, warm: bool
) -> None:
    user.env.update(chat.env())
    user.config(OPENAI)
    (tmp_path / "notes.txt").write_text("TEXT-ATTACHMENT-2210\n")
    (tmp_path / "photo.jpg").write_bytes(b"\xff\xd8\xff\xe0" + bytes(40))
    chat.reply_text("I see them.")
    with warm_runtime(user) if warm else contextlib.nullcontext():
        user.ok(
            "q",
            "--new",
            "-a",
            str(tmp_path / "notes.txt"),
            "-a",
            str(tmp_path / "photo.jpg"),
            "read",
        )
    (message,) = [m for m in chat.requests[-1]["messages"] if m["role"] == "user"]
    parts = message["content"]
    texts = " ".join(p.get("text", "") for p in parts if p["type"] == "text")
    assert "TEXT-ATTACHMENT-2210" in texts and "read" in texts
    (image,) = [p for p in parts if p["type"] == "image_url"]
    assert image["image_url"]["url"].startswith("data:image/jpeg;base64,/9j/")


def test_a_pdf_is_refused_where_the_provider_cannot_take_it(
    user: User, chat: FakeChat, tmp_path: Path
) -> None:
    user.env.update(chat.env())
    user.config(OPENAI)
    (tmp_path / "paper.pdf").write_bytes(PDF)
    before = user.snapshot()
    proc = user.fail("q", "--new", "-a", str(tmp_path / "paper.pdf"), "read", code=1)
    assert proc.stderr.startswith("error: ") and "paper.pdf" in proc.stderr
    assert "PDF" in proc.stderr and len(proc.stderr.splitlines()) <= 2
    assert user.snapshot() == before and not chat.requests


def test_the_offline_model_names_what_it_cannot_see(user: User, tmp_path: Path) -> None:
    (tmp_path / "cat.gif").write_bytes(b"GIF89a" + bytes(30))
    out = user.ok("q", "--new", "-a", str(tmp_path / "cat.gif"), "what is it?")
    assert "cannot see images" in out and "cat.gif" in out and "image/gif" in out


def test_stdin_as_the_question_is_bounded_utf8(online: User, fake: FakeMessages) -> None:
    before = online.snapshot()
    proc = _shell(online, "printf '\\377\\376 not text' | jp q --new")
    assert proc.returncode == 1 and proc.stderr.startswith("error: standard input is not UTF-8")
    proc = _shell(online, "head -c 3000000 /dev/zero | tr '\\0' x | jp q --new")
    assert proc.returncode == 1 and "larger than" in proc.stderr, proc.stderr
    assert online.snapshot() == before and not fake.requests
    fake.reply_text("ok")
    assert _shell(online, "printf 'QUESTION-FROM-PIPE' | jp q --new").returncode == 0
    assert "QUESTION-FROM-PIPE" in request_text(fake.requests[-1])
