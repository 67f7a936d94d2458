"""Media attachments, pure: told by their bytes, read back only when whole, refused
where the model cannot take them, and sent in each provider's shape."""

from __future__ import annotations

import base64

import pytest

from gitstore.events.commits import message
from porcelain.domain.attachments import media_in, request_text
from porcelain.domain.media import IMAGE_TYPES, MEDIA_TYPES, media_attachment, refuse_media, sniff
from porcelain.errors import UserError
from porcelain.models.messages import to_messages
from porcelain.models.openai_messages import to_chat_messages

PNG = b"\x89PNG\r\n\x1a\n" + bytes(16)


def _request(*attachments: dict[str, object]) -> dict[str, object]:
    return {
        "type": "chat_request",
        "timestamp": "2026-01-01T00:00:00.000000Z",
        "content": "look",
        "attachments": list(attachments),
    }


def test_the_bytes_tell_the_type_never_the_name() -> None:
    assert sniff(PNG) == "image/png"
    assert sniff(b"\xff\xd8\xff\xe0") == "image/jpeg"
    assert sniff(b"GIF89a...") == "image/gif"
    assert sniff(b"RIFF\x00\x00\x00\x00WEBPVP8 ") == "image/webp"
    assert sniff(b"%PDF-1.7") == "application/pdf"
    assert sniff(b"\x7fELF\x02") is None and sniff(b"# notes.md") is None


def test_a_damaged_media_attachment_is_read_as_its_text_only() -> None:
    whole = media_attachment("file", "a.png", "image/png", PNG)
    damaged = {**whole, "data": "!!not base64"}
    unknown = {**whole, "media_type": "image/svg+xml"}
    assert media_in(_request(whole)) == [("image/png", base64.b64encode(PNG).decode())]
    assert media_in(_request(damaged)) == [] and media_in(_request(unknown)) == []
    text = request_text(_request(damaged))
    assert "a.png" in text and "image/png" in text and "!!not" not in text


def test_a_model_that_cannot_take_it_refuses_with_the_name() -> None:
    pdf = media_attachment("file", "paper.pdf", "application/pdf", b"%PDF-1.4")
    refuse_media("anthropic/x", MEDIA_TYPES, [pdf])
    with pytest.raises(UserError, match="paper.pdf"):
        refuse_media("openai/x", IMAGE_TYPES, [pdf])
    with pytest.raises(UserError, match="text only"):
        refuse_media("plain/x", frozenset(), [media_attachment("file", "a.png", "image/png", PNG)])


def test_each_provider_gets_its_own_shape() -> None:
    event = _request(
        media_attachment("file", "a.png", "image/png", PNG),
        {"kind": "file", "source": "n.txt", "content": "NOTE"},
    )
    (anthropic,) = to_messages([event])
    kinds = [b["type"] for b in anthropic["content"]]
    assert kinds == ["image", "text"] and "NOTE" in anthropic["content"][1]["text"]
    (user,) = [m for m in to_chat_messages([event]) if m["role"] == "user"]
    assert [p["type"] for p in user["content"]] == ["image_url", "text"]
    assert "NOTE" in user["content"][1]["text"]
    (plain,) = [
        m
        for m in to_chat_messages([_request({"kind": "stdin", "source": "-", "content": "PIPED"})])
        if m["role"] == "user"
    ]
    assert isinstance(plain["content"], str) and "PIPED" in plain["content"]


def test_the_commit_message_names_the_attachments() -> None:
    event = _request(
        media_attachment("file", "a\x1b[2J.png", "image/png", PNG),
        {"kind": "command", "source": "git diff", "content": "diff\n"},
    )
    text = message(event)
    assert "Attached: file a?[2J.png (image/png, 24 bytes); command git diff (5 bytes)" in text
    assert "\x1b" not in text


def test_the_boundary_refuses_a_media_attachment_that_does_not_add_up() -> None:
    from gitstore import errors
    from gitstore.events import validate

    whole = media_attachment("file", "a.png", "image/png", PNG)
    assert validate(_request(whole))["attachments"][0]["data"] == whole["data"]
    for bad in (
        {**whole, "data": "!!"},
        {**whole, "size": 3},
        {**whole, "media_type": "image/svg+xml"},
        {k: v for k, v in whole.items() if k != "size"},
    ):
        with pytest.raises(errors.InvalidEvent):
            validate(_request(bad))
