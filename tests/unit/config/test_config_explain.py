"""Each effective key, its value and the layer it comes from; rendering that
never lets a conversation's bytes reach a terminal raw."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from porcelain.config import Recorded, load_config
from porcelain.config.explain import as_json, as_text, dotted_key, toml_value, warning
from porcelain.config.trust import Ignored


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "xdg" / "jp").mkdir(parents=True)
    return {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}


def test_each_key_names_its_layer(env: dict[str, str], tmp_path: Path) -> None:
    user = tmp_path / "xdg" / "jp" / "config.toml"
    user.write_text(
        '[assistant.model]\nid = "anthropic/claude-main"\ncontext_window = 1000\n'
        "[[conversation.compaction.rules]]\nkeep_last = 1\n"
    )
    store = tmp_path / "store.toml"
    store.write_text("[assistant]\ninstructions = 'from the store'\n")
    extra = tmp_path / "extra.toml"
    extra.write_text("[[conversation.compaction.rules]]\nkeep_last = 2\n")
    delta = Recorded({"assistant": {"model": {"id": "anthropic/claude-chosen"}}}, "conversation c")
    config = load_config(
        environ=env,
        store_config=store,
        files=[extra],
        overrides=["assistant.model.context_window=2000"],
        deltas=[delta],
    )
    sources = {".".join(path): source for path, _, source in config.entries()}
    assert sources == {
        "assistant.max_retries": "default",
        "assistant.model.max_tokens": "default",
        "assistant.model.id": "conversation c",
        "assistant.model.context_window": "--cfg",
        "assistant.instructions": str(store),
        "conversation.compaction.rules": f"{user} + -c {extra}",
    }


def test_the_same_value_from_cfg_still_names_cfg(env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "xdg" / "jp" / "config.toml").write_text('assistant.model.id = "a/b"\n')
    config = load_config(
        environ=env, store_config=None, files=[], overrides=["assistant.model.id=a/b"]
    )
    assert config.origin(("assistant", "model", "id")) == "--cfg"


def test_the_built_in_rule_is_listed_when_no_layer_has_one(env: dict[str, str]) -> None:
    config = load_config(environ=env, store_config=None, files=[], overrides=[])
    rules = [e for e in config.entries() if e[0] == ("conversation", "compaction", "rules")]
    assert len(rules) == 1 and rules[0][2].startswith("default")


def test_dotted_keys_quote_what_is_not_bare() -> None:
    assert dotted_key(("assistant", "model", "id")) == "assistant.model.id"
    assert dotted_key(("conversation", "tools", "*", "enable")) == 'conversation.tools."*".enable'
    assert dotted_key(("conversation", "tools", "my.tool")) == 'conversation.tools."my.tool"'
    assert dotted_key(("a", "\x1b]0;PWNED\x07")) == 'a."\\u001b]0;PWNED\\u0007"'


def test_values_are_one_line_toml_with_control_characters_escaped() -> None:
    value = {"cmd": ["sh", "-c", "x"], "n": 1, "f": 1.5, "b": True, "s": "a\x1b[2J\u009b\u202eb"}
    text = toml_value(value)
    assert "\n" not in text and "\x1b" not in text and "\u009b" not in text
    assert "\u202e" not in text
    assert tomllib.loads(f"v = {text}")["v"] == value


def test_text_and_json_list_what_was_ignored() -> None:
    entries = [(("assistant", "model", "id"), "a/b", "default")]
    ignored = [
        Ignored(("conversation", "tools", "x", "command"), ["sh"], "conversation c", "no"),
    ]
    data = as_json(entries, ignored)
    assert data["assistant.model.id"] == {"value": "a/b", "source": "default"}
    assert data["ignored"] == [
        {"key": "conversation.tools.x.command", "value": ["sh"], "source": "conversation c",
         "reason": "no"}
    ]  # fmt: skip
    lines = as_text(entries, ignored, "title")
    assert 'assistant.model.id = "a/b"  # default' in lines
    assert any("conversation.tools.x.command" in line and line.startswith("# ") for line in lines)
    assert not any("conversation.tools.x.command" in line for line in as_text(entries, [], "t"))


def test_the_warning_is_one_line_naming_the_keys() -> None:
    ignored = [
        Ignored(("conversation", "tools", f"t{i}", "command"), "x", "s", "r") for i in range(6)
    ]
    text = warning([*ignored, ignored[0]])
    assert "\n" not in text
    assert "conversation.tools.t0.command" in text and "and 2 more" in text
    assert "trust rule" in text
