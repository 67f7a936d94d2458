"""Token counts: the provider's count only where a decision needs it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from porcelain.models.catalog import Catalog, Warm
from porcelain.models.tokens import TokenCount, count, estimate, fits
from tests.support.fake_messages import FakeMessages

from .test_model_messages import call, req, result, say

NO_WARM = Catalog(warm=Warm(enable=False))
EVENTS = [req("a" * 400), say("b" * 400), call("toolu_1", path="x"), result("toolu_1", "c" * 400)]


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeMessages]:
    with FakeMessages() as server:
        for key, value in server.env().items():
            monkeypatch.setenv(key, value)
        yield server


def test_labels_say_which_kind_of_number_it_is() -> None:
    assert TokenCount(12_300).label() == "~12,300 (estimated)"
    assert TokenCount(12_345, "anthropic").label() == "12,345 (counted by anthropic)"
    assert TokenCount.from_json(TokenCount(5, "anthropic").to_json()) == TokenCount(5, "anthropic")
    assert TokenCount.from_json({"tokens": "x"}) is None


def test_the_estimate_decides_alone_far_from_the_budget(fake: FakeMessages) -> None:
    guess = estimate(EVENTS).tokens
    assert fits(EVENTS, guess * 10, "anthropic/claude-test", catalog=NO_WARM)
    assert not fits(EVENTS, guess // 4, "anthropic/claude-test", catalog=NO_WARM)
    assert fake.count_requests == [], "no count was needed"


def test_near_the_budget_the_provider_counts(fake: FakeMessages) -> None:
    guess = estimate(EVENTS).tokens
    counted = count("anthropic/claude-test", EVENTS, catalog=NO_WARM)
    assert counted.counted_by == "anthropic" and len(fake.count_requests) == 1
    assert fits(EVENTS, counted.tokens, "anthropic/claude-test", catalog=NO_WARM)
    assert not fits(EVENTS, counted.tokens - 1, "anthropic/claude-test", catalog=NO_WARM)
    assert len(fake.count_requests) == 3
    assert guess != counted.tokens  # the fake counts the JSON, not the text


def test_providers_without_a_count_and_failed_counts_use_the_estimate(
    fake: FakeMessages, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert count("offline/jp", EVENTS) == estimate(EVENTS)
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    assert count("openai/gpt-test", EVENTS, catalog=NO_WARM) == estimate(EVENTS)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    assert count("anthropic/claude-test", EVENTS, catalog=NO_WARM).estimated


def test_the_reviews_size_rule_counts_only_between_the_clear_cases(fake: FakeMessages) -> None:
    from porcelain.app.review.start import source_fits

    guess = estimate(EVENTS).tokens
    assert source_fits(EVENTS, guess * 10, "anthropic/claude-test", NO_WARM)
    assert not source_fits(EVENTS, guess // 4, "anthropic/claude-test", NO_WARM)
    assert fake.count_requests == []
    counted = count("anthropic/claude-test", EVENTS, catalog=NO_WARM).tokens
    assert source_fits(EVENTS, counted, "anthropic/claude-test", NO_WARM)
    assert not source_fits(EVENTS, counted - 1, "anthropic/claude-test", NO_WARM)
