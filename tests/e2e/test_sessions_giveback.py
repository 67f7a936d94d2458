"""`export --to` gives back jp's own turns as the tool's records: a session continued
in jp, a fork of a session (a session id of its own) and a conversation never imported.
The file parses as the tool's format, imports into another store as the same turns,
and imported back into the same store changes nothing; the tool going on after the
given-back turns is an append, never a fork.

Fixtures: the project's own small sessions (tests/fixtures/sessions, see its README).
"""

from __future__ import annotations

import base64
import json
import re
import shutil
from pathlib import Path
from typing import Any

from tests.e2e.harness import User, tool_use
from tests.e2e.test_sessions_continuity import MAIN, lines, mains, place
from tests.support.fake_messages import FakeMessages

CODEX = Path(__file__).resolve().parents[1] / "fixtures" / "sessions" / "codex"
TOOLS = """
[assistant]
max_retries = 0
[assistant.model]
id = "anthropic/claude-test"

[conversation.tools.echo]
command = ["python3", "-c", "import sys, json; a = json.load(sys.stdin); print('ECHO:' + a['text'])"]
description = "Print the text back"
confirm = false
parameters = {type = "object", properties = {text = {type = "string"}}, required = ["text"]}
"""


def turns(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What the model is told of a conversation, as the tools keep it (no reasoning)."""
    out: list[tuple[Any, ...]] = []
    for e in events:
        kind = e["type"]
        if kind == "chat_request":
            out.append((kind, e["content"]))
        elif kind == "chat_response" and e.get("message"):
            out.append((kind, e["message"]))
        elif kind == "tool_call_request":
            out.append((kind, e["id"], e["name"], e["arguments"]))
        elif kind == "tool_call_response":
            out.append((kind, e["id"], e["content"], e["is_error"]))
    return out


def claude_records(path: Path) -> list[dict[str, Any]]:
    """The file's records, checked as Claude Code chains them."""
    found = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    seen: set[str] = set()
    for record in found:
        if "uuid" in record:
            assert record.get("parentUuid") is None or record["parentUuid"] in seen, record
            assert record["uuid"] not in seen
            seen.add(record["uuid"])
    sessions = {r["sessionId"] for r in found if "sessionId" in r}
    assert sessions == {path.stem}, sessions
    return found


def export(user: User, cid: str, dest: Path, tool: str = "claude-code") -> Path:
    out = json.loads(
        user.ok("-F", "json", "conversation", "export", "--to", tool, cid, "-o", str(dest))
    )
    (written,) = out["files"]
    assert written["jp_turns"] == 0
    return Path(written["path"])


def imported(user: User, root: Path, tool: str = "claude-code") -> dict[str, Any]:
    return json.loads(user.ok("-F", "json", "conversation", "import", "--from", tool, str(root)))


def continued(user: User, fake: FakeMessages, tmp_path: Path) -> str:
    """The fixture session imported, then a turn with a tool call added in jp."""
    user.connect(fake.env())
    user.config(TOOLS)
    place(tmp_path / "files", lines())
    user.ok("conversation", "import", "--from", "claude-code", str(tmp_path / "files"))
    (row,) = mains(user)
    fake.reply_blocks(
        [{"type": "text", "text": "Echoing."}, tool_use("echo", text="hi \x1b[31m")],
        when={"last_user_contains": "JP-SIDE"},
    )
    fake.reply_text("JP-ANSWER done.", when={"last_user_contains": "ECHO:"})
    user.ok("q", "-i", row["id"], "JP-SIDE question")
    return str(row["id"])


def test_a_session_continued_in_jp_is_given_back_whole(
    user: User, fake: FakeMessages, tmp_path: Path
) -> None:
    cid = continued(user, fake, tmp_path)
    path = export(user, cid, tmp_path / "out")
    assert path == tmp_path / "out" / MAIN
    found = claude_records(path)
    assert found[: len(lines())] == [json.loads(x) for x in lines()]
    mine = found[len(lines()) :]
    assert [r["type"] for r in mine] == ["user", "assistant", "user", "assistant"]
    assert mine[0]["message"]["content"] == "JP-SIDE question"
    use = next(b for b in mine[1]["message"]["content"] if b["type"] == "tool_use")
    result = mine[2]["message"]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == use["id"]
    assert "ECHO:hi" in result["content"] and mine[3]["parentUuid"] == mine[2]["uuid"]
    assert all(r["cwd"] == "/home/me/demo" for r in mine)

    tip = user.tip(cid)  # imported back into the same store: nothing
    assert imported(user, tmp_path / "out")["summary"]["unchanged"] == 1
    assert user.tip(cid) == tip and len(mains(user)) == 1
    again = tmp_path / "again"
    assert export(user, cid, again).read_bytes() == path.read_bytes()

    other = User(tmp_path, "other")  # another store: the same turns
    other.ok("init")
    imported(other, tmp_path / "out")
    (row,) = mains(other)
    assert turns(other.events(row["id"])) == turns(user.events(cid))

    resumed = dict(mine[3], uuid="cc-after", parentUuid=mine[3]["uuid"])
    resumed["timestamp"] = "2030-01-01T00:00:00.000Z"
    resumed["message"] = {**mine[3]["message"], "id": "msg_cc", "content": [
        {"type": "text", "text": "CLAUDE-AFTER-JP"}]}  # fmt: skip
    with path.open("a", encoding="utf-8") as handle:  # Claude Code resumed the export
        handle.write(json.dumps(resumed) + "\n")
    out = imported(user, tmp_path / "out")
    assert out["summary"]["updated"] == 1 and len(mains(user)) == 1, out
    user.git("merge-base", "--is-ancestor", tip, user.tip(cid))
    assert "CLAUDE-AFTER-JP" in json.dumps(user.events(cid))


def test_a_fork_of_a_session_is_a_session_of_its_own(
    user: User, fake: FakeMessages, tmp_path: Path
) -> None:
    cid = continued(user, fake, tmp_path)
    fork = json.loads(user.ok("-F", "json", "conversation", "fork", cid))["id"]
    path = export(user, fork, tmp_path / "out")
    assert path.parent.name == MAIN.split("/")[0] and path.stem != MAIN.split("/")[1][:-6]
    claude_records(path)  # every record names the fork's own session
    assert export(user, fork, tmp_path / "again").name == path.name  # the same id each time
    before = {r["id"]: user.tip(r["id"]) for r in user.ls("--all")}
    out = imported(user, tmp_path / "out")
    assert out["summary"]["unchanged"] == 1, out
    assert {r["id"]: user.tip(r["id"]) for r in user.ls("--all")} == before

    other = User(tmp_path, "other")
    other.ok("init")
    imported(other, tmp_path / "out")
    (row,) = mains(other)
    assert turns(other.events(row["id"])) == turns(user.events(fork))


def test_a_conversation_never_imported_goes_to_the_folder_of_the_export(
    user: User, tmp_path: Path
) -> None:
    user.ok("q", "--new", "A NEW conversation, \x07 with a bell")
    cid = user.active()
    work = tmp_path / "work.d"
    work.mkdir()
    proc = user.run(
        "conversation", "export", "--to", "claude-code", cid, "-o", str(tmp_path / "out"),
        cwd=work,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "not in" not in proc.stderr
    (path,) = (tmp_path / "out").rglob("*.jsonl")
    assert path.parent.name == re.sub(r"[^A-Za-z0-9]", "-", str(work))  # as Claude Code names it
    found = claude_records(path)
    assert [r["type"] for r in found] == ["user", "assistant"]
    assert found[0]["cwd"] == str(work) and "\x07" in found[0]["message"]["content"]
    tip = user.tip(cid)
    assert imported(user, tmp_path / "out")["summary"]["unchanged"] == 1
    assert user.tip(cid) == tip and len(user.ls("--all")) == 1


def test_codex_gets_back_the_turns_of_a_session_and_of_jp_s_own(user: User, tmp_path: Path) -> None:
    root = tmp_path / "codex"
    shutil.copytree(CODEX, root)
    imported(user, root, "codex")
    (row,) = mains(user)
    user.ok("q", "-i", row["id"], "JP-SIDE codex question")
    path = export(user, row["id"], tmp_path / "out", "codex")
    found = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    texts = [
        (r["type"], r["payload"].get("type"), r["payload"].get("role"))
        for r in found
        if "JP-SIDE codex" in json.dumps(r)
    ]
    assert texts == [("response_item", "message", "user"), ("event_msg", "user_message", None)]
    tip = user.tip(row["id"])
    assert imported(user, tmp_path / "out", "codex")["summary"]["unchanged"] == 1
    assert user.tip(row["id"]) == tip

    user.ok("q", "--new", "OWN codex conversation")
    own = user.active()
    mine = export(user, own, tmp_path / "own", "codex")
    assert mine.name.startswith("rollout-") and mine.parts[-5] == "sessions"
    first = json.loads(mine.read_text(encoding="utf-8").splitlines()[0])
    assert first["type"] == "session_meta" and first["payload"]["id"] in mine.name
    other = User(tmp_path, "other")
    other.ok("init")
    imported(other, tmp_path / "own", "codex")
    (back,) = mains(other)
    assert turns(other.events(back["id"])) == turns(user.events(own))
    tip = user.tip(own)
    assert imported(user, tmp_path / "own", "codex")["summary"]["unchanged"] == 1
    assert user.tip(own) == tip


def test_a_conversation_imported_from_codex_is_not_written_as_claude_code(
    user: User, tmp_path: Path
) -> None:
    root = tmp_path / "codex"
    shutil.copytree(CODEX, root)
    imported(user, root, "codex")
    (row,) = mains(user)
    err = user.fail(
        "conversation", "export", "--to", "claude-code", row["id"], "-o", str(tmp_path / "o")
    ).stderr
    assert "holds codex's records" in err and "--to codex" in err
    assert not (tmp_path / "o").exists()


def test_export_names_the_session_to_resume_and_escapes_what_the_records_say(
    user: User, tmp_path: Path
) -> None:
    hostile = [x.replace('"cwd":"/home/me/demo"', '"cwd":"/home/me/\\u001b]0;pwned\\u0007demo"')
               for x in lines()]  # fmt: skip
    place(tmp_path / "files", hostile)
    user.ok("conversation", "import", "--from", "claude-code", str(tmp_path / "files"))
    (row,) = mains(user)
    user.ok("q", "-i", row["id"], "JP-SIDE question")
    proc = user.run(
        "conversation", "export", "--to", "claude-code", row["id"], "-o", str(tmp_path / "out")
    )
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout
    session = MAIN.split("/")[1][: -len(".jsonl")]
    assert f"resume it: claude --resume {session} in /home/me/" in proc.stdout
    out = json.loads(
        user.ok("-F", "json", "conversation", "export", "--to", "claude-code", row["id"],
                "-o", str(tmp_path / "again"))
    )  # fmt: skip
    (written,) = out["files"]
    assert written["session"] == session and "\x1b" in written["cwd"]  # JSON: the data as it is
    given = claude_records(Path(written["path"]))[-1]
    assert given["cwd"] == written["cwd"], "jp's records take the session's folder"


def test_an_image_too_large_for_one_record_is_named_and_the_file_imports_back(
    user: User, tmp_path: Path
) -> None:
    user.config("[store]\nmax_event_bytes = 300000\n")  # jp's import reads lines of 100,000
    small = b"\x89PNG\r\n\x1a\n" + bytes(2000)
    big = b"\x89PNG\r\n\x1a\n" + bytes(90_000)
    (tmp_path / "small.png").write_bytes(small)
    (tmp_path / "big.png").write_bytes(big)
    user.ok("q", "--new", "-a", str(tmp_path / "big.png"), "-a", str(tmp_path / "small.png"),
            "TWO images")  # fmt: skip
    cid = user.active()
    for tool in ("claude-code", "codex"):
        path = export(user, cid, tmp_path / tool, tool)
        text = path.read_text(encoding="utf-8")
        assert max(len(line.encode()) for line in text.splitlines()) < 100_000
        assert "90,008 bytes: left out here, too large" in text
        assert base64.b64encode(small).decode() in text, "the one that fits is given back"
        tip = user.tip(cid)
        assert imported(user, tmp_path / tool, tool)["summary"]["unchanged"] == 1
        assert user.tip(cid) == tip
