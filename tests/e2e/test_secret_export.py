"""`jp conversation export --to claude-code|codex` (docs/security.md, section 7):
the session written back as stored warns of its secrets by kind and count, and
`--redact` writes the tool's files with none of them, still the tool's format
(each line a JSON record that an import of the tool reads back)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.e2e.harness import User
from tests.support import secretcorpus as corpus
from tests.support.secretcorpus import PLANTED, claude_code_session, codex_home

pytestmark = pytest.mark.e2e


def _found(text: str, kinds: list[str]) -> list[str]:
    """The planted values of ``kinds`` in ``text``, as they are or JSON-escaped."""
    values = [PLANTED[k][1] for k in kinds]
    return [v for v in values if v in text or json.dumps(v)[1:-1] in text]


def _written(folder: Path) -> tuple[str, list[Path]]:
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    return "".join(p.read_text(encoding="utf-8") for p in files), files


@pytest.mark.parametrize(("tool", "plant"), [("claude-code", claude_code_session), ("codex", codex_home)])
def test_export_to_the_tools_files_redacts_on_request(
    user: User, tmp_path: Path, tool: str, plant: Callable[[object], list[str]]
) -> None:
    source = tmp_path / "source"
    kinds = plant(source)
    user.ok("conversation", "import", "--from", tool, str(source))
    cid = user.ls()[0]["id"]
    plain = user.run("conversation", "export", "--to", tool, cid, "-o", str(tmp_path / "plain"))
    assert plain.returncode == 0 and "warning:" in plain.stderr and "secret(s)" in plain.stderr
    assert _found(plain.stderr + plain.stdout, kinds) == []  # named by kind, never shown
    assert _found(_written(tmp_path / "plain")[0], kinds)  # as stored: the secrets are there
    out = user.json("conversation", "export", "--to", tool, "--redact", cid, "-o", str(tmp_path / "red"))
    assert out["redacted"] is True and sum(sum(f["secrets"].values()) for f in out["files"]) >= len(kinds)
    text, files = _written(tmp_path / "red")
    assert _found(text, kinds) == [] and "[redacted: " in text
    for path in files:
        if path.suffix == ".jsonl":
            assert all(isinstance(json.loads(line), dict) for line in path.read_text().splitlines())
    other = User(tmp_path, "other")
    other.ok("init")
    other.ok("conversation", "import", "--from", tool, str(tmp_path / "red"))
    back = other.ls()[0]["id"]
    assert other.json("conversation", "scan", back) == []
    assert len(other.events(back)) == len(user.events(cid))
    said = user.run("conversation", "export", "--to", tool, "--redact", cid, "-o", str(tmp_path / "again"))
    assert said.returncode == 0 and "secret(s) redacted" in said.stdout and "warning" not in said.stderr


def _objects(user: User) -> bytes:
    return subprocess.run(
        ["git", "--git-dir", str(user.store), "cat-file", "--batch-all-objects", "--batch"],
        capture_output=True, check=True,
    ).stdout  # fmt: skip


def _state(user: User) -> str:
    refs = subprocess.run(["git", "--git-dir", str(user.store), "for-each-ref"], capture_output=True, text=True, check=True)
    return refs.stdout + user.ok("op", "log")


@pytest.mark.parametrize(("tool", "plant"), [("claude-code", claude_code_session), ("codex", codex_home)])
def test_on_import_stores_no_secret_and_a_second_import_writes_nothing(
    user: User, tmp_path: Path, tool: str, plant: Callable[[object], list[str]]
) -> None:
    source = tmp_path / "source"
    kinds = plant(source)
    user.config("[redaction]\non_import = true\n")
    user.ok("conversation", "import", "--from", tool, str(source))
    cid = user.ls()[0]["id"]
    assert _found(_objects(user).decode("utf-8", "replace"), kinds) == []
    assert user.json("conversation", "scan", cid) == []
    assert "[redacted: " in user.ok("conversation", "print", "--style", "full", cid)
    before = _state(user)
    again = user.json("conversation", "import", "--from", tool, str(source))
    assert {f["action"] for f in again["files"]} == {"unchanged"} and _state(user) == before
    # the kept position set aside (another line limit): the file's records are read and
    # compared again, redacted the same way, and found equal
    bigger = "--cfg=store.max_event_bytes=9000000"
    again = user.json(bigger, "conversation", "import", "--from", tool, str(source))
    assert {f["action"] for f in again["files"]} == {"unchanged"}, again
    assert _state(user) == before
    # the test's own check: without the same redaction the records differ from the stored
    changed = user.json("--cfg=store.max_event_bytes=8000000", "--cfg=redaction.on_import=false", "conversation", "import", "--from", tool, str(source))
    assert {f["action"] for f in changed["files"]} != {"unchanged"}


def test_on_import_redacts_a_jp_folder_and_its_title_and_a_second_import_writes_nothing(
    user: User, tmp_path: Path
) -> None:
    folder = Path(str(corpus.leaky_jp(tmp_path / "17800000930-leaky", "github token", attachment="jwt")))
    meta = json.loads((folder / "metadata.json").read_text())
    (folder / "metadata.json").write_text(json.dumps({**meta, "title": f"key {PLANTED['npm token'][1]}"}))
    kinds = ["github token", "jwt", "npm token"]
    user.config("[redaction]\non_import = true\n")
    cid = user.import_(folder)
    assert _found(_objects(user).decode("utf-8", "replace"), kinds) == []
    assert user.json("conversation", "scan", cid) == []
    assert "[redacted: npm token]" in user.show(cid)["title"]
    before = _state(user)
    again = user.run("conversation", "import", str(folder))
    assert again.returncode == 0 and "nothing written" in again.stderr and _state(user) == before
