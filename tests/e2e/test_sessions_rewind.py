"""A rewound Claude Code session (`/rewind`) through the real jp: the branch the session
went on with is a conversation of its own, forked from the session's at the record it went
back to; `ls --all` lists it, `print` of each side shows its own turns, export gives the
file back whole, and re-import stays idempotent and incremental."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from tests.e2e.harness import User

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sessions" / "claude-code-rewind"
PROJECT = "-home-me-haiku"
SESSION = "7c2e4d10-2222-4b3c-8d4e-000000000002"
MAIN = f"{PROJECT}/{SESSION}.jsonl"
REWOUND = 9  # the 1-based record of the prompt that rewinds


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def root_with(tmp: Path, lines: list[str]) -> Path:
    root = tmp / "projects"
    (root / PROJECT).mkdir(parents=True, exist_ok=True)
    (root / MAIN).write_text("".join(lines), encoding="utf-8")
    return root


def fixture_lines() -> list[str]:
    return (FIXTURES / MAIN).read_text(encoding="utf-8").splitlines(keepends=True)


def sides(user: User) -> tuple[dict[str, Any], dict[str, Any]]:
    rows = [r for r in user.ls("--all") if r.get("imported_from")]
    (main,) = [r for r in rows if not r["imported_from"]["branch"]]
    (fork,) = [r for r in rows if r["imported_from"]["branch"]]
    return main, fork


def texts(user: User, cid: str) -> list[str]:
    events = user.json("conversation", "print", cid)["events"]
    return [e.get("content") or e.get("message") or "" for e in events]


def line(record: dict[str, Any]) -> str:
    return json.dumps(record, separators=(",", ":")) + "\n"


def said(uuid: str, parent: str, text: str) -> dict[str, Any]:
    return {
        "parentUuid": parent,
        "sessionId": SESSION,
        "type": "user",
        "message": {"role": "user", "content": text},
        "uuid": uuid,
        "timestamp": "2026-02-12T09:10:00.000Z",
    }


def test_a_rewind_is_a_fork_listed_by_ls_all(user: User, tmp_path: Path) -> None:
    root = root_with(tmp_path, fixture_lines())
    out = user.ok("conversation", "import", "--from", "claude-code", str(root))
    assert "1 Claude Code file: 1 imported" in out
    assert "1 /rewind branch as conversations of their own (ls --all)" in out, out
    main, fork = sides(user)
    assert fork["forked_from"] == main["id"]
    assert fork["imported_from"] == {
        "tool": "claude-code",
        "session": SESSION,
        "agent": None,
        "path": MAIN,
        "branch": {"of": main["id"], "record": REWOUND},
        "tool_branch_of": None,
    }
    assert [r["id"] for r in user.ls() if r.get("imported_from")] == [main["id"]]
    assert "[claude-code rewind]" in user.ok("conversation", "ls", "--all")
    shown = user.ok("conversation", "show", fork["id"])
    assert f"rewind branch from record {REWOUND} of {main['id']}" in shown
    kept, went_on = texts(user, main["id"]), texts(user, fork["id"])
    assert "Write a haiku about git." in kept and "Write a haiku about git." in went_on
    assert any("Make it about branches" in t for t in kept)
    assert not any("merges" in t for t in kept)
    assert "Make it about merges instead." in went_on and "Glad you like it." in went_on
    assert not any("branches" in t for t in went_on), "the abandoned turns stay in the session"
    assert fork["turns"] == 3 and main["turns"] == 2
    user.fsck()


def test_export_of_either_side_gives_the_file_back_whole(user: User, tmp_path: Path) -> None:
    root = root_with(tmp_path, fixture_lines())
    user.ok("conversation", "import", "--from", "claude-code", str(root))
    main, fork = sides(user)
    for cid in (main["id"], fork["id"]):
        out = tmp_path / f"out-{cid}"
        user.ok("conversation", "export", "--to", "claude-code", cid, "-o", str(out))
        assert records(out / MAIN) == records(FIXTURES / MAIN)


def test_reimport_is_idempotent_and_grows_each_branch(user: User, tmp_path: Path) -> None:
    lines = fixture_lines()
    root = root_with(tmp_path, lines[:8])  # before the rewind
    user.ok("conversation", "import", "--from", "claude-code", str(root))
    (only,) = [r for r in user.ls("--all") if r.get("imported_from")]
    before = user.tip(only["id"])
    (root / MAIN).write_text("".join(lines), encoding="utf-8")  # the rewind comes later
    grown = user.ok("conversation", "import", "--from", "claude-code", str(root))
    assert "1 updated" in grown
    assert "1 /rewind branch as conversations of their own (ls --all)" in grown, grown
    main, fork = sides(user)
    assert main["id"] == only["id"] and user.tip(main["id"]) == before, "nothing new on main"
    tips = (user.tip(main["id"]), user.tip(fork["id"]))
    ops = user.ok("op", "log")
    again = user.ok("conversation", "import", "--from", "claude-code", str(root))
    assert "1 unchanged" in again and user.ok("op", "log") == ops
    assert "rewind" not in again, "no branch was made this time"
    assert (user.tip(main["id"]), user.tip(fork["id"])) == tips
    with open(root / MAIN, "a", encoding="utf-8") as handle:
        handle.write(line(said("r-012", "r-011", "Now one about rebase.")))
    user.ok("conversation", "import", "--from", "claude-code", str(root))
    assert user.tip(main["id"]) == tips[0] and user.tip(fork["id"]) != tips[1]
    user.git("merge-base", "--is-ancestor", tips[1], user.tip(fork["id"]))
    assert "Now one about rebase." in texts(user, fork["id"])
    # the same conversations as a one-shot import of the whole file
    other = User(tmp_path, "other")
    other.ok("init")
    other.ok("conversation", "import", "--from", "claude-code", str(root))
    for mine, theirs in zip(sides(user), sides(other), strict=True):
        ours = user.json("conversation", "print", mine["id"])["events"]
        once = other.json("conversation", "print", theirs["id"])["events"]
        assert [e for e in ours if e["type"] != "conversation_start"] == [
            e for e in once if e["type"] != "conversation_start"
        ]
    cache = Path(user.git("rev-parse", "--absolute-git-dir").strip()) / "jp" / "cache.sqlite"
    cache.unlink()  # no recorded position: each branch's stored records are compared
    assert "1 unchanged" in user.ok("conversation", "import", "--from", "claude-code", str(root))
    out = tmp_path / "out"
    user.ok("conversation", "export", "--to", "claude-code", main["id"], "-o", str(out))
    assert records(out / MAIN) == records(root / MAIN)


def test_undo_of_a_branch_append_is_seen_by_the_next_import(user: User, tmp_path: Path) -> None:
    root = root_with(tmp_path, fixture_lines())
    user.ok("conversation", "import", "--from", "claude-code", str(root))
    main, fork = sides(user)
    tip = user.tip(fork["id"])
    with open(root / MAIN, "a", encoding="utf-8") as handle:
        handle.write(line(said("r-012", "r-011", "Now one about rebase.")))
    user.ok("conversation", "import", "--from", "claude-code", str(root))
    user.ok("undo")
    assert user.tip(fork["id"]) == tip
    assert "1 updated" in user.ok("conversation", "import", "--from", "claude-code", str(root))
    assert "Now one about rebase." in texts(user, fork["id"])


def test_a_changed_rewound_file_keeps_both_versions(user: User, tmp_path: Path) -> None:
    lines = fixture_lines()
    root = root_with(tmp_path, lines)
    user.ok("conversation", "import", "--from", "claude-code", str(root))
    old_main, _ = sides(user)
    recs = records(root / MAIN)
    recs[1]["message"]["content"] = "Write a haiku about version control."
    (root / MAIN).write_text("".join(line(r) for r in recs), encoding="utf-8")
    assert "1 changed" in user.ok("conversation", "import", "--from", "claude-code", str(root))
    rows = [r for r in user.ls("--all") if r.get("imported_from")]
    assert len(rows) == 4, "the old session and its branch stay, the new one has its own"
    back = tmp_path / "back"
    user.ok("conversation", "export", "--to", "claude-code", old_main["id"], "-o", str(back / "o"))
    assert records(back / "o" / MAIN) == records(FIXTURES / MAIN)
    new_main = next(
        r for r in rows if not r["imported_from"]["branch"] and r["id"] != old_main["id"]
    )
    user.ok("conversation", "export", "--to", "claude-code", new_main["id"], "-o", str(back / "n"))
    assert records(back / "n" / MAIN) == recs
    assert "1 unchanged" in user.ok("conversation", "import", "--from", "claude-code", str(root))


def test_a_copied_fixture_root_imports_the_same(user: User, tmp_path: Path) -> None:
    root = tmp_path / "projects"
    shutil.copytree(FIXTURES, root)
    user.ok("conversation", "import", str(root))  # detected as Claude Code
    main, fork = sides(user)
    assert fork["imported_from"]["branch"]["of"] == main["id"]
