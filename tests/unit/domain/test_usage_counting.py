"""`jp usage`'s counting and pricing as pure functions (porcelain/domain/usage_*.py,
prices.py): records in, entries, rows and costs out, every figure worked out by hand."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any

import pytest

from porcelain.domain.prices import TABLE, candidates, lookup, user_prices
from porcelain.domain.usage_records import entries, valid
from porcelain.domain.usage_report import merge, report

SONNET = "claude-sonnet-4-5-20250929"


def usage(i: int, o: int, w: int = 0, r: int = 0) -> dict[str, Any]:
    return {
        "input_tokens": i,
        "output_tokens": o,
        "cache_creation_input_tokens": w,
        "cache_read_input_tokens": r,
    }


def claude(uuid: str, when: str, model: str, counts: dict[str, Any], **kw: Any) -> dict[str, Any]:
    """An event that keeps a Claude Code assistant record."""
    record = {
        "type": "assistant",
        "uuid": uuid,
        "sessionId": "s1",
        "timestamp": when,
        "message": {"id": kw.pop("mid", None), "model": model, "usage": counts},
        **kw,
    }
    return {"type": "chat_response", "timestamp": when, "metadata": {"source_record": record}}


ORIGIN = {"tool": "claude-code", "session": "s1", "path": "-home-me/s1.jsonl"}


def test_one_message_split_over_records_counts_once_its_first_record() -> None:
    events = [
        claude(
            "a", "2026-03-01T10:00:00Z", SONNET, usage(10, 1, 100, 1000), mid="m1", requestId="r1"
        ),
        claude(
            "b", "2026-03-01T10:00:01Z", SONNET, usage(10, 50, 100, 1000), mid="m1", requestId="r1"
        ),
    ]
    found = merge([("c1", entries(events, ["x1", "x2"], ORIGIN))])
    assert [e[6:] for _, e in found] == [[10, 1, 100, 1000]]
    rows = report(found, "day", {})["rows"]
    # 10 * 3 + 1 * 15 + 100 * 3.75 + 1000 * 0.3 = 720 per million
    assert rows[0]["cost_usd"] == pytest.approx(0.00072)
    assert rows[0]["period"] == "2026-03-01"
    assert rows[0]["models"] == [SONNET] and rows[0]["total_tokens"] == 1111


def test_without_a_request_id_the_same_record_counts_once_wherever_it_is() -> None:
    one = claude("u1", "2026-03-01T10:00:00Z", SONNET, usage(3, 4), mid="m1")
    other = claude("u2", "2026-03-01T10:00:00Z", SONNET, usage(3, 4), mid="m1")
    a = entries([one, other], ["x1", "x2"], ORIGIN)
    b = entries([one], ["y1"], ORIGIN)  # the session imported again, elsewhere
    found = merge([("c1", a), ("c2", b)])
    assert len(found) == 2, "records without a request id are not one message to ccusage"
    assert {cid for cid, _ in found} == {"c1"}


def test_hostile_counts_make_a_record_count_for_nothing() -> None:
    bad = [-1, 10**13, True, 1.5, "9", None]
    events = [
        claude(f"u{n}", "2026-03-01T10:00:00Z", SONNET, usage(1, value), mid=f"m{n}", requestId="r")
        for n, value in enumerate(bad)
    ]
    assert entries(events, [f"x{n}" for n in range(len(bad))], ORIGIN) == []
    jp_event = {
        "type": "chat_response",
        "timestamp": "2026-03-01 10:00:00.0",
        "message": "hi",
        "metadata": {"usage": {"input_tokens": 10**15, "output_tokens": 1}},
    }
    assert entries([jp_event], ["x"], None) == []
    good = ["k", 1.0, None, "jp", None, None, 5, 0, 0, 0]
    assert valid([good]) and valid([])
    for bad in (
        ["k", 1.0, None, "jp", None, None, -5, 0, 0, 0],
        ["k", True, None, "jp", None, None, 1, 0, 0, 0],
        ["k", 1.0, 3, "jp", None, None, 1, 0, 0, 0],
        ["k", 1.0, None, "jp", None, None, 1, 0, 0, 10**13],
        ["k", 1.0, None, "jp", None, None, 1, 0, 0],
        {"k": 1},
    ):
        assert not valid([good, bad]), bad


def test_jp_answers_and_summaries_count_with_their_model() -> None:
    events = [
        {
            "type": "config_delta",
            "timestamp": "2026-03-01 10:00:00.0",
            "delta": {"assistant": {"model": {"id": "anthropic/claude-opus-4-6"}}},
        },
        {
            "type": "chat_response",
            "timestamp": "2026-03-01 10:00:01.0",
            "message": "older turn, no model recorded",
            "metadata": {"usage": {"input_tokens": 100, "output_tokens": 10}},
        },
        {
            "type": "compaction",
            "timestamp": "2026-03-01 10:00:02.0",
            "from_turn": 0,
            "to_turn": 0,
            "metadata": {
                "summary_usage": {"input_tokens": 1000, "output_tokens": 100},
                "model": "anthropic/claude-haiku-4-5",
            },
        },
    ]
    found = entries(events, ["c0", "c1", "c2"], None)
    assert [(e[2], e[3], e[6], e[7]) for e in found] == [
        ("anthropic/claude-opus-4-6", "jp", 100, 10),
        ("anthropic/claude-haiku-4-5", "jp", 1000, 100),
    ]
    total = report(merge([("c", found)]), "model", {})["rows"]
    # opus: 100 * 5 + 10 * 25 = 750; haiku: 1000 * 1 + 100 * 5 = 1500 (per million)
    assert [r["cost_usd"] for r in total] == [pytest.approx(0.0015), pytest.approx(0.00075)]
    # a fork shares the commits: counted once
    assert len(merge([("c", found), ("fork", found)])) == 2


def codex_count(when: str, i: int, c: int, o: int) -> dict[str, Any]:
    total = {"input_tokens": i, "cached_input_tokens": c, "output_tokens": o, "total_tokens": i + o}
    record = {
        "timestamp": when,
        "type": "event_msg",
        "payload": {"type": "token_count", "info": {"total_token_usage": total}},
    }
    return {"type": "source_record", "timestamp": when, "record": record}


def test_codex_counts_the_growth_of_its_totals_once() -> None:
    context = {
        "type": "source_record",
        "timestamp": "2026-03-03T12:00:00Z",
        "record": {"type": "turn_context", "payload": {"model": "gpt-5-codex"}},
    }
    events = [
        context,
        codex_count("2026-03-03T12:00:04Z", 1000, 400, 50),
        codex_count("2026-03-03T12:00:05Z", 1000, 400, 50),
        codex_count("2026-03-03T12:01:03Z", 3000, 2400, 80),
    ]
    origin = {"tool": "codex", "session": "x", "path": "2026/03/03/rollout.jsonl"}
    found = entries(events, ["a", "b", "c", "d"], origin)
    assert [e[6:] for e in found] == [[600, 50, 0, 400], [0, 30, 0, 2000]]
    row = report(merge([("c", found)]), "day", {})["rows"][0]
    # 600 * 1.25 + 80 * 10 + 2400 * 0.125 = 1850 per million
    assert row["cost_usd"] == pytest.approx(0.00185)


def test_a_model_without_a_price_has_no_cost_and_the_user_may_give_one() -> None:
    events = [
        claude(
            "u",
            "2026-03-02T09:00:00Z",
            "mystery-model-1",
            usage(1000, 1000),
            mid="m",
            requestId="r",
        )
    ]
    found = merge([("c", entries(events, ["x"], ORIGIN))])
    row = report(found, "day", {})["rows"][0]
    assert row["cost_usd"] is None and row["unpriced_models"] == ["mystery-model-1"]
    layer = {"usage": {"prices": {"mystery-model-1": {"input": 2, "output": 8}}}}
    row = report(found, "day", user_prices(layer))["rows"][0]
    assert row["cost_usd"] == pytest.approx(0.01) and row["unpriced_models"] == []
    # a user's price replaces the shipped one, the prices left out kept
    mine = user_prices({"usage": {"prices": {"claude-sonnet-4-5": {"output": 0}}}})
    assert mine["claude-sonnet-4-5"].input == 3 and mine["claude-sonnet-4-5"].output == 0


@pytest.mark.parametrize(
    ("model", "name"),
    [
        ("converse/jp.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5"),
        ("anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"),
        ("us.anthropic.claude-opus-4-6-v1:0", "claude-opus-4-6"),
        ("claude-opus-4-6-fast", "claude-opus-4-6"),
        ("openai/gpt-5.1-codex", "gpt-5.1-codex"),
    ],
)
def test_a_model_is_found_under_its_provider_names(model: str, name: str) -> None:
    assert name in candidates(model)
    assert lookup(model, {}) is TABLE[name]


@pytest.fixture
def tokyo() -> Iterator[None]:
    before = os.environ.get("TZ")
    os.environ["TZ"] = "Asia/Tokyo"
    time.tzset()
    yield
    os.environ["TZ"] = before or "UTC"
    time.tzset()


def test_days_are_local(tokyo: None) -> None:
    events = [claude("u", "2026-03-01T23:30:00Z", SONNET, usage(1, 1), mid="m", requestId="r")]
    rows = report(merge([("c", entries(events, ["x"], ORIGIN))]), "day", {})["rows"]
    assert rows[0]["period"] == "2026-03-02"
    assert (
        report(merge([("c", entries(events, ["x"], ORIGIN))]), "week", {})["rows"][0]["period"]
        == "2026-03-02"
    )  # a Monday


def test_a_requests_tokens_beyond_200k_cost_the_long_context_rate_as_ccusage_says() -> None:
    big = claude(
        "u", "2026-03-01T10:00:00Z", SONNET, usage(250_000, 10, 0, 300_000), mid="m", requestId="r"
    )
    small = claude("v", "2026-03-01T11:00:00Z", SONNET, usage(1000, 10), mid="n", requestId="r")
    found = merge([("c", entries([big, small], ["x", "y"], ORIGIN))])
    row = report(found, "day", {})["rows"][0]
    # input: 200,000 * 3 + 50,000 * 6 + 1,000 * 3; output 20 * 15;
    # cache read: 200,000 * 0.3 + 100,000 * 0.6 (per million)
    expected = (600_000 + 300_000 + 3_000 + 300 + 60_000 + 60_000) / 1e6
    assert row["cost_usd"] == pytest.approx(expected)
