"""The shape of the command layer: a command hands its result to render's
``Output.emit`` (and kin) and never asks which format was asked for."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = ROOT / "porcelain" / "commands"

# a format check that decides no output: whether to draw progress or a picker
NOT_OUTPUT = {
    "porcelain/commands/conversation/sessions.py",  # no progress bar beside JSON
    "porcelain/commands/conversation/use.py",  # no interactive picker for a script
}


def _format_checks(path: Path) -> list[int]:
    """Lines that read ``<output>.json`` or ``<output>.format``."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute)
        and node.attr in ("json", "format")
        and isinstance(node.value, ast.Attribute | ast.Name)
        and getattr(node.value, "attr", getattr(node.value, "id", "")) in ("output", "out")
    ]


def test_commands_leave_the_format_to_render() -> None:
    found = []
    for path in sorted(COMMANDS.rglob("*.py")):
        where = path.relative_to(ROOT).as_posix()
        lines = _format_checks(path)
        if lines and where not in NOT_OUTPUT:
            found.append(f"{where}:{lines} (use app.output.emit / emit_json / text / say)")
    assert not found, "\n".join(found)


def test_the_exceptions_still_need_their_check() -> None:
    for where in NOT_OUTPUT:
        assert _format_checks(ROOT / where), f"{where} no longer checks; drop it from NOT_OUTPUT"
