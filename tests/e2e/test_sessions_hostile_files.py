"""Session import against hostile files: a link out of the tool's folder and the tools'
own credential files are left out and named; a FIFO on the command line is refused
without blocking; skipped lines are named a few, then counted; records without a type
make no commits (issue 47)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from tests.e2e.harness import User

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sessions" / "claude-code"
MAIN = "-home-me-demo/5b9f0c1e-1111-4a2b-9c3d-000000000001.jsonl"
IMPORT = ("conversation", "import", "--from", "claude-code")


def claude_root(tmp_path: Path) -> Path:
    root = tmp_path / "projects"
    shutil.copytree(FIXTURES, root)
    return root


def test_links_out_of_the_folder_and_credential_files_are_left_out(
    user: User, tmp_path: Path
) -> None:
    root = claude_root(tmp_path)
    secret = tmp_path / "home" / ".claude" / ".credentials.json"
    secret.parent.mkdir(parents=True)
    secret.write_text('{"claudeAiOauth": {"accessToken": "SECRET-TOKEN"}}\n', encoding="utf-8")
    project = root / MAIN.split("/")[0]
    (project / "notes.jsonl").symlink_to(secret)
    outside = tmp_path / "elsewhere.jsonl"
    shutil.copyfile(root / MAIN, outside)
    (project / "other.jsonl").symlink_to(outside)
    proc = user.run(*IMPORT, "--quiet", str(root))
    assert proc.returncode == 0, proc.stderr
    assert "notes.jsonl: a credential file: never imported" in proc.stderr
    assert "other.jsonl: a link out of" in proc.stderr
    assert "SECRET-TOKEN" not in user.git("log", "-p", "--all")
    paths = {r["imported_from"]["path"] for r in user.ls("--all") if r.get("imported_from")}
    assert not {p for p in paths if p.endswith(("notes.jsonl", "other.jsonl"))}


def test_a_fifo_on_the_command_line_is_refused_at_once(user: User, tmp_path: Path) -> None:
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    proc = user.fail(*IMPORT, str(fifo))
    assert "FIFO" in proc.stderr


def test_skipped_lines_are_named_a_few_then_counted(user: User, tmp_path: Path) -> None:
    root = tmp_path / "projects" / "-p"
    root.mkdir(parents=True)
    good = (FIXTURES / MAIN).read_text(encoding="utf-8")
    (root / "s.jsonl").write_text(good + "x\n" * 5000 + "{}\n" * 5000, encoding="utf-8")
    proc = user.run(*IMPORT, "--quiet", str(root.parent))
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stderr.splitlines()) < 30
    assert "9,980 more lines skipped" in proc.stderr
    (row,) = [r for r in user.ls("--all") if r.get("imported_from")]
    assert row["events"] < 100, "records without a type made events"
    result = json.loads(user.ok("-F", "json", *IMPORT, str(root.parent)))
    assert result["summary"]["unchanged"] == 1
