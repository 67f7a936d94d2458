"""Short handles for recent conversations (`@1` the most recently active) and title
search in `use` and its picker, typed as a person does."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.e2e.harness import JP, User
from tests.support.terminal import Terminal, run_on_terminal


def three(user: User) -> list[str]:
    ids = []
    for text in ("first about rust", "second about python", "third about python too"):
        user.ok("q", "--new", text)
        ids.append(user.active())
    return ids


def test_at_n_names_the_recently_active_ones(user: User) -> None:
    first, second, third = three(user)
    assert user.show("@1")["id"] == third
    assert user.show("@3")["id"] == first
    user.ok("conversation", "use", "@3")
    user.ok("q", "more rust")  # the first one is now the most recently active
    assert user.show("@1")["id"] == first and user.show("@2")["id"] == third
    proc = user.fail("conversation", "show", "@9", code=1)
    assert proc.stderr.startswith("error: @9: there are 3 live conversations (@1 to @3)")
    assert user.show("@3")["id"] == second


def test_use_finds_one_conversation_by_its_title(user: User) -> None:
    first, second, third = three(user)
    assert first in user.ok("conversation", "use", "about RUST")
    assert user.active() == first
    proc = user.fail("conversation", "use", "python", code=1)
    assert "2 conversations have 'python' in their title" in proc.stderr
    assert second in proc.stderr and third in proc.stderr
    assert user.active() == first, "an ambiguous title changes nothing"
    proc = user.fail("conversation", "use", "golang", code=1)
    assert "not a conversation id" in proc.stderr


def test_the_picker_takes_title_words(user: User) -> None:
    first, _, third = three(user)
    session = Terminal([str(JP), "conversation", "use"], user.env, user.root)
    session.expect(b"Use which?")
    session.send("python too\n")
    code, shown = session.finish()
    assert code == 0, shown
    assert user.active() == third


FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "sessions" / "claude-code"
SESSION = "5b9f0c1e-1111-4a2b-9c3d-000000000001"


def same_moment_sessions(user: User, tmp_path: Path, count: int) -> list[dict[str, Any]]:
    """``count`` Claude Code sessions that began at the same moment: their ids share
    every decisecond digit and differ only in their hex suffixes."""
    folder = tmp_path / "projects" / "-home-me-demo"
    folder.mkdir(parents=True)
    text = (FIXTURE / "-home-me-demo" / f"{SESSION}.jsonl").read_text(encoding="utf-8")
    for n in range(count):
        other = f"5b9f0c1e-1111-4a2b-9c3d-{n:012d}"
        (folder / f"{other}.jsonl").write_text(text.replace(SESSION, other), encoding="utf-8")
    user.ok("conversation", "import", "--from", "claude-code", str(tmp_path / "projects"))
    rows = [r for r in user.ls() if r.get("imported_from")]
    assert len(rows) == count
    return rows


def test_imported_sessions_have_handles_a_person_can_type(user: User, tmp_path: Path) -> None:
    user.ok("q", "--new", "made here")
    rows = same_moment_sessions(user, tmp_path, 6)
    assert len({r["id"].split("-")[1] for r in rows}) == 1  # one moment: one decisecond
    for row in rows:
        handle = row["handle"]
        assert re.fullmatch(r"[0-9a-f]{4,10}", handle), row
        assert row["id"].rpartition("-")[2].startswith(handle)
        assert len(handle) < len(row["short_id"]) - len("jp-c")  # shorter than the prefix
        assert user.show(handle)["id"] == row["id"]
    first = rows[0]
    user.ok("conversation", "use", first["handle"])
    assert user.active() == first["id"]
    assert user.json("conversation", "print", first["handle"])["id"] == first["id"]
    code, shown = run_on_terminal(["conversation", "ls"], user.env, user.root)
    assert code == 0
    assert f"\x1b[1;35m{first['handle']}\x1b[0m".encode() in shown  # the handle is marked
    native = [r for r in user.ls() if not r.get("imported_from")]
    assert len(native) == 1 and native[0]["handle"] is None
    proc = user.fail("conversation", "show", "ffffffff")
    assert proc.stderr.startswith("error: no conversation has the handle ffffffff"), proc.stderr
