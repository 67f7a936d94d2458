"""Fixtures of the model layer's tests."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from .anthropic_loopback import KEY, Api


@pytest.fixture(autouse=True)
def _no_warm_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Models run their calls in this process here (tests/e2e/test_warm.py has the other)."""
    monkeypatch.setenv("JP_WARM", "0")


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[Api]:
    server = Api()
    thread = threading.Thread(target=server.server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    yield server
    server.server.shutdown()
    server.server.server_close()
