"""`jp q -e`: what does not depend on the text (the model, its key, the
conversation) is checked before $EDITOR opens, so a missing key never costs
the text a person just wrote."""

from __future__ import annotations

import stat
from pathlib import Path

from tests.e2e.harness import User
from tests.support.fake_messages import FakeMessages


def marking_editor(tmp_path: Path) -> tuple[str, Path]:
    """An editor that writes a line and leaves a marker that it ran."""
    marker = tmp_path / "EDITOR-RAN"
    script = tmp_path / "mark.py"
    script.write_text(
        "import sys, pathlib\n"
        f"pathlib.Path({str(marker)!r}).touch()\n"
        "p = pathlib.Path(sys.argv[1])\n"
        "p.write_text(p.read_text() + 'WRITTEN\\n')\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return f"python3 {script}", marker


def test_a_missing_key_is_named_before_the_editor_opens(
    online: User, fake: FakeMessages, tmp_path: Path
) -> None:
    editor, marker = marking_editor(tmp_path)
    online.env.pop("ANTHROPIC_API_KEY", None)
    before = online.snapshot()
    for args in (("q", "--new", "-e"), ("q", "--new", "-e", "start:")):
        proc = online.fail(*args, env={"JP_EDITOR": editor})
        assert "ANTHROPIC_API_KEY" in proc.stderr
        assert not marker.exists(), "the editor opened before the key was checked"
    assert online.snapshot() == before and not fake.requests


def test_an_unknown_conversation_is_named_before_the_editor_opens(
    online: User, tmp_path: Path
) -> None:
    editor, marker = marking_editor(tmp_path)
    proc = online.fail("q", "-i", "jp-c00000000000", "-e", env={"JP_EDITOR": editor})
    assert "jp-c00000000000" in proc.stderr
    assert not marker.exists()


def test_with_the_checks_passed_the_editor_writes_the_query(
    online: User, fake: FakeMessages, tmp_path: Path
) -> None:
    editor, marker = marking_editor(tmp_path)
    fake.reply_text("Answered.")
    out = online.ok("q", "--new", "-e", "start:", env={"JP_EDITOR": editor})
    assert marker.exists() and "Answered." in out


def test_a_failure_after_the_editor_names_the_kept_draft(user: User, tmp_path: Path) -> None:
    user.ok("q", "--new", "hello")
    cid = user.active()
    script = tmp_path / "vanish.py"
    script.write_text(  # writes the text, and meanwhile the conversation goes away
        "import subprocess, sys, pathlib\n"
        "p = pathlib.Path(sys.argv[1])\n"
        "p.write_text('KEEP-THIS-TEXT\\n')\n"
        f"subprocess.run(['git', '--git-dir', {str(user.store)!r}, 'update-ref', '-d', "
        f"'refs/conversations/{cid}'], check=True)\n"
    )
    proc = user.fail("q", "-e", env={"JP_EDITOR": f"python3 {script}"})
    drafts = list(Path(user.store).rglob(f"drafts/{cid}.md"))
    assert drafts and "KEEP-THIS-TEXT" in drafts[0].read_text()
    assert f"your text is kept in {drafts[0]}; `jp q -i {cid} -e`" in proc.stderr


def test_one_draft_per_conversation_and_new_text_goes_under_a_kept_one(
    user: User, tmp_path: Path
) -> None:
    user.ok("q", "--new", "first")
    one = user.active()
    user.ok("q", "--new", "second")
    two = user.active()
    for cid, text in ((one, "FOR-ONE"), (two, "FOR-TWO")):
        proc = user.fail("q", "-i", cid, "-e", text, env={"JP_EDITOR": "false"})
        assert "draft" in proc.stderr
    drafts = {p.stem: p.read_text() for p in Path(user.store).rglob("drafts/*.md")}
    assert set(drafts) == {one, two}
    assert "FOR-ONE" in drafts[one] and "FOR-TWO" in drafts[two]

    editor, _ = marking_editor(tmp_path)
    user.ok("q", "-i", one, "-e", "ADDED", env={"JP_EDITOR": editor})
    request = [e for e in user.events(one) if e["type"] == "chat_request"][-1]
    assert request["content"] == "FOR-ONE\n\nADDED\nWRITTEN"
    assert not (Path(user.store) / "jp" / "drafts" / f"{one}.md").exists()
    assert (Path(user.store) / "jp" / "drafts" / f"{two}.md").exists()
