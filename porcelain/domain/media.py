"""What kind of bytes an attachment holds, told by its first bytes, never its name.

Images (PNG, JPEG, GIF, WebP) and PDF documents are the non-text kinds jp
sends; anything else that is not UTF-8 text is refused.  A media attachment
is stored in the request event with its bytes in base64 (``data``), its
``media_type`` and ``size``, and a short text ``content`` that names it, so
that a reader that knows only text attachments (an older jp, a provider
that takes no images, the offline model, token estimates) still reads a
well-formed text attachment.  Pure: no I/O.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Final

from porcelain.domain.escaping import untrusted_field
from porcelain.errors import UserError

IMAGE_TYPES: Final = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
PDF: Final = "application/pdf"
MEDIA_TYPES: Final = IMAGE_TYPES | {PDF}


def sniff(raw: bytes) -> str | None:
    """The media type of ``raw`` when it is one jp sends as media, else None."""
    if raw.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if raw.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if raw.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if raw.startswith(b"RIFF") and raw[8:12] == b"WEBP":
        return "image/webp"
    if raw.startswith(b"%PDF-"):
        return PDF
    return None


def describe(media_type: str) -> str:
    return "a PDF document" if media_type == PDF else f"an image ({media_type})"


def placeholder(media_type: str, size: int) -> str:
    """The text ``content`` of a media attachment: what a text-only reader sees."""
    return f"[{describe(media_type)}, {size:,} bytes: sent to the model as media, not as text]"


def media_attachment(kind: str, source: str, media_type: str, raw: bytes) -> dict[str, Any]:
    return {
        "kind": kind,
        "source": source,
        "content": placeholder(media_type, len(raw)),
        "media_type": media_type,
        "data": base64.b64encode(raw).decode("ascii"),
        "size": len(raw),
    }


def media_of(attachment: dict[str, Any]) -> tuple[str, str] | None:
    """``(media_type, base64 data)`` of a well-formed media attachment, else None
    (a text attachment, or one whose data is damaged: then only its text is read)."""
    kind, data = attachment.get("media_type"), attachment.get("data")
    if kind not in MEDIA_TYPES or not isinstance(data, str) or not data:
        return None
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    return str(kind), data


def refuse_media(
    model_id: str, accepted: frozenset[str], attachments: list[dict[str, Any]]
) -> None:
    """Raise ``UserError`` for the first attached image or document ``model_id``
    cannot take (``accepted``: the media types its provider takes)."""
    for attachment in attachments:
        media = media_of(attachment)
        if media is None or media[0] in accepted:
            continue
        source = untrusted_field(str(attachment.get("source", "")))
        takes = "images only" if accepted else "text only"
        raise UserError(
            f"{model_id} takes {takes}: it cannot be sent {source}, {describe(media[0])}",
            "choose a model that takes it with -m (anthropic/... takes images and PDFs), "
            "or attach text",
        )
