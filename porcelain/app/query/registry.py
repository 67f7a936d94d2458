"""Built-in tools: the types a tool is made of, and the registry they join.

A built-in's module registers its factory with `@builtin(name)` when it is
imported (`porcelain/app/query/tools.py` imports them all).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from porcelain.models.base import ToolSpec


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ToolOutcome:
    content: str
    is_error: bool = False
    metadata: dict[str, Any] | None = None


@dataclass(frozen=True)
class BuiltinTool:
    spec: ToolSpec
    run: Callable[[ToolCall, Any], ToolOutcome]
    enabled_by_default: bool = False


BUILTINS: dict[str, Callable[[], BuiltinTool]] = {}


def builtin(name: str) -> Callable[[Callable[[], BuiltinTool]], Callable[[], BuiltinTool]]:
    """Register a built-in tool factory (each registers itself when its module is imported)."""

    def register(factory: Callable[[], BuiltinTool]) -> Callable[[], BuiltinTool]:
        BUILTINS[name] = factory
        return factory

    return register
