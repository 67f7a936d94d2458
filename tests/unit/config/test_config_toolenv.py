"""A command tool's environment: the minimal base, what its table adds, never a
provider's key."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from porcelain.app.query.tools import ToolCall, run_command
from porcelain.config import load_config, set_value
from porcelain.config.toolenv import PROVIDER_KEYS, check_tool_env, provider_keys, tool_environment
from porcelain.errors import ConfigError

JP_ENV = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/home/u",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "LC_TIME": "en_GB.UTF-8",
    "TMPDIR": "/tmp",
    "TERM": "xterm",
    "ANTHROPIC_API_KEY": "sk-ant-secret",
    "OPENAI_API_KEY": "sk-openai-secret",
    "GITHUB_TOKEN": "ghp-secret",
    "AWS_SECRET_ACCESS_KEY": "aws-secret",
    "JP_STORE": "/home/u/store.git",
}


def test_the_base_environment_only() -> None:
    assert tool_environment({}, JP_ENV) == {
        "PATH": "/usr/bin:/bin",
        "HOME": "/home/u",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "LC_TIME": "en_GB.UTF-8",
        "TMPDIR": "/tmp",
        "TERM": "xterm",
    }


def test_pass_env_and_env_add_to_it() -> None:
    table = {"pass_env": ["GITHUB_TOKEN", "NOT_SET"], "env": {"MODE": "ci", "PATH": "/opt/bin"}}
    env = tool_environment(table, JP_ENV)
    assert env["GITHUB_TOKEN"] == "ghp-secret"
    assert "NOT_SET" not in env
    assert env["MODE"] == "ci" and env["PATH"] == "/opt/bin"
    assert "AWS_SECRET_ACCESS_KEY" not in env and "JP_STORE" not in env


def test_a_provider_key_is_dropped_even_if_a_table_slipped_past_the_check() -> None:
    table = {"pass_env": ["ANTHROPIC_API_KEY"], "env": {"OPENAI_API_KEY": "x"}}
    env = tool_environment(table, JP_ENV)
    assert not PROVIDER_KEYS & set(env)


def test_provider_keys_include_each_providers_api_key_env() -> None:
    data = {"providers": {"local": {"api_key_env": "LOCAL_LLM_KEY"}, "bad": "x"}}
    assert provider_keys(data) == PROVIDER_KEYS | {"LOCAL_LLM_KEY"}


@pytest.mark.parametrize(
    "table",
    [
        {"pass_env": ["HOME", "ANTHROPIC_API_KEY"]},
        {"env": {"OPENAI_API_KEY": "sk-literal"}},
        {"pass_env": ["LOCAL_LLM_KEY"]},
    ],
)
def test_naming_a_provider_key_is_a_configuration_error(table: dict[str, object]) -> None:
    data = {
        "providers": {"local": {"api_key_env": "LOCAL_LLM_KEY"}},
        "conversation": {"tools": {"printenv": {"command": ["env"], **table}}},
    }
    with pytest.raises(ConfigError) as info:
        check_tool_env(data, lambda path: "/home/u/.config/jp/config.toml")
    field = next(iter(table))
    message = info.value.message
    assert message.startswith(
        f"/home/u/.config/jp/config.toml: conversation.tools.printenv.{field}"
    )
    assert "provider" in message
    assert any(name in message for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "LOCAL_LLM_KEY"))


def test_load_config_refuses_it_naming_the_file(tmp_path: Path) -> None:
    user = tmp_path / "xdg" / "jp" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('[conversation.tools.printenv]\ncommand = ["env"]\n')
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    load_config(environ=env, store_config=None, files=[], overrides=[])
    with pytest.raises(ConfigError) as info:
        load_config(
            environ=env,
            store_config=None,
            files=[],
            overrides=['conversation.tools.printenv.pass_env=["ANTHROPIC_API_KEY"]'],
        )
    assert info.value.message.startswith("--cfg: conversation.tools.printenv.pass_env names")


def test_config_set_refuses_it(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        set_value(path, "conversation.tools.x.pass_env", '["ANTHROPIC_API_KEY"]')
    assert not path.exists()


@pytest.mark.parametrize(
    "key, value",
    [("pass_env", '["has space"]'), ("pass_env", '"HOME"'), ("env", '{"A=B" = "x"}')],
)
def test_bad_names_are_refused(tmp_path: Path, key: str, value: str) -> None:
    with pytest.raises(ConfigError, match=f"conversation.tools.x.{key} must be"):
        set_value(tmp_path / "c.toml", f"conversation.tools.x.{key}", value)


SPY = "import json, os; print(json.dumps(dict(os.environ)))"


def test_a_command_tool_runs_with_that_environment() -> None:
    table = {"command": [sys.executable, "-c", SPY], "pass_env": ["GITHUB_TOKEN"]}
    outcome = run_command("spy", table, ToolCall("t1", "spy", {}), environ=JP_ENV)
    assert not outcome.is_error, outcome.content
    seen = json.loads(outcome.content)
    seen.pop("LC_CTYPE", None)  # the interpreter may set it for itself
    assert seen == {**tool_environment({}, JP_ENV), "GITHUB_TOKEN": "ghp-secret"}
