"""One Claude Code session stays one conversation: the same id and commits on two
machines, nothing written for a file behind or equal to its conversation, an append
for one ahead, and a fork for the tool's records that went on beside jp's turns.

Fixture: the project's own small session (tests/fixtures/sessions, see its README).
"""

from __future__ import annotations

import json
import os
import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

from tests.e2e.harness import User

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sessions" / "claude-code"
MAIN = "-home-me-demo/5b9f0c1e-1111-4a2b-9c3d-000000000001.jsonl"
IMPORT = ("conversation", "import", "--from", "claude-code")
LATER = "And now the tests, please."


def lines() -> list[str]:
    return (FIXTURES / MAIN).read_text(encoding="utf-8").splitlines()


def grown() -> list[str]:
    """The fixture's session, resumed: one more prompt and its answer."""
    last = json.loads(lines()[-1])
    prompt = {
        "type": "user", "uuid": "u-later", "parentUuid": last.get("uuid"),
        "sessionId": last.get("sessionId"), "timestamp": "2026-02-11T11:00:00.000Z",
        "message": {"role": "user", "content": LATER},
    }  # fmt: skip
    answer = {
        "type": "assistant", "uuid": "a-later", "parentUuid": "u-later",
        "sessionId": last.get("sessionId"), "timestamp": "2026-02-11T11:00:01.000Z",
        "message": {"id": "msg_later", "role": "assistant", "model": "m",
                    "content": [{"type": "text", "text": "The tests pass."}]},
    }  # fmt: skip
    return [*lines(), json.dumps(prompt), json.dumps(answer)]


def place(root: Path, text: list[str]) -> Path:
    path = root / MAIN
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    return path


def mains(user: User) -> list[dict[str, Any]]:
    return [
        r for r in user.ls("--all")
        if r.get("imported_from") and not r["imported_from"].get("agent")
    ]  # fmt: skip


def test_two_machines_make_the_same_id_and_commits(tmp_path: Path) -> None:
    tips = []
    for name in ("laptop", "desktop"):
        user = User(tmp_path, name)
        user.env["USER"] = name  # a machine's own name never reaches an import's commits
        user.env.pop("GIT_COMMITTER_NAME", None)
        user.ok("init")
        user.ok(*IMPORT, str(place(tmp_path / f"{name}-files", lines()).parents[1]))
        (row,) = mains(user)
        assert row["id"].startswith("jp-c") and "-" in row["id"][4:]
        tips.append((row["id"], user.tip(row["id"])))
    assert tips[0] == tips[1]


def test_behind_equal_and_ahead(user: User, tmp_path: Path) -> None:
    root = tmp_path / "files"
    live = place(root, grown())
    user.ok(*IMPORT, str(root))
    (row,) = mains(user)
    tip = user.tip(row["id"])
    live.write_text("\n".join(lines()) + "\n", encoding="utf-8")  # an older copy: behind
    out = user.ok(*IMPORT, str(root))
    assert "0 imported, 0 updated, 1 unchanged" in out and "fork" not in out
    assert user.tip(row["id"]) == tip and len(mains(user)) == 1
    user.ok(*IMPORT, str(root))  # again, from the position kept for the older copy
    assert user.tip(row["id"]) == tip
    place(root, [*grown(), grown()[-1].replace("a-later", "a-later-2")])  # ahead again
    assert "1 updated" in user.ok(*IMPORT, str(root))
    user.git("merge-base", "--is-ancestor", tip, user.tip(row["id"]))
    assert len(mains(user)) == 1


def test_the_tool_going_on_beside_jp_turns_is_a_fork_the_next_import_follows(
    user: User, tmp_path: Path
) -> None:
    root = tmp_path / "files"
    live = place(root, lines())
    user.ok(*IMPORT, str(root))
    (row,) = mains(user)
    user.ok("q", "-i", row["id"], "JP-SIDE question")
    jp_tip = user.tip(row["id"])
    place(root, grown())
    out = user.ok(*IMPORT, str(root))
    assert "forked" in out or "fork" in out, out
    assert user.tip(row["id"]) == jp_tip, "the conversation with jp's turn was moved"
    (fork,) = [r for r in mains(user) if r["id"] != row["id"]]
    assert fork["imported_from"]["tool_branch_of"] == row["id"]
    texts = json.dumps(user.events(fork["id"]))
    assert LATER in texts and "JP-SIDE" not in texts
    assert LATER not in json.dumps(user.events(row["id"]))
    shown = user.ok("conversation", "show", fork["id"])
    assert "Tool branch" in shown and "[claude-code, the tool's branch]" in user.ok(
        "c", "ls", "--all"
    )
    more = json.loads(grown()[-1])
    more.update(uuid="a-more", parentUuid="a-later", timestamp="2026-02-11T11:05:00.000Z")
    live.write_text("\n".join([*grown(), json.dumps(more)]) + "\n", encoding="utf-8")
    before = user.tip(fork["id"])
    assert "1 updated" in user.ok(*IMPORT, str(root))
    user.git("merge-base", "--is-ancestor", before, user.tip(fork["id"]))
    assert user.tip(row["id"]) == jp_tip and len(mains(user)) == 2


def test_export_is_private_dated_and_gives_back_the_files_beside_a_stream(
    user: User, tmp_path: Path
) -> None:
    root = tmp_path / "files"
    shutil.copytree(FIXTURES, root)
    subs = next(root.rglob("subagents"))
    meta = subs / "agent-a1b2c3.meta.json"
    meta.write_bytes(b'{"agentType": "Explore",  "description": "look"}\n')
    (subs / "agent-a1b2c3.link.json").symlink_to(meta)
    out = user.run(*IMPORT, str(root))
    assert out.returncode == 0, out.stderr
    assert "agent-a1b2c3.link.json: not a regular file" in out.stderr
    (row,) = mains(user)
    dest = tmp_path / "out"
    user.ok("conversation", "export", "--to", "claude-code", row["id"], "-o", str(dest))
    back = dest / MAIN
    assert oct(back.stat().st_mode & 0o777) == oct(0o600)
    assert oct(back.parent.stat().st_mode & 0o777) == oct(0o700)
    last = max(r["timestamp"] for r in map(json.loads, lines()) if "timestamp" in r)
    when = datetime.fromisoformat(last.replace("Z", "+00:00")).timestamp()
    assert abs(back.stat().st_mtime - when) < 1
    given = dest / meta.relative_to(root)
    assert given.read_bytes() == meta.read_bytes()
    assert not (given.parent / "agent-a1b2c3.link.json").exists()


def test_export_refuses_a_folder_link_and_a_fifo(user: User, tmp_path: Path) -> None:
    root = tmp_path / "files"
    place(root, lines())
    user.ok(*IMPORT, str(root))
    (row,) = mains(user)
    outside = tmp_path / "outside"
    outside.mkdir()
    dest = tmp_path / "out"
    dest.mkdir()
    (dest / MAIN.split("/")[0]).symlink_to(outside)
    err = user.fail(
        "conversation", "export", "--to", "claude-code", row["id"], "-o", str(dest)
    ).stderr
    assert "is a link" in err and not list(outside.iterdir())
    fifo_dest = tmp_path / "fifo-out"
    (fifo_dest / MAIN).parent.mkdir(parents=True)
    os.mkfifo(fifo_dest / MAIN)
    err = user.fail(
        "conversation", "export", "--to", "claude-code", row["id"], "-o", str(fifo_dest)
    ).stderr
    assert "not a regular file" in err


def test_export_writes_the_jp_turns_and_leaves_none_out(user: User, tmp_path: Path) -> None:
    root = tmp_path / "files"
    place(root, lines())
    user.ok(*IMPORT, str(root))
    (row,) = mains(user)
    user.ok("q", "-i", row["id"], "JP-SIDE question")
    proc = user.run(
        "conversation", "export", "--to", "claude-code", row["id"], "-o", str(tmp_path / "o")
    )
    assert proc.returncode == 0, proc.stderr
    assert "not in" not in proc.stderr
    assert "JP-SIDE" in (tmp_path / "o" / MAIN).read_text(encoding="utf-8")


def test_a_subagent_stream_is_the_same_on_two_machines(tmp_path: Path) -> None:
    """The desktop's copy of the session went on further: the subagent's conversation
    (forked from the session where the stream starts) is still the same commits."""
    tips = []
    for name, text in (("laptop", lines()), ("desktop", grown())):
        user = User(tmp_path, name)
        user.ok("init")
        root = tmp_path / f"{name}-files"
        shutil.copytree(FIXTURES, root)
        place(root, text)
        user.ok(*IMPORT, str(root))
        agents = [r for r in user.ls("--all") if (r.get("imported_from") or {}).get("agent")]
        tips.append({r["id"]: user.tip(r["id"]) for r in agents})
    assert tips[0] == tips[1] and tips[0]


def test_two_machines_seeing_the_same_divergence_make_the_same_branch(tmp_path: Path) -> None:
    """The tool's branch (and a rewind's branch) is named by the divergence, not by the
    clock: each machine added its own jp turn, then imported the same longer file."""
    rewind = next((FIXTURES.parent / "claude-code-rewind").rglob("*.jsonl"))
    found = []
    for name in ("laptop", "desktop"):
        user = User(tmp_path, name)
        user.ok("init")
        root = tmp_path / f"{name}-files"
        place(root, lines())
        user.ok(*IMPORT, str(root))
        (row,) = mains(user)
        user.ok("q", "-i", row["id"], f"JP-SIDE question on the {name}")
        place(root, grown())
        user.ok(*IMPORT, str(root))
        (fork,) = [r for r in mains(user) if r["id"] != row["id"]]
        other = tmp_path / f"{name}-rewind"
        (other / "-home-me-demo").mkdir(parents=True)
        shutil.copyfile(rewind, other / "-home-me-demo" / rewind.name)
        user.ok(*IMPORT, str(other))
        branches = sorted(r["id"] for r in mains(user) if r["imported_from"].get("branch"))
        assert branches
        found.append((fork["id"], user.tip(fork["id"]), branches))
    assert found[0][0] == found[1][0] and found[0][2] == found[1][2]
    assert found[0][0].startswith("jp-c") and found[0][0].count("-") == 2


def two_folders(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """The fixture's session (and its subagent) in two Claude Code folders whose project
    folders differ, as on two machines whose checkouts are at different paths."""
    first, second = tmp_path / f"{name}-a", tmp_path / f"{name}-b"
    shutil.copytree(FIXTURES, first)
    shutil.copytree(FIXTURES, second)
    (second / "-home-me-demo").rename(second / "-Users-me-demo")
    return first, second


def agents(user: User) -> list[dict[str, Any]]:
    return [r for r in user.ls("--all") if (r.get("imported_from") or {}).get("agent")]


def test_the_same_session_at_two_paths_is_one_conversation(tmp_path: Path) -> None:
    user = User(tmp_path, "one")
    user.ok("init")
    first, second = two_folders(tmp_path, "one")
    user.ok(*IMPORT, str(first))
    (row,) = mains(user)
    tip = user.tip(row["id"])
    out = user.ok(*IMPORT, str(second))
    assert "0 imported" in out and "unchanged" in out, out
    assert [r["id"] for r in mains(user)] == [row["id"]] and len(agents(user)) == 1
    assert user.tip(row["id"]) == tip
    moved = second / "-Users-me-demo" / MAIN.split("/")[1]
    moved.write_text("\n".join(grown()) + "\n", encoding="utf-8")  # it went on there
    assert "1 updated" in user.ok(*IMPORT, str(second))
    user.git("merge-base", "--is-ancestor", tip, user.tip(row["id"]))
    assert len(mains(user)) == 1

    both = User(tmp_path, "both")  # both folders in one import
    both.ok("init")
    both.ok(*IMPORT, str(first), str(second))
    assert len(mains(both)) == 1 and len(agents(both)) == 1


def test_two_imports_of_the_same_session_at_once_make_one_conversation(tmp_path: Path) -> None:
    # lazy: threads only to start two jp processes together
    from concurrent.futures import ThreadPoolExecutor

    for round_ in range(3):
        user = User(tmp_path, f"round{round_}")
        user.ok("init")
        first, second = two_folders(tmp_path, f"round{round_}")
        with ThreadPoolExecutor(2) as pool:
            started = [pool.submit(user.run, *IMPORT, str(root)) for root in (first, second)]
            runs = [f.result() for f in started]
        assert all(r.returncode == 0 for r in runs), [r.stderr for r in runs]
        assert len(mains(user)) == 1, [r.stdout for r in runs]
        assert len(agents(user)) == 1
