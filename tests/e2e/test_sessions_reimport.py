"""An unchanged session re-import is answered before the command line loads
(porcelain/early/reimport.py), with the bytes the whole command prints; anything
that changed falls through to the whole command, which gives the right answer.

Each run goes through a probe: jp's entry point in a fresh interpreter, which
says after the command whether click, the store or libgit2 were loaded.  The
whole command alone (``porcelain.cli.main``) is the reference output.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.harness import User
from tests.support.module_probe import probe

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sessions"
MAIN = "-home-me-demo/5b9f0c1e-1111-4a2b-9c3d-000000000001.jsonl"
HEAVY = ("click", "gitstore.store.core", "pygit2", "tomlkit", "sqlite3")


def run(
    user: User, *args: str, entry: str = "porcelain.early", env: dict[str, str] | None = None
) -> tuple[str, str, int, set[str]]:
    found = probe(args, {**user.env, **(env or {})}, user.root, HEAVY, entry=entry)
    return found.out, found.err, found.code, found.loaded


def early(user: User, *args: str) -> str:
    """``jp ARGS`` answered early: its output, checked against the whole command's."""
    out, err, code, heavy = run(user, *args)
    assert heavy == set(), f"`jp {' '.join(args)}` loaded {heavy}"
    assert (out, err, code) == run(user, *args, entry="porcelain.cli")[:3]
    return out


def whole(user: User, *args: str, env: dict[str, str] | None = None) -> str:
    """``jp ARGS`` through the entry point, which had to run the whole command."""
    out, err, code, heavy = run(user, *args, env=env)
    assert "click" in heavy and "gitstore.store.core" in heavy, "it was answered early"
    assert code == 0, err
    return out


IMPORT = ("conversation", "import", "--from", "claude-code")


@pytest.fixture
def root(user: User, tmp_path: Path) -> Path:
    """The project's Claude Code fixture (a session and its subagent), imported once."""
    root = tmp_path / "projects"
    shutil.copytree(FIXTURES / "claude-code", root)
    assert "2 imported" in user.ok(*IMPORT, str(root))
    return root


def test_an_unchanged_reimport_answers_early_with_the_same_bytes(user: User, root: Path) -> None:
    assert "0 imported, 0 updated, 2 unchanged (0 new records)" in early(user, *IMPORT, str(root))
    data = json.loads(early(user, *IMPORT, str(root), "-F", "json"))
    assert data["summary"]["unchanged"] == 2 and data["files"][0]["relative_path"] == MAIN
    assert early(user, *IMPORT, str(root), "--quiet") == ""
    assert early(user, "-F", "json", "c", "import", "-q", "--from=claude-code", str(root))
    store = str(user.store)
    assert early(
        user, "conversation", "import", "--store", store, "--from", "claude-code", str(root)
    )
    user.env["CLAUDE_CONFIG_DIR"] = str(root.parent)  # its own location is ``root``
    assert "2 unchanged" in early(user, *IMPORT), "the same roots, named otherwise"
    assert "2 unchanged" in whole(user, *IMPORT, str(root / "-home-me-demo")), "other roots"


def test_a_grown_file_falls_through_and_appends(user: User, root: Path) -> None:
    lines = (root / MAIN).read_text(encoding="utf-8").splitlines(keepends=True)
    with open(root / MAIN, "a", encoding="utf-8") as handle:
        handle.write(lines[2])
    assert "1 updated" in whole(user, *IMPORT, str(root))
    assert "2 unchanged" in early(user, *IMPORT, str(root))


def test_a_file_changed_in_the_middle_falls_through(user: User, root: Path) -> None:
    path = root / MAIN
    before = path.stat()
    text = path.read_text(encoding="utf-8")
    swapped = text.replace("There are two files", "There are six files", 1)
    assert swapped != text and len(swapped) == len(text)
    spare = root / "spare.tmp"
    spare.write_text(swapped, encoding="utf-8")
    os.utime(spare, ns=(before.st_atime_ns, before.st_mtime_ns))
    spare.replace(path)  # another file, the same size and time
    assert path.stat().st_size == before.st_size
    assert path.stat().st_mtime_ns == before.st_mtime_ns
    assert "1 changed (kept as forks)" in whole(user, *IMPORT, str(root))


def test_new_and_removed_files_fall_through(user: User, root: Path) -> None:
    extra = root / "-home-me-other" / "6b9f0c1e-1111-4a2b-9c3d-000000000002.jsonl"
    extra.parent.mkdir()
    text = (root / MAIN).read_text(encoding="utf-8")  # another session (the same one
    session = MAIN.split("/")[-1][: -len(".jsonl")]  # at two paths is one conversation)
    extra.write_text(text.replace(session, extra.stem), encoding="utf-8")
    assert "1 imported" in whole(user, *IMPORT, str(root))
    extra.unlink()
    assert "3 Claude Code files" not in whole(user, *IMPORT, str(root))
    assert "2 unchanged" in early(user, *IMPORT, str(root))


def test_undo_rm_and_gc_move_refs_and_fall_through(user: User, root: Path) -> None:
    user.ok("undo")
    assert "2 imported" in whole(user, *IMPORT, str(root))
    cid = json.loads(early(user, *IMPORT, str(root), "-F", "json"))["files"][0]["id"]
    user.ok("-y", "conversation", "rm", cid)
    assert "1 imported" in whole(user, *IMPORT, str(root))
    user.git("gc", "-q")
    assert "2 unchanged" in whole(user, *IMPORT, str(root))
    user.ok("doctor")
    assert "2 unchanged" in early(user, *IMPORT, str(root))


def test_a_pull_that_moved_refs_falls_through(user: User, root: Path, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
    other = User(tmp_path, "other")
    other.ok("init")
    other.ok("remote", "add", "origin", str(remote))
    codex = tmp_path / "codex-home"
    shutil.copytree(FIXTURES / "codex", codex)
    other.ok("conversation", "import", "--from", "codex", str(codex))
    other.ok("push")
    user.ok("remote", "add", "origin", str(remote))
    user.ok("pull")
    assert "2 unchanged" in whole(user, *IMPORT, str(root))
    assert "2 unchanged" in early(user, *IMPORT, str(root))


def summary_file(user: User) -> Path:
    (found,) = (user.store / "jp" / "session-import").glob("claude-code-*.json")
    return found


@pytest.mark.parametrize(
    "spoil",
    [
        lambda v: "not json {",
        lambda v: json.dumps([v]),
        lambda v: json.dumps({**v, "version": 2}),
        lambda v: json.dumps({**v, "refs": 7}),
        lambda v: json.dumps({**v, "files": v["files"][:1]}),
        lambda v: json.dumps({**v, "files": [{**f, "size": -1} for f in v["files"]]}),
        lambda v: json.dumps({**v, "files": [{**f, "path": "/etc/passwd"} for f in v["files"]]}),
        lambda v: json.dumps({**v, "files": [{**f, "id": "../../x"} for f in v["files"]]}),
        lambda v: json.dumps({**v, "files": [{**f, "records": True} for f in v["files"]]}),
        lambda v: "[" * 100000,
    ],
)
def test_a_corrupt_or_hostile_summary_falls_through(user: User, root: Path, spoil) -> None:
    path = summary_file(user)
    path.write_text(spoil(json.loads(path.read_text(encoding="utf-8"))), encoding="utf-8")
    out = whole(user, *IMPORT, str(root), "-F", "json")
    assert json.loads(out)["summary"]["unchanged"] == 2
    assert "2 unchanged" in early(user, *IMPORT, str(root)), "the whole command wrote it again"


def test_config_hooks_and_unknown_flags_fall_through(user: User, root: Path) -> None:
    user.config("[store]\nmax_event_bytes = 2000000\n")
    assert "2 unchanged" in whole(user, *IMPORT, str(root))
    assert "2 unchanged" in early(user, *IMPORT, str(root))
    whole(user, *IMPORT, str(root), env={"JP_FAULT": "append:objects-written@99"})
    for extra in (("--since", "1h"), ("--cfg", "store.max_event_bytes=3000000"), ("--activate",)):
        whole(user, *IMPORT, str(root), *extra)
    whole(user, *IMPORT, str(root), "-F", "json", "-F", "text")
    assert "2 unchanged" in early(user, *IMPORT, str(root))


def test_a_journal_left_by_a_killed_command_falls_through(user: User, root: Path) -> None:
    cid = json.loads(early(user, *IMPORT, str(root), "-F", "json"))["files"][0]["id"]
    killed = user.run("conversation", "archive", cid, env={"JP_FAULT": "move:journal-written"})
    assert killed.returncode != 0 and list((user.store / "jp" / "ops").iterdir())
    assert "2 unchanged" in whole(user, *IMPORT, str(root)), "opening the store finished it"
    assert not list((user.store / "jp" / "ops").iterdir())
    assert "2 unchanged" in early(user, *IMPORT, str(root))
