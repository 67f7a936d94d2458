"""Fixtures of the model layer's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.fake_messages import FakeMessages

from .support import KEY


@pytest.fixture(autouse=True)
def _no_warm_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Models run their calls in this process here (tests/e2e/test_warm.py has the other)."""
    monkeypatch.setenv("JP_WARM", "0")


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeMessages]:
    """The loopback fake of the Messages API, which the SDK in this process talks to."""
    with FakeMessages(api_key=KEY) as server:
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        yield server
