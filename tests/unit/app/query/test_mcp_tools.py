"""The pure parts of MCP servers as tools: which listed tools are refused, the
run mode a tool ends with, what a conversation may choose, where config goes."""

from __future__ import annotations

from pathlib import Path

import pytest

from porcelain.app.query.mcp_client import Listed
from porcelain.app.query.mcp_tools import refusal, settings, shown_wire, wire_name
from porcelain.config import Config, Recorded
from porcelain.config.layers import load_config
from porcelain.config.schema import validate
from porcelain.config.toolenv import check_tool_env, provider_keys
from porcelain.errors import ConfigError
from porcelain.models.catalog import Catalog

OBJECT = {"type": "object", "properties": {"q": {"type": "string"}}}


@pytest.mark.parametrize(
    ("name", "schema", "why"),
    [
        ("search", OBJECT, None),
        ("odd\x1bname", OBJECT, "characters"),
        ("dotted.name", OBJECT, "characters"),
        ("n" * 60, OBJECT, "too long"),
        (5, OBJECT, "characters"),
        ("s", {"type": "string"}, "not a JSON schema of an object"),
        ("s", {"type": "object", "properties": {"q": {"type": 5}}}, "not valid"),
        ("s", {"type": "object", "description": "x" * 70_000}, "over 64 KB"),
    ],
)
def test_a_listed_tool_is_refused_for_a_reason(name: object, schema: object, why: str | None) -> None:
    found = refusal(Listed(name, "d", schema), "srv")
    assert found is None if why is None else (found is not None and why in found)


def test_the_wire_name_is_one_a_provider_accepts_and_is_shown_dotted() -> None:
    assert wire_name("fs", "read_file") == "mcp__fs__read_file"
    assert shown_wire("mcp__fs__read__file") == "mcp.fs.read__file"
    assert shown_wire("mcp__fs__") == "mcp__fs__" and shown_wire("date") == "date"


def _config(server: dict[str, object], conversation: dict[str, object] | None = None) -> Config:
    data: dict[str, object] = {"providers": {"mcp": {"fs": {"command": "x", **server}}}}
    if conversation:
        data["conversation"] = {"tools": conversation}
    return Config.defaults().with_layer(data, "test")


def test_run_modes_default_to_ask_and_the_wildcard_then_the_tool_decide() -> None:
    tables = {"tools": {"*": {"run": "unattended"}, "rm": {"run": "ask"}, "old": {"enable": False}}}
    config = _config(tables)
    server = config.data["providers"]["mcp"]["fs"]
    assert settings(config, server, "fs", "read") == (True, "unattended")
    assert settings(config, server, "fs", "rm") == (True, "ask")
    assert settings(config, server, "fs", "old") == (False, "unattended")
    assert settings(_config({}), {}, "fs", "read") == (True, "ask")


def test_a_conversation_may_switch_off_or_make_ask_never_loosen() -> None:
    chosen = {"mcp.fs.read": {"confirm": True}, "mcp.fs.old": {"enable": False}}
    config = _config({"tools": {"*": {"run": "unattended"}}}, chosen)
    server = config.data["providers"]["mcp"]["fs"]
    assert settings(config, server, "fs", "read") == (True, "ask")
    assert settings(config, server, "fs", "old") == (False, "unattended")


def test_a_recorded_delta_chooses_among_a_servers_tools_and_defines_no_server(tmp_path: Path) -> None:
    user = tmp_path / "config" / "jp" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('[providers.mcp.fs]\ncommand = "srv"\n[providers.mcp.fs.tools."*"]\nrun = "unattended"\n')
    delta = {
        "conversation": {"tools": {"mcp.fs.read": {"enable": False, "confirm": True},
                                   "mcp.other.x": {"enable": True}}},
        "providers": {"mcp": {"evil": {"command": "rm -rf /"}}},
    }
    environ = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "HOME": str(tmp_path)}
    config = load_config(environ=environ, store_config=None, files=(), overrides=(), deltas=[delta])
    assert config.data["conversation"]["tools"]["mcp.fs.read"] == {"enable": False, "confirm": True}
    assert "evil" not in config.data["providers"]["mcp"]
    ignored = {".".join(i.path) for i in config.ignored}
    assert any(p.startswith("providers.mcp.evil") for p in ignored), ignored
    assert "conversation.tools.mcp.other.x.enable" in ignored


def test_the_schema_checks_a_server_and_mcp_is_no_model_provider() -> None:
    validate({"providers": {"mcp": {"fs": {"command": "s", "args": ["-v"], "env": ["TOKEN"],
                                           "startup_timeout_secs": 5,
                                           "tools": {"*": {"run": "skip"}}}}}}, "t")
    with pytest.raises(ConfigError, match="run must be"):
        validate({"providers": {"mcp": {"fs": {"tools": {"x": {"run": "always"}}}}}}, "t")
    with pytest.raises(ConfigError, match="unknown key providers.mcp.fs.kind"):
        validate({"providers": {"mcp": {"fs": {"kind": "openai"}}}}, "t")
    data = {"providers": {"mcp": {"fs": {"command": "s", "env": ["OPENAI_API_KEY"]}}}}
    assert "mcp" not in Catalog.of(data).providers
    assert "OPENAI_API_KEY" in provider_keys(data)
    with pytest.raises(ConfigError, match="providers.mcp.fs.env names OPENAI_API_KEY"):
        check_tool_env(data, lambda _: "config.toml")


def test_a_tool_the_users_file_turned_off_is_never_switched_on_by_a_delta(tmp_path: Path) -> None:
    user = tmp_path / "config" / "jp" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text(
        '[providers.mcp.fs]\ncommand = "srv"\n[providers.mcp.fs.tools."*"]\nrun = "unattended"\n'
        "[providers.mcp.fs.tools.rm]\nenable = false\n"
        '[conversation.tools.shell]\ncommand = ["sh"]\nenable = false\n'
    )
    chosen = {"mcp.fs.rm": {"enable": True}, "shell": {"enable": True}, "mcp.fs.ls": {"enable": True}}
    environ = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "HOME": str(tmp_path)}
    for own in (False, True):  # a recorded delta outlives its command: own ones too
        delta = Recorded({"conversation": {"tools": chosen}}, "delta", own=own)
        config = load_config(environ=environ, store_config=None, files=(), overrides=(), deltas=[delta])
        server = config.data["providers"]["mcp"]["fs"]
        assert settings(config, server, "fs", "rm") == (False, "unattended")
        assert config.data["conversation"]["tools"]["shell"]["enable"] is False
        assert settings(config, server, "fs", "ls") == (True, "unattended")
        ignored = {".".join(i.path) for i in config.ignored}
        assert {"conversation.tools.mcp.fs.rm.enable", "conversation.tools.shell.enable"} <= ignored
    # the user's --cfg for one command is above every delta, and even then "*" run is not inherited
    cfg = ['conversation.tools."mcp.fs.rm".enable=true']
    config = load_config(environ=environ, store_config=None, files=(), overrides=cfg)
    assert settings(config, config.data["providers"]["mcp"]["fs"], "fs", "rm") == (True, "ask")


def test_a_server_that_never_starts_costs_its_startup_limit_not_more() -> None:
    """A server that sleeps instead of answering: `start` gives up at its limit and
    kills it at once, without the package's graceful stop (2 s for stdin, then
    SIGTERM) on top: 1 s costs under 2 s here, about 3.5 s before."""
    import sys
    import time

    import anyio.from_thread  # noqa: F401 (loaded before the clock starts: imports are slow)
    import mcp.client.stdio  # noqa: F401

    from porcelain.app.query.mcp_client import McpError, McpServers, ServerSpec

    server = Path(__file__).resolve().parents[3] / "support" / "mcp_server.py"
    spec = ServerSpec("t", sys.executable, (str(server), "slow"), {"PATH": "/usr/bin:/bin"}, 1.0, 5.0)
    servers = McpServers()
    start = time.monotonic()
    try:
        with pytest.raises(McpError, match="did not start within 1 s"):
            servers.start(spec)
        took = time.monotonic() - start
    finally:
        servers.close()
    assert took < 2.0, took
