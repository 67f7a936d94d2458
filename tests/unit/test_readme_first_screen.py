"""The README's first screen tells a Claude Code user how to import, keep
importing (the hook) and resume on another machine."""

from __future__ import annotations

from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_first_screen_has_a_section_for_claude_code_users() -> None:
    first = "\n".join(README.read_text().splitlines()[:45])
    for said in (
        "## Coming from Claude Code",
        "import --from claude-code",
        "settings.json",
        "export --to claude-code",
        "claude --resume",
    ):
        assert said in first, said
