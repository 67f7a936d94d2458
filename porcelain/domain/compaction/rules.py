"""Compaction rules: what to compact (bounds) and how (policies).

Rules come from configuration (``conversation.compaction.rules``, a list of
tables that config layers append to), from ``-k SPEC`` (the DSL) and from
``compact -r/-t/-s`` (one ad-hoc rule).  A rule's unset bounds mean keep the
first turn and the last turn.  When nobody configures rules the built-in one
applies: strip reasoning and tool calls, keep first 1 and last 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from porcelain.domain.compaction.bounds import Count, RuleBound, parse_rule_bound
from porcelain.domain.compaction.overlays import TOOL_MODE_HELP, ToolCalls, lookup_tool_mode
from porcelain.errors import ConfigError, UsageError

RULES_KEY = "conversation.compaction.rules"


@dataclass(frozen=True)
class SummarySpec:
    """Presence means "summarize the range"."""

    instructions: str | None = None  # replaces the summarizer's system prompt
    context: str | None = None  # extra guidance appended to the request
    model_id: str | None = None  # None: the assistant's model


@dataclass(frozen=True)
class Rule:
    keep_first: RuleBound | None = None  # None: keep the first turn
    keep_last: RuleBound | None = None  # None: keep the last turn
    reasoning: bool = False
    tool_calls: ToolCalls | None = None
    summary: SummarySpec | None = None

    @property
    def has_policy(self) -> bool:
        return self.reasoning or self.tool_calls is not None or self.summary is not None


DEFAULT_RULE = Rule(
    keep_first=Count(1), keep_last=Count(1), reasoning=True, tool_calls=ToolCalls.STRIP
)

_RULE_KEYS = ("keep_first", "keep_last", "reasoning", "tool_calls", "summary")
_SUMMARY_KEYS = ("instructions", "context", "model")


def _bound(value: Any, key: str) -> RuleBound:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ConfigError(f'{key}: expected a count or a string like "@2", "-3", "5h"')
    if isinstance(value, int):
        if value < 0:
            raise ConfigError(
                f'{key}: {value} is negative; write "-{-value}" to count from the end'
            )
        return Count(value)
    try:
        return parse_rule_bound(value, key)
    except UsageError as err:
        raise ConfigError(err.message) from None


def _text(value: Any, key: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{key}: expected a string")
    return value


def _summary(value: Any, key: str) -> SummarySpec:
    if not isinstance(value, dict):
        raise ConfigError(f"{key}: expected a table")
    for name in value:
        if name not in _SUMMARY_KEYS:
            raise ConfigError(f"{key}.{name}: unknown key (use {', '.join(_SUMMARY_KEYS)})")
    model = value.get("model")
    model_id: str | None = None
    if isinstance(model, dict):
        if "id" in model:
            model_id = _text(model["id"], f"{key}.model.id")
    elif model is not None:
        model_id = _text(model, f"{key}.model")
    return SummarySpec(
        instructions=None
        if "instructions" not in value
        else _text(value["instructions"], f"{key}.instructions"),
        context=None if "context" not in value else _text(value["context"], f"{key}.context"),
        model_id=model_id,
    )


def rule_from_config(table: Any, where: str) -> Rule:
    """One ``[[conversation.compaction.rules]]`` table; ``where`` names it in errors."""
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: expected a table")
    for name in table:
        if name not in _RULE_KEYS:
            raise ConfigError(f"{where}.{name}: unknown key (use {', '.join(_RULE_KEYS)})")
    reasoning = table.get("reasoning")
    if reasoning is not None and reasoning != "strip":
        raise ConfigError(
            f'{where}.reasoning: unknown value {reasoning!r} (the only value is "strip")'
        )
    tools: ToolCalls | None = None
    if "tool_calls" in table:
        raw = table["tool_calls"]
        tools = lookup_tool_mode(raw) if isinstance(raw, str) else None
        if tools is None:
            raise ConfigError(f"{where}.tool_calls: unknown value {raw!r} ({TOOL_MODE_HELP})")
    rule = Rule(
        keep_first=None
        if "keep_first" not in table
        else _bound(table["keep_first"], f"{where}.keep_first"),
        keep_last=None
        if "keep_last" not in table
        else _bound(table["keep_last"], f"{where}.keep_last"),
        reasoning=reasoning == "strip",
        tool_calls=tools,
        summary=None if "summary" not in table else _summary(table["summary"], f"{where}.summary"),
    )
    if not rule.has_policy:
        raise ConfigError(
            f"{where}: the rule compacts nothing; set reasoning, tool_calls or summary"
        )
    return rule


def rules_from_config(raw: Sequence[Any] | None) -> list[Rule]:
    """The configured rules; ``None`` (nobody configured any) gives the built-in rule."""
    if raw is None:
        return [DEFAULT_RULE]
    if not isinstance(raw, list | tuple):
        raise ConfigError(f"{RULES_KEY}: expected a list of tables")
    return [rule_from_config(table, f"{RULES_KEY}[{i}]") for i, table in enumerate(raw)]


def effective_rules(
    config_rules: Sequence[Rule], specs: Sequence[Rule], bare_k: bool
) -> list[Rule]:
    """``-k`` (bare) = configured rules; ``-k SPEC`` rules replace them unless bare ``-k`` too.

    Configured rules come first, then inline ones in flag order.  Neither: no rules.
    """
    return [*(config_rules if bare_k else ()), *specs]


def adhoc_rule(
    reasoning: bool, tools: ToolCalls | None, summarize: bool, context: str | None = None
) -> Rule:
    """``compact -r/-t/-s [TEXT]``: exactly these policies, default bounds; TEXT is context."""
    summary = SummarySpec(context=context or None) if summarize or context else None
    return Rule(reasoning=reasoning, tool_calls=tools, summary=summary)


def redirect_summary_model(rules: Sequence[Rule], model_id: str) -> list[Rule]:
    """``--model``: every rule naming its own summary model uses ``model_id`` instead."""
    out: list[Rule] = []
    for rule in rules:
        if rule.summary is not None and rule.summary.model_id is not None:
            rule = replace(rule, summary=replace(rule.summary, model_id=model_id))
        out.append(rule)
    return out
