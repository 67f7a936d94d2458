"""Images in a page: inline ``data:`` URLs of bytes that are an image, bounded.

An image comes from the store (a request's media attachment, an imported
session's image block, a Markdown ``![](data:...)``): untrusted bytes.  It is
shown only when its first bytes are a PNG, JPEG, GIF or WebP (``media.sniff``:
the bytes decide, never the type the record claims), when it is no larger than ``MAX_BYTES``, and then as
a ``data:`` URL jp re-encodes from the decoded bytes, with the width and height
read from its header.  The CSP allows ``data:`` for images only
(``img-src 'self' data:``): such an image loads nothing from anywhere.
"""

from __future__ import annotations

import base64
import binascii
import struct

from porcelain.domain.media import IMAGE_TYPES, sniff
from porcelain.serve.html import Markup, tag, void

MAX_BYTES = 2 << 20  # an image larger than this is named, not shown
MAX_SHOWN = 640  # CSS pixels of width an image is drawn at, at most


def decoded(data: str) -> bytes | None:
    """The bytes of base64 ``data`` (None: not base64, or larger than allowed)."""
    if len(data) > (MAX_BYTES * 4) // 3 + 8:
        return None
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def size_of(raw: bytes, media_type: str) -> tuple[int, int] | None:
    """(width, height) from the image's header, None when it cannot be read."""
    try:
        if media_type == "image/png" and raw[12:16] == b"IHDR":
            return struct.unpack(">II", raw[16:24])
        if media_type == "image/gif":
            return struct.unpack("<HH", raw[6:10])
        if media_type == "image/jpeg":
            return _jpeg_size(raw)
        if media_type == "image/webp":
            return _webp_size(raw)
    except struct.error:
        return None
    return None


def _jpeg_size(raw: bytes) -> tuple[int, int] | None:
    at = 2
    while at + 9 < len(raw):
        if raw[at] != 0xFF:
            return None
        marker = raw[at + 1]
        length = struct.unpack(">H", raw[at + 2 : at + 4])[0]
        if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE):
            height, width = struct.unpack(">HH", raw[at + 5 : at + 9])
            return width, height
        at += 2 + length
    return None


def _webp_size(raw: bytes) -> tuple[int, int] | None:
    chunk = raw[12:16]
    if chunk == b"VP8X":
        width = int.from_bytes(raw[24:27], "little") + 1
        height = int.from_bytes(raw[27:30], "little") + 1
        return width, height
    if chunk == b"VP8 ":
        width, height = struct.unpack("<HH", raw[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L":
        bits = int.from_bytes(raw[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    return None


def image(data: object, claimed: object = None, alt: object = "image") -> Markup:
    """An ``<img>`` of base64 ``data`` when its bytes are an image no larger than
    ``MAX_BYTES`` (shown as the type its bytes are, whatever ``claimed``); else a
    line that says why it is not shown."""
    raw = decoded(data) if isinstance(data, str) else None
    if raw is None:
        return _refused("an image too large to show, or not base64")
    kind = sniff(raw)
    if kind not in IMAGE_TYPES:
        said = claimed if isinstance(claimed, str) else "an image"
        return _refused(f"refused: {len(raw):,} bytes said to be {said} are not an image")
    assert kind is not None
    size = size_of(raw, kind)
    url = f"data:{kind};base64,{base64.b64encode(raw).decode('ascii')}"
    if size is None:
        return _refused(f"refused: a {kind} whose size cannot be read")
    width, height = size
    shown_w = min(width, MAX_SHOWN)
    shown_h = max(1, round(height * shown_w / width)) if width else height
    caption = tag("span", f"{kind}, {width}×{height}, {len(raw):,} bytes", class_="caption")
    picture = void("img", src=url, width=shown_w, height=shown_h, alt=str(alt)[:200])
    return tag("span", Markup(picture + caption), class_="image")


def _refused(why: str) -> Markup:
    return tag("span", why, class_="image-refused")
