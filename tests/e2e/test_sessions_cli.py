"""Claude Code and Codex sessions through the real jp, on the project's own small fixtures
(tests/fixtures/sessions): import, ls/show, re-import, export, continuing, hostile lines, undo."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from tests.e2e.harness import User, request_text
from tests.support.fake_messages import FakeMessages

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sessions"
PROJECT = "-home-me-demo"
SESSION = "5b9f0c1e-1111-4a2b-9c3d-000000000001"
MAIN = f"{PROJECT}/{SESSION}.jsonl"
AGENT = f"{PROJECT}/{SESSION}/subagents/agent-a1b2c3.jsonl"
ROLLOUT = "rollout-2026-05-11T10-00-00-019e0000-0000-7000-8000-00000000c0de.jsonl"
CODEX_REL = f"sessions/2026/05/11/{ROLLOUT}"


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def claude_root(tmp: Path) -> Path:
    root = tmp / "projects"
    shutil.copytree(FIXTURES / "claude-code", root)
    return root


def codex_home(tmp: Path) -> Path:
    home = tmp / "codex-home"
    shutil.copytree(FIXTURES / "codex", home)
    return home


def imported(user: User, *flags: str) -> dict[str, dict[str, Any]]:
    rows = user.ls(*flags)
    return {r["imported_from"]["path"]: r for r in rows if r.get("imported_from")}


def events(user: User, cid: str, *flags: str) -> list[dict[str, Any]]:
    return list(user.json("conversation", "print", *flags, cid)["events"])


def test_a_claude_code_root_is_imported_with_its_subagent(user: User, tmp_path: Path) -> None:
    root = claude_root(tmp_path)
    out = user.ok("conversation", "import", "--from", "claude-code", str(root))
    assert "2 Claude Code files: 2 imported, 0 updated, 0 unchanged" in out
    every = imported(user, "--all")
    assert set(every) == {MAIN, AGENT}
    main, agent = every[MAIN], every[AGENT]
    assert main["imported_from"] == {
        "tool": "claude-code",
        "session": SESSION,
        "agent": None,
        "path": MAIN,
        "branch": None,
        "tool_branch_of": None,
    }
    assert agent["imported_from"]["agent"] == "a1b2c3" and agent["forked_from"] == main["id"]
    assert set(imported(user)) == {MAIN}, "plain `ls` hides subagent streams"
    assert set(imported(user, "--imported", "codex")) == set()
    shown = user.show(main["id"])
    assert shown["imported_from"]["session"] == SESSION
    assert len(shown["compactions"]) == 1
    text = user.ok("conversation", "show", main["id"])
    assert "Imported" in text and MAIN in text
    assert "[claude-code]" in user.ok("conversation", "ls")
    user.fsck()


def test_detection_and_export_give_the_files_back_whole(user: User, tmp_path: Path) -> None:
    root, home = claude_root(tmp_path), codex_home(tmp_path)
    user.ok("conversation", "import", str(root))  # no --from: detected
    user.ok("conversation", "import", str(home))
    every = imported(user, "--all")
    assert set(every) == {MAIN, AGENT, CODEX_REL}
    out = tmp_path / "out"
    user.ok("conversation", "export", "--to", "claude-code", every[MAIN]["id"], "-o", str(out))
    assert records(out / MAIN) == records(root / MAIN)
    assert records(out / AGENT) == records(root / AGENT), "the subagent stream comes back too"
    user.ok("conversation", "export", "--to", "codex", every[CODEX_REL]["id"], "-o", str(out))
    assert records(out / CODEX_REL) == records(home / CODEX_REL)
    again = user.fail(
        "conversation", "export", "--to", "claude-code", every[CODEX_REL]["id"], "-o", str(out)
    )
    assert "was not imported from claude-code" in again.stderr


def test_reimport_is_idempotent_and_a_grown_file_appends(user: User, tmp_path: Path) -> None:
    root = tmp_path / "projects"
    (root / PROJECT).mkdir(parents=True)
    lines = (FIXTURES / "claude-code" / MAIN).read_text(encoding="utf-8").splitlines(keepends=True)
    live = root / MAIN
    live.write_text("".join(lines[:9]), encoding="utf-8")
    user.ok("conversation", "import", "--from", "claude-code", str(root))
    (row,) = imported(user).values()
    tip = user.tip(row["id"])
    ops = user.ok("op", "log")
    again = user.ok("conversation", "import", "--from", "claude-code", str(root))
    assert "1 unchanged" in again and user.tip(row["id"]) == tip
    assert user.ok("op", "log") == ops, "an import that wrote nothing recorded an operation"
    live.write_text("".join(lines), encoding="utf-8")
    user.ok("conversation", "import", "--from", "claude-code", str(root))
    assert list(imported(user)) == [MAIN]
    user.git("merge-base", "--is-ancestor", tip, user.tip(row["id"]))
    # the same events as a one-shot import of the whole file
    other = User(tmp_path, "other")
    other.ok("init")
    whole = tmp_path / "whole"
    (whole / PROJECT).mkdir(parents=True)
    shutil.copyfile(live, whole / MAIN)
    other.ok("conversation", "import", "--from", "claude-code", str(whole))
    (once,) = imported(other).values()
    assert events(user, row["id"])[1:] == events(other, once["id"])[1:]


def test_a_changed_file_keeps_both_versions(user: User, tmp_path: Path) -> None:
    root = claude_root(tmp_path)
    user.ok(
        "conversation", "import", "--from", "claude-code", str(root / PROJECT / f"{SESSION}.jsonl")
    )
    (old,) = imported(user).values()
    recs = records(root / MAIN)
    recs[3]["message"]["content"][0]["thinking"] = "Edited in place."
    (root / MAIN).write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    out = user.ok("conversation", "import", "--from", "claude-code", str(root / MAIN))
    assert "1 changed (kept as forks)" in out
    rows = [r for r in user.ls() if r.get("imported_from")]
    assert len(rows) == 2
    new = next(r for r in rows if r["id"] != old["id"])
    assert new["forked_from"] == old["id"]
    export = tmp_path / "back"
    user.ok("conversation", "export", "--to", "claude-code", old["id"], "-o", str(export / "old"))
    user.ok("conversation", "export", "--to", "claude-code", new["id"], "-o", str(export / "new"))
    assert records(export / "new" / MAIN) == recs
    assert records(export / "old" / MAIN) == records(FIXTURES / "claude-code" / MAIN)
    (root / MAIN).write_text(
        "".join(json.dumps(r) + "\n" for r in [*recs, recs[2]]), encoding="utf-8"
    )
    out = user.ok("conversation", "import", "--from", "claude-code", str(root / MAIN))
    assert "1 updated" in out, "the next import follows the new version"
    user.fsck()


def test_a_line_being_written_waits_for_the_next_import(user: User, tmp_path: Path) -> None:
    home = codex_home(tmp_path)
    live = home / CODEX_REL
    whole = live.read_text(encoding="utf-8")
    cut = whole.index("\n", len(whole) // 2) + 20
    live.write_text(whole[:cut], encoding="utf-8")
    proc = user.run("conversation", "import", "--from", "codex", str(home))
    assert proc.returncode == 0 and ":" not in proc.stderr.replace("error", ""), proc.stderr
    live.write_text(whole, encoding="utf-8")
    user.ok("conversation", "import", "--from", "codex", str(home))
    (row,) = imported(user).values()
    out = tmp_path / "out"
    user.ok("conversation", "export", "--to", "codex", row["id"], "-o", str(out))
    assert records(out / CODEX_REL) == records(FIXTURES / "codex" / CODEX_REL)


def test_json_output_and_default_locations(user: User, tmp_path: Path) -> None:
    root = claude_root(tmp_path / "config")
    user.env["CLAUDE_CONFIG_DIR"] = str(root.parent)
    user.env["CODEX_HOME"] = str(codex_home(tmp_path))
    data = user.json("conversation", "import", "--from", "claude-code")
    assert data["summary"]["imported"] == 2 and data["summary"]["skipped_lines"] == 0
    assert {f["relative_path"] for f in data["files"]} == {MAIN, AGENT}
    assert user.json("conversation", "import", "--from", "codex")["summary"]["imported"] == 1
    user.env["CODEX_HOME"] = str(tmp_path / "nowhere")
    proc = user.fail("conversation", "import", "--from", "codex", code=1)
    assert "nowhere" in proc.stderr and "Codex's own location" in proc.stderr
    assert user.fail("conversation", "import", code=2).stderr.startswith("error: give the folders")


def test_the_model_is_sent_the_summary_and_what_followed(user: User, tmp_path: Path) -> None:
    user.ok("conversation", "import", "--from", "claude-code", str(claude_root(tmp_path)))
    cid = imported(user)[MAIN]["id"]
    sent = json.dumps(events(user, cid, "--compacted"))
    assert "the user listed the folder" in sent and "What should I do next?" in sent
    assert "There are two files" not in sent and "List the files here." not in sent
    raw = json.dumps(events(user, cid))
    assert "There are two files" in raw


def test_an_imported_session_continues_on_the_provider(
    user: User, fake: FakeMessages, tmp_path: Path
) -> None:
    user.connect(fake.env())
    user.ok("conversation", "import", "--from", "codex", str(codex_home(tmp_path)))
    (row,) = imported(user).values()
    fake.reply_text("Carry on.")
    user.ok("q", "-i", row["id"], "What did we change?")
    (body,) = fake.requests  # the fake refuses unpaired tool calls
    seen = request_text(body)
    assert "Summary of codex work" in seen and "What did we change?" in seen
    assert "Fix the failing test" not in seen, "the compacted turns are not sent"
    assert "gAAAAopaque" not in json.dumps(body), "encrypted reasoning is never sent"


def test_undo_takes_an_import_back(user: User, tmp_path: Path) -> None:
    root = claude_root(tmp_path)
    user.ok("conversation", "import", "--from", "claude-code", str(root))
    assert len(imported(user, "--all")) == 2
    user.ok("undo")
    assert imported(user, "--all") == {}
    user.ok("conversation", "import", "--from", "claude-code", str(root))
    cid = imported(user)[MAIN]["id"]
    tip = user.tip(cid)
    with open(root / MAIN, "a", encoding="utf-8") as handle:
        handle.write(
            json.dumps(
                {
                    "type": "queue-operation",
                    "operation": "enqueue",
                    "timestamp": "2026-02-11T11:00:00.000Z",
                    "sessionId": SESSION,
                }
            )
            + "\n"
        )
    user.ok("conversation", "import", "--from", "claude-code", str(root))
    assert user.tip(cid) != tip
    user.ok("undo")
    assert user.tip(cid) == tip, "undo of an update moves the conversation back"


def test_the_recorded_position_names_each_skipped_line_once(user: User, tmp_path: Path) -> None:
    root = tmp_path / "projects"
    (root / PROJECT).mkdir(parents=True)
    lines = (FIXTURES / "claude-code" / MAIN).read_text(encoding="utf-8").splitlines(keepends=True)
    live = root / MAIN
    live.write_text("".join(lines[:5]) + "{broken\n", encoding="utf-8")
    first = user.run("conversation", "import", "--from", "claude-code", str(root))
    assert f"{live}:6:" in first.stderr
    again = user.run("conversation", "import", "--from", "claude-code", str(root))
    assert again.returncode == 0 and ":6:" not in again.stderr, (
        "an unchanged file is not read again"
    )
    live.write_text(
        "".join(lines[:5]) + "{broken\n" + "".join(lines[5:]) + "{also broken\n", encoding="utf-8"
    )
    grown = user.run("conversation", "import", "--from", "claude-code", str(root))
    assert ":6:" not in grown.stderr and f"{live}:{len(lines) + 2}:" in grown.stderr
    (row,) = imported(user).values()
    tip = user.tip(row["id"])
    cache = Path(user.git("rev-parse", "--absolute-git-dir").strip()) / "jp" / "cache.sqlite"
    cache.unlink()  # no recorded position: the stored records are compared instead
    assert "1 unchanged" in user.ok("conversation", "import", "--from", "claude-code", str(root))
    assert user.tip(row["id"]) == tip
    out = tmp_path / "out"
    user.ok("conversation", "export", "--to", "claude-code", row["id"], "-o", str(out))
    assert records(out / MAIN) == records(FIXTURES / "claude-code" / MAIN)


def test_since_reads_only_the_files_changed_since(user: User, tmp_path: Path) -> None:
    root = claude_root(tmp_path)
    old = 1_600_000_000
    for path in root.rglob("*.jsonl"):
        os.utime(path, (old, old))
    out = user.ok("conversation", "import", "--from", "claude-code", "--since", "2h", str(root))
    assert out.startswith("0 Claude Code files") and imported(user, "--all") == {}
    os.utime(root / MAIN)  # now
    user.ok("conversation", "import", "--from", "claude-code", "--since", "2h", str(root))
    assert set(imported(user, "--all")) == {MAIN}
    bad = user.fail(
        "conversation", "import", "--from", "codex", "--since", "soon", str(root), code=2
    )
    assert "--since 'soon'" in bad.stderr


def test_session_files_one_folder_deeper_are_named_not_skipped_silently(
    user: User, tmp_path: Path
) -> None:
    claude_home = tmp_path / "claude-home"
    claude_root(claude_home)  # ~/.claude/projects/<project>/<session>.jsonl
    for flags in ((), ("--format", "json")):
        proc = user.run(*flags, "conversation", "import", "--from", "claude-code", str(claude_home))
        assert proc.returncode == 0, proc.stderr
        assert "1 session file one folder deeper than jp reads was not imported" in proc.stderr
        assert str(claude_home / "projects" / MAIN) in proc.stderr
        assert f"--from claude-code {claude_home / 'projects'}`" in proc.stderr
    assert user.ls() == []
    proc = user.run(
        "conversation", "import", "--from", "claude-code", str(claude_home / "projects")
    )
    assert proc.returncode == 0 and "deeper" not in proc.stderr, proc.stderr
