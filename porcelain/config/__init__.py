"""Layered TOML configuration: defaults, user file, store file, conversation
deltas, ``-c`` files, ``--cfg`` overrides.  Imports neither anthropic nor pygit2."""

from __future__ import annotations

from porcelain.config.edit import atomic_write, get_value, set_value, show
from porcelain.config.layers import (
    cli_layers,
    load_config,
    parse_override,
    read_layer,
    user_config_path,
)
from porcelain.config.merge import diff_delta, merge
from porcelain.config.model import DEFAULT_RULE, DEFAULTS, Config
from porcelain.config.schema import validate
from porcelain.config.trust import Ignored, Recorded, filter_delta

__all__ = [
    "DEFAULTS",
    "DEFAULT_RULE",
    "Config",
    "Ignored",
    "Recorded",
    "atomic_write",
    "cli_layers",
    "diff_delta",
    "filter_delta",
    "get_value",
    "load_config",
    "merge",
    "parse_override",
    "read_layer",
    "set_value",
    "show",
    "user_config_path",
    "validate",
]
