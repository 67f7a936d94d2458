"""The real Claude Code sessions and Codex rollouts of ../shared/fixtures through the real jp:
each file imported, every record kept, every file exported back equal, the store clean.

A fresh clone has no ../shared, so this module skips there.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import SHARED, User

CC = SHARED / "fixtures" / "claude-code"
CX = SHARED / "fixtures" / "codex"
pytestmark = pytest.mark.skipif(
    not (CC.is_dir() and CX.is_dir()), reason="needs ../shared/fixtures"
)


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def session_of(path: Path) -> str:
    """The session id a file's records name (Claude Code's ``sessionId``, Codex's
    ``session_meta``), else its name, as the import takes it."""
    for record in records(path):
        if isinstance(record.get("sessionId"), str):
            return str(record["sessionId"])
        if record.get("type") == "session_meta":
            return str(record["payload"]["id"])
    return path.stem


def claude_root(top: Path) -> Path:
    root = top / "projects"
    shutil.copytree(CC / "spotter", root / "spotter", ignore=shutil.ignore_patterns("LICENSE"))
    shutil.copytree(CC / "codemie" / "claude" / "-tmp-private", root / "-tmp-private")
    (root / "codemie").mkdir()
    shutil.copyfile(
        CC / "codemie" / "session-196820da.jsonl", root / "codemie" / "session-196820da.jsonl"
    )
    return root


def codex_home(top: Path) -> Path:
    home = top / "codex"
    (home / "sessions").mkdir(parents=True)
    for path in sorted(CX.rglob("*.jsonl")):
        shutil.copyfile(path, home / "sessions" / path.name)
    return home


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[User, Path, Path]:
    top = tmp_path_factory.mktemp("real-sessions")
    person = User(top, "user")
    person.ok("init")
    root, home = claude_root(top), codex_home(top)
    person.ok("conversation", "import", "--from", "claude-code", str(root))
    person.ok("conversation", "import", "--from", "codex", str(home))
    person.fsck()
    return person, root, home


def rows(user: User) -> dict[str, dict[str, Any]]:
    """Each file's conversation by its path (a rewound file's rewind branches are more
    conversations with the same path: see ``tips``)."""
    return {
        r["imported_from"]["path"]: r
        for r in user.ls("--all")
        if r.get("imported_from") and not r["imported_from"].get("branch")
    }


def tips(user: User) -> dict[str, str]:
    """The tip of every imported conversation, rewind branches included."""
    return {r["id"]: user.tip(r["id"]) for r in user.ls("--all") if r.get("imported_from")}


def test_every_real_file_comes_back_equal(store: tuple[User, Path, Path], tmp_path: Path) -> None:
    user, root, home = store
    found = rows(user)
    files = {p.relative_to(root).as_posix(): p for p in root.rglob("*.jsonl")}
    files.update({p.relative_to(home).as_posix(): p for p in home.rglob("*.jsonl")})
    # the same session at two paths (codemie's turn-1 and turn-2 rollouts) is one
    # conversation, at the path imported first, holding the longer file's records
    longest: dict[tuple[str, str], Path] = {}
    for rel, path in sorted(files.items()):
        key = (session_of(path), rel.split("/")[-1].startswith("agent-") and rel or "")
        if key not in longest or len(records(path)) > len(records(longest[key])):
            longest[key] = path
    assert set(found) <= set(files)
    assert {(session_of(files[r]), r.split("/")[-1].startswith("agent-") and r or "")
            for r in files} == {(r["imported_from"]["session"], r["imported_from"]["agent"]
            and p or "") for p, r in found.items()}  # fmt: skip
    for rel, row in found.items():
        if row["imported_from"]["agent"]:
            continue  # written with its session
        tool = row["imported_from"]["tool"]
        out = tmp_path / rel.replace("/", "_")
        user.ok("conversation", "export", "--to", tool, row["id"], "-o", str(out))
        assert records(out / rel) == records(longest[(session_of(files[rel]), "")]), rel
        for sub in (r for p, r in found.items() if r.get("forked_from") == row["id"]):  # subagents
            back = out / sub["imported_from"]["path"]
            assert records(back) == records(files[sub["imported_from"]["path"]])


def test_reimporting_the_real_files_writes_nothing(store: tuple[User, Path, Path]) -> None:
    user, root, home = store
    before = tips(user)
    out = user.ok("conversation", "import", "--from", "claude-code", str(root))
    assert " 0 imported, 0 updated" in out and "rewind" not in out
    user.ok("conversation", "import", "--from", "codex", str(home))
    assert tips(user) == before


@pytest.mark.parametrize("name", ["incremental-simple", "incremental-subagents"])
def test_the_incremental_real_captures_append(tmp_path: Path, name: str) -> None:
    user = User(tmp_path, "inc")
    user.ok("init")
    source = CC / "codemie" / "claude" / name
    root = tmp_path / name / "projects"
    live = root / "demo"
    live.mkdir(parents=True)
    shutil.copyfile(source / "turn-1.jsonl", live / "s.jsonl")
    if (source / "turn-1" / "subagents").is_dir():
        shutil.copytree(source / "turn-1" / "subagents", live / "s" / "subagents")
    user.ok("conversation", "import", "--from", "claude-code", str(root))
    shutil.copyfile(source / "turn-2.jsonl", live / "s.jsonl")
    if (source / "turn-2" / "subagents").is_dir():
        shutil.rmtree(live / "s")
        shutil.copytree(source / "turn-2" / "subagents", live / "s" / "subagents")
    user.ok("conversation", "import", "--from", "claude-code", str(root))
    out = tmp_path / name / "out"
    main = rows(user)["demo/s.jsonl"]
    count = user.git("rev-list", "--count", user.tip(main["id"])).strip()
    assert int(count) > 1
    user.ok("conversation", "export", "--to", "claude-code", main["id"], "-o", str(out))
    assert records(out / "demo" / "s.jsonl") == records(source / "turn-2.jsonl")
    assert len([r for r in user.ls() if r.get("imported_from")]) == 1, "turn-2 appended to turn-1"
    user.fsck()
