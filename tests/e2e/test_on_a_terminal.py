"""What a person at a terminal sees: shell completion as typed, the `use`
picker, the editor for a query, and answers rendered as Markdown.

Each test runs on a pseudo-terminal that is the program's controlling
terminal (`tests.support.terminal.Terminal`): keys are typed into it and the
screen's bytes are read back, as a terminal window would show them.
"""

from __future__ import annotations

import re
import shutil
import stat
from pathlib import Path

import pytest

from tests.e2e.harness import JP, NO_MARKERS, RUST, User
from tests.e2e.test_terminal import hostile_folder
from tests.support.fake_messages import FakeMessages
from tests.support.terminal import Terminal, raw_controls

SGR = re.compile(rb"\x1b\[[0-9;]*m")
SPINNER = re.compile(rb"\r[|/\\-] [a-z ]+|\r +\r")  # jp's own "waiting for the model"
ANSWER = "# Plan\n\nUse **clap** for `args`.\n\n- parse\n- run\n\n```sh\ncargo run\n```\n"


def plain(shown: bytes) -> bytes:
    """What is left of the screen's bytes without jp's own styles (SGR) and spinner."""
    return SPINNER.sub(b"", SGR.sub(b"", shown))


def jp(user: User, *args: str) -> Terminal:
    return Terminal([str(JP), *args], user.env, user.root)


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_completion_as_typed_in_bash(user: User, tmp_path: Path) -> None:
    rust = user.import_(RUST)
    plain_id = user.import_(NO_MARKERS)
    script = tmp_path / "jp.bash"
    script.write_text(user.ok("completion", "bash"))
    rc = tmp_path / "bashrc"
    rc.write_text(
        f"PS1='$ '\nPATH={JP.parent}:$PATH\nsource {script}\n"
        "bind 'set show-all-if-ambiguous on'\nbind 'set bell-style none'\n"
    )
    shell = Terminal(["bash", "--noprofile", "--rcfile", str(rc), "-i"], user.env, user.root)
    shell.expect(b"$ ")
    shell.send("jp conversation sho\t")
    shell.expect(b"jp conversation show ")
    shell.send("\x15jp c use 17800000\t")  # Ctrl-U clears the line first
    shown = shell.expect(rust.removeprefix("jp-c").encode())
    shell.expect(plain_id.removeprefix("jp-c").encode())
    shell.send("\x15jp config get assistant.model.i\t")
    shell.expect(b"assistant.model.id ")
    shell.send("\x15exit\r")
    code, shown = shell.finish()
    assert code == 0, shown


def test_use_without_a_target_is_a_picker(user: User) -> None:
    first = user.import_(NO_MARKERS)
    second = user.import_(RUST)
    user.ok("conversation", "use", second)
    term = jp(user, "conversation", "use")
    shown = term.expect(b"Use which?")
    listed = plain(shown).decode()
    assert listed.index(second) < listed.index(first), "most recent first, the active one marked"
    assert f"* {second}" in listed
    number = next(
        ln.split()[0].rstrip("*")
        for ln in listed.splitlines()
        if first in ln and ln.strip()[0].isdigit()
    )
    term.send(number + "\r")
    code, shown = term.finish()
    assert code == 0, shown
    assert f"Switched active conversation from {second} to {first}".encode() in shown
    assert user.active() == first
    term = jp(user, "conversation", "use")
    term.expect(b"Use which?")
    term.send("\r")  # nothing chosen
    code, shown = term.finish()
    assert code == 0 and b"Nothing chosen" in shown and user.active() == first
    piped = user.fail("conversation", "use", code=2)
    assert "needs a target" in piped.stderr, "off a terminal it is an error, not a guess"


def test_the_picker_shows_a_hostile_title_escaped(user: User, tmp_path: Path) -> None:
    cid = user.import_(hostile_folder(tmp_path, "17800000301-pick", "\x1b]0;PWNED\x07ok\nrow"))
    term = jp(user, "conversation", "use")
    term.expect(b"Use which?")
    term.send("1\r")
    code, shown = term.finish()
    assert code == 0 and user.active() == cid, shown
    assert raw_controls(plain(shown)) == [], f"raw controls reached the terminal: {shown!r}"
    assert b"\\x1b]0;PWNED\\x07ok\\nrow" in shown


def _typing_editor(tmp_path: Path) -> str:
    """An editor that asks on the terminal and appends what is typed to the file."""
    script = tmp_path / "editor.py"
    script.write_text(
        "import sys\n"
        "out = open('/dev/tty', 'w')\n"
        "out.write('EDITOR> '); out.flush()\n"
        "line = open('/dev/tty').readline()\n"
        "open(sys.argv[1], 'a').write(line)\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return f"python3 {script}"


def test_the_editor_opens_and_the_answer_is_rendered(
    online: User, fake: FakeMessages, tmp_path: Path
) -> None:
    fake.reply_text(ANSWER, when={"last_user_contains": "How do I parse"})
    env = {**online.env, "JP_EDITOR": _typing_editor(tmp_path)}
    term = Terminal([str(JP), "q", "--new"], env, online.root)
    term.expect(b"EDITOR> ")
    term.send("How do I parse arguments?\r")
    code, shown = term.finish()
    assert code == 0, shown
    request = online.json("conversation", "print", "--style", "full")["events"]
    assert [e["content"] for e in request if e["type"] == "chat_request"] == [
        "How do I parse arguments?"
    ]
    _assert_rendered(shown)
    term = jp(online, "conversation", "print", "--style", "chat")
    code, shown = term.finish()
    assert code == 0 and b"> How do I parse arguments?" in shown
    _assert_rendered(shown)
    term = jp(online, "conversation", "print", "--style", "chat", "--no-render")
    code, shown = term.finish()
    assert b"Use **clap** for `args`." in shown and not SGR.search(shown)
    piped = online.ok("conversation", "print", "--style", "chat")
    assert "Use **clap** for `args`." in piped, "piped output is the model's own text"


def _assert_rendered(shown: bytes) -> None:
    assert b"\x1b[1mclap\x1b[0m" in shown, f"bold is not shown as bold: {shown!r}"
    text = plain(shown)
    assert b"**clap**" not in text and b"```" not in text and b"# Plan" not in text
    assert b"Plan" in text and b"cargo run" in text and b"\xe2\x80\xa2 parse" in text
    assert raw_controls(text) == [], "only jp's own styles reach the terminal"


def test_hostile_markdown_is_escaped_before_it_is_rendered(
    online: User, fake: FakeMessages
) -> None:
    hostile = "**bold \x1b]0;PWNED\x07** and [link](http://x \x1b[2J)\n\n```\n\x1b[31mred\n```\n"
    fake.reply_text(hostile, when={"last_user_contains": "hostile"})
    code, shown = jp(online, "q", "--new", "hostile").finish()
    assert code == 0, shown
    text = plain(shown)
    assert raw_controls(text) == [], f"raw controls reached the terminal: {shown!r}"
    assert b"\\x1b]0;PWNED\\x07" in text and b"\\x1b[31mred" in text
    assert b"\x1b]8;" not in shown, "no terminal hyperlink"


def test_an_interrupted_answer_keeps_its_lines(online: User, fake: FakeMessages) -> None:
    """A stream cut mid-answer: what arrived is shown line for line, as the model
    wrote it, and the error says how to go on (`jp q --retry`)."""
    head = "Steps:\nfirst line\nsecond line\nthird line"
    cut = head + "\n" + "x" * (2 * len(head) + 1)  # the stream breaks after its first third
    fake.reply_drop_mid_stream(cut, when={"last_user_contains": "cut me"})
    code, shown = jp(online, "q", "--new", "cut me").finish()
    assert code != 0, shown
    text = plain(shown).replace(b"\r\n", b"\n")
    assert b"second line\n" in text and b"third line" in text, text
    assert b"second line third line" not in text, text
    assert b"`jp q --retry` answers again" in text, text


def test_an_answer_cut_by_ctrl_c_keeps_its_lines(online: User, fake: FakeMessages) -> None:
    """Ctrl-C while a paragraph is arriving: what arrived is shown line for line."""
    import threading

    from tests.support.messages_api import message, sse_events

    head = "Steps:\nfirst line\nsecond line\nthird line\n"
    text = head + "x" * (len(head) // 2)  # the first two of three pieces are the head
    events = sse_events(message([{"type": "text", "text": text}]))
    later = threading.Event()
    fake.reply_events(events, {"last_user_contains": "stop me"}, hold={5: later})
    try:
        term = jp(online, "q", "--new", "stop me")
        term.expect(b"receiving the answer")  # the paragraph is held, still arriving
        term.send("\x03")
        code, shown = term.finish()
    finally:
        later.set()
    assert code == 130, shown
    text_shown = plain(shown).replace(b"\r\n", b"\n")
    assert b"first line\nsecond line\nthird line" in text_shown, text_shown
    assert b"`jp q --retry` answers it again" in text_shown, text_shown
