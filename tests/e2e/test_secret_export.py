"""`jp conversation export --to claude-code|codex` (docs/security.md, section 7):
the session written back as stored warns of its secrets by kind and count, and
`--redact` writes the tool's files with none of them, still the tool's format
(each line a JSON record that an import of the tool reads back)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.e2e.harness import User
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
