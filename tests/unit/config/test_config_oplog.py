"""The operation log's retention: a configuration key read by porcelain and
given to the store (which reads no configuration itself)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitstore.store.repo import init_bare
from porcelain.commands.context import App
from porcelain.config import Config
from porcelain.errors import ConfigError
from porcelain.render.output import Output


def test_retention_defaults_to_90_days_and_is_configurable() -> None:
    assert Config.defaults().op_log_retention_days() == 90
    layer = {"store": {"op_log_retention_days": 7}}
    assert Config.defaults().with_layer(layer, "test").op_log_retention_days() == 7
    for bad in (0, -1, "7", 1.5):
        with pytest.raises(ConfigError, match="op_log_retention_days"):
            Config.defaults().with_layer({"store": {"op_log_retention_days": bad}}, "test")


def test_the_store_gets_the_retention_and_the_command_line(tmp_path: Path) -> None:
    config = tmp_path / "extra.toml"
    config.write_text("[store]\nop_log_retention_days = 3\n")
    init_bare(tmp_path / "store.git")  # a store named by --store must exist
    app = App(
        output=Output(),
        environ={"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg")},
        store_option=str(tmp_path / "store.git"),
        config_files=[str(config)],
        argv=("conversation", "edit", "a b"),
        cwd=tmp_path,
    )
    store = app.store()
    assert store.ops.retention() == 3 * 86400
    store.refs.set_active(None)  # nothing to move: no operation
    with store.ops.moving([]):
        pass
    assert store.ops.command == "jp conversation edit 'a b'"
