"""The text a model reads for a request that carries attachments.

Each attachment is data the user handed over (a file, standard input, a
command's output), not instructions: it is framed in an ``<attachment>``
element naming its kind and source, before the user's own words, and the
frame cannot be closed from inside (a closing tag in the content is written
as ``<\\/attachment>``).  Pure: no I/O.
"""

from __future__ import annotations

import json
from typing import Any

from gitstore import Event
from porcelain.domain.media import IMAGE_TYPES, media_of

_CLOSE = "</attachment"
_CLOSE_ESCAPED = "<\\/attachment"


def attachments_of(event: Event) -> list[dict[str, Any]]:
    """The well-formed attachments of a request (anything else is ignored)."""
    found = event.get("attachments")
    if not isinstance(found, list):
        return []
    return [
        a
        for a in found
        if isinstance(a, dict)
        and isinstance(a.get("content"), str)
        and isinstance(a.get("source"), str)
    ]


def media_in(event: Event) -> list[tuple[str, str]]:
    """``(media_type, base64 data)`` of each image or document a request carries,
    in order (each is also named by its text frame in ``request_text``)."""
    found = (media_of(a) for a in attachments_of(event))
    return [m for m in found if m is not None]


def frame(attachment: dict[str, Any]) -> str:
    kind = str(attachment.get("kind", "file"))
    source = json.dumps(str(attachment["source"]), ensure_ascii=False)
    content = str(attachment["content"]).replace(_CLOSE, _CLOSE_ESCAPED)
    if not content.endswith("\n"):
        content += "\n"
    return f'<attachment kind="{kind}" source={source}>\n{content}</attachment>'


def request_text(event: Event) -> str:
    """A ``chat_request`` as the model reads it: its attachments, then its text."""
    content = event.get("content")
    text = content if isinstance(content, str) else ""
    attached = attachments_of(event)
    if not attached:
        return text
    framed = "\n\n".join(frame(a) for a in attached)
    return f"{framed}\n\n{text}" if text.strip() else framed


def result_media(event: Event) -> list[tuple[str, str]]:
    """``(media_type, base64 data)`` of each image a tool result carries (an imported
    session's, kept in ``metadata.attachments``: a result's ``content`` is text), in
    order; its text names each one too."""
    meta = event.get("metadata")
    found = meta.get("attachments") if isinstance(meta, dict) else None
    if not isinstance(found, list):
        return []
    media = (media_of(a) for a in found if isinstance(a, dict))
    return [m for m in media if m is not None and m[0] in IMAGE_TYPES]
