"""Rules from configuration, -k combination and the ad-hoc rule (4.2, cases 43, 56, 62, 63)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from porcelain.domain.compaction.bounds import Ago, Count, FromEnd, LastCompaction, Position
from porcelain.domain.compaction.dsl import parse_spec
from porcelain.domain.compaction.overlays import ToolCalls
from porcelain.domain.compaction.rules import (
    DEFAULT_RULE,
    Rule,
    SummarySpec,
    adhoc_rule,
    effective_rules,
    redirect_summary_model,
    rules_from_config,
)
from porcelain.errors import ConfigError


def test_nothing_configured_gives_the_built_in_rule() -> None:
    assert rules_from_config(None) == [DEFAULT_RULE]
    assert Rule(Count(1), Count(1), True, ToolCalls.STRIP, None) == DEFAULT_RULE
    assert rules_from_config([]) == []


def test_a_full_rule() -> None:
    rules = rules_from_config(
        [
            {"keep_first": 2, "keep_last": "-3", "reasoning": "strip", "tool_calls": "sreq"},
            {
                "keep_first": "@4",
                "summary": {
                    "instructions": "be brief",
                    "context": "focus on X",
                    "model": {"id": "anthropic/claude-haiku", "max_tokens": 100},
                },
            },
            {"summary": {}},
        ]
    )
    assert rules[0] == Rule(Count(2), FromEnd(3), True, ToolCalls.STRIP_REQUESTS)
    assert rules[1] == Rule(
        keep_first=Position(4),
        summary=SummarySpec("be brief", "focus on X", "anthropic/claude-haiku"),
    )
    assert rules[2] == Rule(summary=SummarySpec())


def test_bound_forms() -> None:  # case 63
    def first(value: Any) -> Any:
        return rules_from_config([{"keep_first": value, "reasoning": "strip"}])[0].keep_first

    assert first(3) == Count(3)
    assert first("last") == LastCompaction()
    assert first("last-compaction") == LastCompaction()
    assert first("5h") == Ago(timedelta(hours=5))


@pytest.mark.parametrize(
    "table, key",
    [
        ({"keep_first": "@0", "reasoning": "strip"}, "rules[0].keep_first"),
        ({"keep_last": -2, "reasoning": "strip"}, "rules[0].keep_last"),
        ({"keep_last": True, "reasoning": "strip"}, "rules[0].keep_last"),
        ({"reasoning": "keep"}, "rules[0].reasoning"),
        ({"tool_calls": "shred"}, "rules[0].tool_calls"),
        ({"tool_calls": 1}, "rules[0].tool_calls"),
        ({"summary": "yes"}, "rules[0].summary"),
        ({"summary": {"prompt": "x"}}, "rules[0].summary.prompt"),
        ({"summary": {"model": {"id": 3}}}, "rules[0].summary.model.id"),
        ({"reasoning": "strip", "keep": 1}, "rules[0].keep"),
        ({"keep_first": 1}, "rules[0]"),
    ],
)
def test_config_errors_name_the_key(table: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError) as err:
        rules_from_config([table])
    assert f"conversation.compaction.{key}" in err.value.message


def test_second_rule_is_named_by_its_index() -> None:
    with pytest.raises(ConfigError, match=r"rules\[1\]\.tool_calls"):
        rules_from_config([{"reasoning": "strip"}, {"tool_calls": "x"}])


def test_tool_modes_map_to_policies() -> None:  # case 43
    expected = {
        "strip": (True, True),
        "strip-requests": (True, False),
        "strip-responses": (False, True),
    }
    for name, (request, response) in expected.items():
        mode = rules_from_config([{"tool_calls": name}])[0].tool_calls
        assert mode is not None
        assert mode.to_event() == {"policy": "strip", "request": request, "response": response}
    omit = rules_from_config([{"tool_calls": "omit"}])[0].tool_calls
    assert omit is not None and omit.to_event() == {"policy": "omit"}


def test_combining_rules() -> None:  # case 62
    config = [DEFAULT_RULE, Rule(summary=SummarySpec())]
    spec = parse_spec("s:..-3")
    assert effective_rules(config, [spec], bare_k=False) == [spec]
    assert effective_rules(config, [spec], bare_k=True) == [*config, spec]
    assert effective_rules(config, [], bare_k=True) == config
    assert effective_rules(config, [], bare_k=False) == []


def test_adhoc_rule() -> None:  # case 56
    assert adhoc_rule(False, None, summarize=True) == Rule(summary=SummarySpec())
    assert adhoc_rule(False, None, True, "focus on X") == Rule(
        summary=SummarySpec(context="focus on X")
    )
    assert adhoc_rule(True, ToolCalls.OMIT, False) == Rule(
        reasoning=True, tool_calls=ToolCalls.OMIT
    )
    assert adhoc_rule(True, None, False).summary is None


def test_model_redirection_only_touches_rules_with_their_own_model() -> None:  # case 56
    own = Rule(summary=SummarySpec(instructions="keep it short", model_id="anthropic/haiku"))
    plain = Rule(summary=SummarySpec())
    mech = Rule(reasoning=True)
    out = redirect_summary_model([own, plain, mech], "anthropic/opus")
    assert out[0].summary == SummarySpec(instructions="keep it short", model_id="anthropic/opus")
    assert out[1:] == [plain, mech]
