"""Layered TOML configuration: defaults, user file, store file, conversation
deltas, ``-c`` files, ``--cfg`` overrides.  Imports neither anthropic nor pygit2.

The editing functions (``edit``, on tomlkit) are imported when first asked
for (PEP 562): a command that only reads configuration (``jp conversation
show``) loads no tomlkit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from porcelain.config.edit import atomic_write, get_value, set_value, show

_EDIT = frozenset({"atomic_write", "get_value", "set_value", "show"})

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

if not TYPE_CHECKING:  # mypy reads the imports above

    def __getattr__(name: str) -> Any:
        if name not in _EDIT:
            raise AttributeError(f"module 'porcelain.config' has no attribute {name!r}")
        # lazy: tomlkit (in edit) loads only for `jp config set/unset`
        from porcelain.config import edit

        value = getattr(edit, name)
        globals()[name] = value  # asked for once
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})
