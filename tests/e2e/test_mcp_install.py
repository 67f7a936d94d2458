"""`jp mcp install|uninstall claude-code|codex`: the server's entry in the other
tool's own file, every other setting kept, what was there put back; a file
that does not parse is an error and is left byte for byte."""

from __future__ import annotations

import json
import stat
import tomllib
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.e2e.harness import User

CLAUDE = {
    "numStartups": 7,
    "oauthAccount": {"emailAddress": "me@example.invalid"},
    "mcpServers": {"other": {"type": "stdio", "command": "other-server", "args": ["-v"]}},
    "projects": {"/home/me/x": {"mcpServers": {"jp": {"command": "project-scope"}}}},
}
CODEX = '# my settings\nmodel = "o3"  # the one I like\n\n[mcp_servers.other]\ncommand = "other-server"\n'


def claude_file(user: User) -> Path:
    return Path(user.env["HOME"]) / ".claude.json"


def codex_file(user: User) -> Path:
    return Path(user.env["HOME"]) / ".codex" / "config.toml"


def test_claude_code_gets_its_entry_and_loses_nothing(user: User) -> None:
    path = claude_file(user)
    path.write_text(json.dumps(CLAUDE, indent=2))
    path.chmod(0o600)
    out = user.json("mcp", "install", "claude-code")
    assert out["changed"] is True and out["file"] == str(path)
    data = json.loads(path.read_text())
    ours = data["mcpServers"].pop("jp")
    assert data == CLAUDE, "every other setting kept"
    assert ours["type"] == "stdio" and Path(ours["command"]).is_absolute()
    assert ours["args"] == ["mcp", "serve", "--store", str(user.store)], "JP_STORE passed on"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert user.json("mcp", "install", "claude-code")["changed"] is False
    assert "Removed" in user.ok("mcp", "uninstall", "claude-code")
    assert json.loads(path.read_text()) == CLAUDE
    user.fail("mcp", "uninstall", "claude-code")


def test_the_registered_command_serves(user: User) -> None:
    user.ok("mcp", "install", "claude-code")
    entry = json.loads(claude_file(user).read_text())["mcpServers"]["jp"]
    names: list[str] = []

    async def main() -> None:
        params = StdioServerParameters(command=entry["command"], args=entry["args"], env=user.env)
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            with anyio.fail_after(60):
                await session.initialize()
                names.extend(t.name for t in (await session.list_tools()).tools)

    anyio.run(main)
    assert "search_conversations" in names


def test_codex_keeps_its_comments_and_gets_a_table(user: User) -> None:
    path = codex_file(user)
    path.parent.mkdir()
    path.write_text(CODEX)
    user.ok("mcp", "install", "codex")
    text = path.read_text()
    assert text.startswith(CODEX), "the file as it was, our table after it"
    data = tomllib.loads(text)
    assert data["mcp_servers"]["jp"]["args"][:2] == ["mcp", "serve"]
    assert data["mcp_servers"]["other"] == {"command": "other-server"}
    user.ok("mcp", "uninstall", "codex")
    assert tomllib.loads(path.read_text()) == tomllib.loads(CODEX)
    assert path.read_text().startswith(CODEX)


def test_codex_home_is_where_it_goes(user: User, tmp_path: Path) -> None:
    home = tmp_path / "codex-home"
    user.ok("mcp", "install", "codex", env={"CODEX_HOME": str(home)})
    assert "jp" in tomllib.loads((home / "config.toml").read_text())["mcp_servers"]
    user.ok("mcp", "uninstall", "codex", env={"CODEX_HOME": str(home)})
    assert tomllib.loads((home / "config.toml").read_text()) == {}


def test_an_entry_named_jp_before_is_put_back(user: User) -> None:
    path = claude_file(user)
    mine = {"type": "stdio", "command": "/opt/old-jp", "args": ["serve"]}
    path.write_text(json.dumps({"mcpServers": {"jp": mine}}))
    user.ok("mcp", "install", "claude-code")
    assert json.loads(path.read_text())["mcpServers"]["jp"] != mine
    user.ok("mcp", "install", "claude-code", env={"JP_STORE": str(user.store) + "/"})
    user.ok("mcp", "uninstall", "claude-code")
    assert json.loads(path.read_text()) == {"mcpServers": {"jp": mine}}


def test_an_entry_edited_since_is_left_alone(user: User) -> None:
    user.ok("mcp", "install", "claude-code")
    path = claude_file(user)
    data = json.loads(path.read_text())
    data["mcpServers"]["jp"]["args"].append("--mine")
    path.write_text(json.dumps(data))
    proc = user.fail("mcp", "uninstall", "claude-code")
    assert "changed since jp installed it" in proc.stderr
    assert json.loads(path.read_text()) == data


@pytest.mark.parametrize(
    ("tool", "text", "says"),
    [
        ("claude-code", '{"mcpServers": {', "not valid JSON"),
        ("claude-code", "[1, 2]", "does not hold a JSON object"),
        ("claude-code", '{"mcpServers": ["jp"]}', "mcpServers is not a table"),
        ("claude-code", "\x1b]0;hi\x07{", "not valid JSON"),
        ("codex", "model = \n[[", "not valid TOML"),
        ("codex", 'mcp_servers = "x"\n', "mcp_servers is not a table"),
    ],
)
def test_a_file_that_does_not_parse_is_left_as_it_was(
    user: User, tool: str, text: str, says: str
) -> None:
    path = claude_file(user) if tool == "claude-code" else codex_file(user)
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    proc = user.fail("mcp", "install", tool)
    assert says in proc.stderr and proc.stderr.startswith("error: "), proc.stderr
    assert "\x1b" not in proc.stderr
    assert path.read_text() == text


def test_two_installs_at_once_keep_both(user: User) -> None:
    from tests.e2e.test_hooks_install import two_at_once

    recorded = two_at_once(user, "mcp", "mcp-installed.json")
    assert "jp" in json.loads(claude_file(user).read_text())["mcpServers"]
    assert "jp" in tomllib.loads(codex_file(user).read_text())["mcp_servers"]
    assert sorted(recorded) == ["claude-code", "codex"]
    user.ok("mcp", "uninstall", "claude-code")
    user.ok("mcp", "uninstall", "codex")
    assert "jp" not in json.loads(claude_file(user).read_text()).get("mcpServers", {})
