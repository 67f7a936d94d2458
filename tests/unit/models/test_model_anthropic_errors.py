"""The anthropic adapter on loopback: errors, broken streams, credentials."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import pytest

from porcelain.errors import ConfigError, ProviderError
from porcelain.models import StreamInterrupted, get_model
from tests.support.fake_messages import FakeMessages, error_body, message, sse_events

from .support import KEY, Deltas, request


def test_401_is_one_line_without_the_key(fake: FakeMessages) -> None:
    fake.reply_error(401, "authentication_error", "invalid x-api-key")
    with pytest.raises(ProviderError) as info:
        get_model("anthropic/claude-test").respond(request(), Deltas())
    assert info.value.message == "anthropic returned 401 authentication_error: invalid x-api-key"
    assert KEY not in info.value.message and KEY not in str(info.value.hint)
    assert len(fake.requests) == 1, "a 401 is not retried"


def test_overloaded_without_retries_left(fake: FakeMessages) -> None:
    fake.reply_error(529, "overloaded_error", "Overloaded", retry_after_ms=5)
    with pytest.raises(ProviderError, match="anthropic returned 529 overloaded_error: Overloaded"):
        get_model("anthropic/claude-test", max_retries=0).respond(request(), Deltas())


def text_events(text: str) -> list[tuple[str, dict[str, Any]]]:
    """message_start, ping, the text block's start, its deltas, its end, the message's end."""
    return sse_events(message([{"type": "text", "text": text}]))


def test_a_dropped_stream_keeps_the_text_already_shown(fake: FakeMessages) -> None:
    events = text_events("The first half")
    fake.reply_events(events[:4])  # through the first delta: the stream ends there
    deltas = Deltas()
    with pytest.raises(StreamInterrupted) as info:
        get_model("anthropic/claude-test").respond(request(), deltas)
    assert isinstance(info.value, ProviderError)
    first = events[3][1]["delta"]["text"]
    assert [e.get("message") for e in info.value.partial_events] == [first]
    assert ("text", first) in deltas.seen


def test_an_error_event_mid_stream_keeps_completed_blocks(fake: FakeMessages) -> None:
    events = text_events("Done part.")
    overloaded = error_body("overloaded_error", "Overloaded")
    fake.reply_events([*events[:-2], ("error", overloaded)])  # the block ends, the message not
    with pytest.raises(StreamInterrupted) as info:
        get_model("anthropic/claude-test").respond(request(), Deltas())
    assert "overloaded_error" in info.value.message
    assert [e.get("message") for e in info.value.partial_events] == ["Done part."]


def test_an_unreachable_api_names_the_url(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with pytest.raises(ProviderError) as info:
        get_model("anthropic/claude-test", max_retries=0).respond(request(), Deltas())
    assert info.value.message.startswith(
        f"could not reach the anthropic API at http://127.0.0.1:{port}"
    )
    assert "\n" not in info.value.message and KEY not in info.value.message


def no_credentials(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    for name in list(os.environ):
        if name.startswith("ANTHROPIC_") or name == "XDG_CONFIG_HOME":
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")


def test_no_key_is_a_config_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    no_credentials(monkeypatch, tmp_path)
    with pytest.raises(ConfigError, match="no Anthropic API key") as info:
        get_model("anthropic/claude-test").respond(request(), Deltas())
    assert "ANTHROPIC_API_KEY" in str(info.value.hint)


def test_a_broken_credentials_profile_is_a_config_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    no_credentials(monkeypatch, tmp_path)
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(tmp_path / "nowhere"))
    with pytest.raises(ConfigError, match="anthropic credentials"):
        get_model("anthropic/claude-test").respond(request(), Deltas())


def test_an_api_message_echoing_the_key_is_redacted(fake: FakeMessages) -> None:
    fake.reply_error(400, "invalid_request_error", f"bad header value {KEY}")
    with pytest.raises(ProviderError) as info:
        get_model("anthropic/claude-test").respond(request(), Deltas())
    assert KEY not in info.value.message
    assert info.value.message.startswith("anthropic returned 400 invalid_request_error:")
