"""What a title, a model or a tool wrote never drives the user's terminal.

The hostile text is an imported JP folder's title and a model's streamed
answer; `jp` runs on a pseudo-terminal (as in a terminal window) and piped.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from tests.e2e.harness import NO_MARKERS, User
from tests.support.fake_messages import FakeMessages
from tests.support.sandbox import JP
from tests.support.terminal import raw_controls, run_on_terminal, without_styles

SET_TITLE = "\x1b]0;PWNED\x07"
CLIPBOARD = "\x1b]52;c;cHduZWQ=\x07"


def hostile_folder(tmp_path: Path, name: str, title: str) -> Path:
    """A copy of a JP folder whose title is ``title``."""
    folder = tmp_path / name
    shutil.copytree(NO_MARKERS, folder)
    meta = json.loads((folder / "metadata.json").read_text())
    (folder / "metadata.json").write_text(json.dumps({**meta, "title": title}))
    return folder


def test_a_hostile_title_is_shown_escaped_on_a_terminal(user: User, tmp_path: Path) -> None:
    title = f"{SET_TITLE}title \x9b2J{CLIPBOARD}\x1b[2J"
    cid = user.import_(hostile_folder(tmp_path, "17800000201-hostile", title))
    for args in (("conversation", "ls"), ("conversation", "show", cid)):
        code, out = run_on_terminal(args, user.env, user.root)
        out = without_styles(out)  # jp's own highlight of an id's unique prefix
        assert code == 0, out
        assert b"PWNED" in out, f"`jp {' '.join(args)}` did not show the title: {out!r}"
        assert raw_controls(out) == [], f"`jp {' '.join(args)}` sent raw controls: {out!r}"
        assert b"\\x1b]0;PWNED\\x07title \\x9b2J" in out, out
    piped = user.ok("conversation", "show", cid)
    assert f"Title:        {title}\n" in piped, "piped text output stays byte-exact"
    assert user.show(cid)["title"] == title, "-F json gives the exact title"
    rows = json.loads(user.ok("-F", "json", "conversation", "ls"))
    assert [r["title"] for r in rows] == [title]


def test_a_newline_in_a_title_never_fakes_a_row(user: User, tmp_path: Path) -> None:
    fake_row = "jp-c17800000999   99     999  a conversation that does not exist"
    title = f"real title\n{fake_row}\tand a tab"
    cid = user.import_(hostile_folder(tmp_path, "17800000202-rows", title))
    for out in (
        user.ok("conversation", "ls"),
        without_styles(run_on_terminal(("conversation", "ls"), user.env, user.root)[1]).decode(),
    ):
        rows = out.replace("\r\n", "\n").splitlines()
        assert len(rows) == 2, rows  # the header and one conversation
        escaped = (
            "real title\\njp-c17800000999   99     999  a conversation that does not exist"
            "\\tand a tab"
        )
        assert rows[1].startswith(cid) and "real title\\n" in rows[1], rows
        shown = rows[1][rows[1].index("real title") :]
        # piped: the whole title; on a terminal it may be cut to the width (an ellipsis)
        cut = shown.endswith("…") and escaped.startswith(shown[:-1].rstrip())
        assert shown == escaped or cut, rows
    header = [
        ln for ln in user.ok("conversation", "show", cid).splitlines() if ln.startswith("Title:")
    ]
    assert header == ["Title:        real title\\n" + fake_row + "\\tand a tab"]
    assert "jp-c17800000999" not in " ".join(r["id"] for r in user.ls())
    assert user.show(cid)["title"] == title


def test_a_streamed_answer_is_escaped_on_a_terminal(
    online: User, fake: FakeMessages, tmp_path: Path
) -> None:
    # the fake streams text in three chunks of ceil(len / 3) characters: this
    # puts the ESC at the end of the first chunk and the rest of it in the next
    answer = "abcdefghi\x1b" + "]0;PWNED\x07" + "tail \x9b31m " + "end of the answer."
    thinking = "thinking " + CLIPBOARD + " about it"
    fake.reply_blocks(
        [
            {"type": "thinking", "thinking": thinking, "signature": "sig"},
            {"type": "text", "text": answer},
        ],
        when={"last_user_contains": "say it"},
    )
    code, out = run_on_terminal(("q", "--new", "say it"), online.env, online.root)
    assert code == 0, out
    assert b"PWNED" in out and b"end of the answer." in out, out
    for raw in (b"\x1b", b"\x07", "\x9b".encode()):
        assert raw not in out, f"raw {raw!r} reached the terminal: {out!r}"
    assert b"abcdefghi\\x1b]0;PWNED\\x07tail \\x9b31m" in out, out
    assert b"thinking \\x1b]52;c;cHduZWQ=\\x07 about it" in out, out
    events = online.json("conversation", "print", "--style", "full")["events"]
    stored = [e.get("message") for e in events if e.get("type") == "chat_response"]
    assert answer in stored, "the store keeps the exact answer"


def test_a_piped_answer_stays_byte_exact(online: User, fake: FakeMessages) -> None:
    answer = "colour \x1b[1mbold\x1b[0m and a bell\x07\r\nline two"
    fake.reply_text(answer, when={"last_user_contains": "piped"})
    proc = subprocess.run(
        [str(JP), "q", "--new", "piped"], env=online.env, cwd=online.root, capture_output=True
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (answer + "\n").encode()


def test_a_remote_ref_name_is_shown_escaped(user: User, tmp_path: Path) -> None:
    """git refuses control bytes in ref names, not UTF-8 C1 characters (CSI is U+009B)."""
    remote = tmp_path / "hostile.git"
    subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
    git = ["git", "--git-dir", str(remote)]
    tree = subprocess.run(
        [*git, "mktree"], input="", capture_output=True, text=True, check=True
    ).stdout.strip()
    made = subprocess.run(
        [*git, "commit-tree", tree, "-m", "not an event"],
        env=user.env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    name = "refs/conversations/evil\u009b2J\u009b31mname"
    subprocess.run([*git, "update-ref", name, made], check=True)
    user.ok("remote", "add", "origin", str(remote))
    code, out = run_on_terminal(("pull", "origin"), user.env, user.root)
    assert b"evil" in out and b"not a conversation id" in out, out
    assert "\u009b".encode() not in out, f"a raw CSI reached the terminal: {out!r}"
    assert b"evil\\x9b2J\\x9b31mname" in out, out
