"""An answer as a person at a terminal watches it arrive: code lines appear before
their block closes, a spinner shows while nothing can (before the first token,
while text that is not shown yet arrives, while a tool runs) and leaves nothing
on the screen; piped, or with NO_COLOR or TERM=dumb, none of it.

The model is the loopback fake holding its stream at a chosen event until the
test has seen what it waits for (``reply_events(..., hold=...)``): no timers.
"""

from __future__ import annotations

import re
import subprocess
import threading
from pathlib import Path

import pytest

from tests.e2e.harness import JP, User
from tests.support.fake_messages import FakeMessages, message, sse_events
from tests.support.messages_api import Event
from tests.support.terminal import Terminal, raw_controls, screen

SGR = re.compile(rb"\x1b\[[0-9;]*m")
FIRST_DELTA = 3  # message_start, ping, content_block_start, then the deltas
SPINNERS = ("waiting for the model", "receiving the answer", "running ")


def text_events(pieces: list[str]) -> list[Event]:
    """The stream of one text answer sent as exactly ``pieces``."""
    events = sse_events(message([{"type": "text", "text": "".join(pieces)}]))
    rest = [e for e in events[FIRST_DELTA:] if e[0] != "content_block_delta"]
    deltas: list[Event] = [
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}},
        )
        for p in pieces
    ]
    return events[:FIRST_DELTA] + deltas + rest


def held(fake: FakeMessages, pieces: list[str], before: str, prompt: str) -> threading.Event:
    """Script ``pieces`` for ``prompt``, the stream held before the piece ``before``."""
    gate = threading.Event()
    hold = {FIRST_DELTA + pieces.index(before): gate}
    fake.reply_events(text_events(pieces), when={"last_user_contains": prompt}, hold=hold)
    return gate


def query(user: User, *args: str, env: dict[str, str] | None = None) -> Terminal:
    return Terminal([str(JP), "q", *args], env or user.env, user.root)


def assert_clean(shown: bytes) -> list[str]:
    """The final screen: no spinner left on it, no raw control from the answer."""
    lines = screen(shown)
    left = [ln for ln in lines if any(s in ln for s in SPINNERS)]
    assert left == [], f"spinner residue on the screen: {left!r}"
    assert raw_controls(SGR.sub(b"", shown).replace(b"\r", b"")) == []
    return lines


CODE = ["Here is the plan.\n\n", "```python\n", "first = 1\n", "second = ", "2\n"]
CODE_END = ["third = 3\n", "```\n", "Done.\n"]


@pytest.mark.usefixtures("model_process")  # in process, then through the warm process
def test_code_lines_show_before_the_block_closes(online: User, fake: FakeMessages) -> None:
    gate = held(fake, CODE + CODE_END, "third = 3\n", "slow code")
    term = query(online, "--new", "slow code")
    shown = term.expect(b"second")
    assert b"Here is the plan." in shown and b"first" in shown
    assert b"third" not in shown and b"Done" not in shown, "the stream is still held"
    gate.set()
    code, shown = term.finish()
    assert code == 0, shown
    lines = assert_clean(shown)
    body = [ln for ln in lines if ln.strip()]
    assert body[:5] == ["Here is the plan.", " first = 1", " second = 2", " third = 3", "Done."]
    assert b"\x1b[94m" in shown, "code is highlighted as it streams"


def test_a_spinner_shows_until_the_first_token(online: User, fake: FakeMessages) -> None:
    pieces = ["The answer ", "is here.\n"]
    gate = held(fake, pieces, "The answer ", "wait for it")
    term = query(online, "--new", "wait for it")
    term.expect(b"waiting for the model")
    gate.set()
    code, shown = term.finish()
    assert code == 0, shown
    lines = assert_clean(shown)
    assert "The answer is here." in lines


def test_a_spinner_shows_while_text_is_held(online: User, fake: FakeMessages) -> None:
    pieces = ["A paragraph that ", "is still arriving ", "ends here.\n\n", "Next.\n"]
    gate = held(fake, pieces, "ends here.\n\n", "hold the text")
    term = query(online, "--new", "hold the text")
    shown = term.expect(b"receiving the answer")
    assert b"A paragraph" not in SGR.sub(b"", shown), "a block is shown once it is complete"
    gate.set()
    code, shown = term.finish()
    assert code == 0, shown
    lines = assert_clean(shown)
    assert "A paragraph that is still arriving ends here." in lines and "Next." in lines


SLOW_TOOL = """
[assistant]
max_retries = 0
[assistant.model]
id = "anthropic/claude-test"
[conversation.tools.slow_tool]
command = ["python3", "-c", "import os, time\\nwhile not os.path.exists('{flag}'): time.sleep(0.05)\\nprint('SLOW-DONE')"]
confirm = false
"""


def test_a_spinner_shows_while_a_tool_runs(
    online: User, fake: FakeMessages, tmp_path: Path
) -> None:
    flag = tmp_path / "release"
    online.config(SLOW_TOOL.replace("{flag}", str(flag)))
    fake.reply_blocks(
        [{"type": "tool_use", "name": "slow_tool", "input": {}}],
        when={"last_user_contains": "run the slow one"},
    )
    fake.reply_text("The tool said SLOW-DONE.\n", when={"last_user_contains": "SLOW-DONE"})
    term = query(online, "--new", "run the slow one")
    term.expect(b"running slow_tool")
    flag.write_text("go")
    code, shown = term.finish()
    assert code == 0, shown
    lines = assert_clean(shown)
    assert "The tool said SLOW-DONE." in lines


def test_piped_output_is_the_exact_text_and_no_spinner(online: User, fake: FakeMessages) -> None:
    pieces = CODE + CODE_END
    gate = held(fake, pieces, "third = 3\n", "piped")
    timer = threading.Timer(0.5, gate.set)  # long enough for a spinner to have drawn
    timer.start()
    try:
        proc = subprocess.run(
            [str(JP), "q", "--new", "piped"],
            env=online.env,
            cwd=online.root,
            capture_output=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
    finally:
        timer.cancel()
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode() == "".join(pieces), "piped output is the model's exact text"
    assert not any(s.encode() in proc.stderr for s in SPINNERS)


@pytest.mark.parametrize("setting", ["NO_COLOR=1", "TERM=dumb"])
def test_no_spinner_without_colours(online: User, fake: FakeMessages, setting: str) -> None:
    pieces = ["Plain ", "text.\n"]
    gate = held(fake, pieces, "Plain ", "no colours")
    # through env(1): the terminal itself says TERM=xterm
    term = Terminal(["env", setting, str(JP), "q", "--new", "no colours"], online.env, online.root)
    timer = threading.Timer(0.5, gate.set)  # long enough for a spinner to have drawn
    timer.start()
    try:
        code, shown = term.finish()
    finally:
        timer.cancel()
    assert code == 0, shown
    assert not any(s.encode() in shown for s in SPINNERS), shown
    assert b"Plain text." in shown and not SGR.search(shown)


HOSTILE_ANSWER = [
    "Title <http://x/%1B]0;PWNED%07> and <%1B]0;x%07>\n\n",
    "csi <http://a/%C2%9B2J> clip \x1b]52;c;ZXZpbA==\x07 ent &#x1b;[2J\n\n",
    "".join(">" * (i + 1) + f" quote{i}\n" for i in range(25)),
    "\n",
    "".join("  " * i + f"- item{i}\n" for i in range(12)),
    "\n```\n\x1b[2J\x9b31mcode\n```\n",
]


def test_a_hostile_answer_reaches_the_terminal_escaped_and_whole(
    online: User, fake: FakeMessages
) -> None:
    fake.reply_events(text_events(HOSTILE_ANSWER), when={"last_user_contains": "hostile"})
    code, shown = query(online, "--new", "hostile").finish()
    assert code == 0, shown
    code, printed = Terminal(
        [str(JP), "conversation", "print", "--style", "chat"], online.env, online.root
    ).finish()
    assert code == 0, printed
    for bytes_shown in (shown, printed):
        assert_clean(bytes_shown)
        text = SGR.sub(b"", bytes_shown).decode()
        assert "%1B]0;PWNED%07" in text and "%C2%9B2J" in text and "\\x1b]52;c;" in text
        assert "\\x1b[2J\\x9b31mcode" in text
        assert "\x1b]8;" not in text, "no terminal hyperlink"
        found = re.findall(r"(?:quote|item)\d+", text)
        assert [w for w in found if w.startswith("quote")] == [f"quote{i}" for i in range(25)]
        assert [w for w in found if w.startswith("item")] == [f"item{i}" for i in range(12)]


def test_ctrl_c_in_a_code_block_leaves_the_lines_shown_and_no_spinner(
    online: User, fake: FakeMessages
) -> None:
    gate = held(fake, CODE + CODE_END, "third = 3\n", "interrupt me")
    term = query(online, "--new", "interrupt me")
    term.expect(b"second")
    term.send("\x03")  # Ctrl-C, as typed
    code, shown = term.finish()
    gate.set()
    assert code == 130, shown
    lines = assert_clean(shown)
    assert " second = 2" in lines and not any("third" in ln for ln in lines)
    assert b"interrupted: the request and 1 event of the answer are saved" in shown


CONFIRMED_TOOL = """
[assistant]
max_retries = 0
[assistant.model]
id = "anthropic/claude-test"
[conversation.tools.asks]
command = ["python3", "-c", "print('ASKED-RAN')"]
"""


def test_a_tool_that_asks_first_stops_the_spinner_for_its_question(
    online: User, fake: FakeMessages
) -> None:
    online.config(CONFIRMED_TOOL)
    fake.reply_blocks(
        [{"type": "tool_use", "name": "asks", "input": {}}],
        when={"last_user_contains": "ask me first"},
    )
    fake.reply_text("It ran.\n", when={"last_user_contains": "ASKED-RAN"})
    term = query(online, "--new", "ask me first")
    term.expect(b"[y/N] ")
    term.send("y\r")
    code, shown = term.finish()
    assert code == 0, shown
    lines = assert_clean(shown)
    question = next(ln for ln in lines if "[y/N]" in ln)
    assert question.startswith("Run tool asks"), f"the question is on a clean line: {question!r}"
    assert "It ran." in lines
