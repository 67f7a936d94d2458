"""A turn's events as HTML: the prompt, the answers from Markdown, reasoning
folded, and each tool call one line (its name and its input: the command, the
path, the pattern) with its result folded under it, long output cut behind
"show all"; images shown (``porcelain/serve/images.py``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from gitstore import PROPOSE_COMPACTION, Event, Kind
from porcelain.domain.attachments import attachments_of
from porcelain.domain.interrupted import is_interrupted
from porcelain.domain.media import IMAGE_TYPES, media_of
from porcelain.domain.titles import source_record
from porcelain.domain.toolinput import one_line
from porcelain.serve.html import Markup, esc, join, tag
from porcelain.serve.images import image
from porcelain.serve.markdown import render

BOUND = 2000  # characters of a tool's output shown before "show all"
MAX_IMAGES = 20  # images drawn in one event, at most (the rest are counted)


def tool_names(events: Sequence[Event]) -> dict[str, str]:
    return {
        str(e.get("id")): str(e.get("name"))
        for e in events
        if e.get("type") == Kind.TOOL_CALL_REQUEST
    }


def folded(label: object, body: object, class_: str) -> Markup:
    return tag("details", Markup(tag("summary", label) + esc(body)), class_=class_)


def bounded(text: str) -> Markup:
    """``text`` in a <pre>, cut at ``BOUND`` characters with the whole behind "show all"."""
    if len(text) <= BOUND:
        return tag("pre", text)
    head = tag("pre", text[:BOUND] + " …")
    rest = folded(f"show all ({len(text):,} characters)", tag("pre", text), "all")
    return Markup(head + rest)


def images_of(blocks: Any) -> list[tuple[Any, Any]]:
    """(claimed media type, base64 data) of the image blocks of a message's content
    (Claude Code's and the Messages API's ``{"type": "image", "source": ...}``)."""
    found = []
    for block in blocks if isinstance(blocks, list) else ():
        source = block.get("source") if isinstance(block, dict) else None
        if block.get("type") == "image" and isinstance(source, dict):
            found.append((source.get("media_type"), source.get("data")))
    return found


def _content(record: dict[str, Any] | None) -> Any:
    message = record.get("message") if record else None
    return message.get("content") if isinstance(message, dict) else None


def result_images(items: Sequence[Event]) -> dict[str, list[tuple[Any, Any]]]:
    """The images each tool result of a turn holds, by its call's id (kept in the
    imported records: a tool result's image blocks)."""
    out: dict[str, list[tuple[Any, Any]]] = {}
    for event in items:
        for block in _blocks(_content(source_record(event))):
            if block.get("type") == "tool_result":
                found = images_of(block.get("content"))
                if found:
                    out.setdefault(str(block.get("tool_use_id")), []).extend(found)
    return out


def _texts(content: Any) -> str:
    """The text blocks of a tool result's content (its images are drawn, not dumped)."""
    return "\n".join(str(b.get("text", "")) for b in _blocks(content) if b.get("type") == "text")


def _blocks(content: Any) -> list[dict[str, Any]]:
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def pictures(found: Sequence[tuple[Any, Any]]) -> Markup:
    shown = join(image(data, claimed) for claimed, data in found[:MAX_IMAGES])
    more = len(found) - MAX_IMAGES
    if more > 0:
        shown = Markup(shown + tag("p", f"and {more} more images", class_="image-refused"))
    return shown


def prompt_images(items: Sequence[Event]) -> list[tuple[Any, Any]]:
    """The images of a turn's typed prompt (kept in the imported record, which the
    turn's first event carries)."""
    found = []
    for event in items:
        record = source_record(event)
        if record is not None and record.get("type") == "user":
            found.extend(images_of(_content(record)))
    return found


def _request(event: Event, shown: Sequence[tuple[Any, Any]] = ()) -> Markup:
    body = tag("div", str(event.get("content", "")), class_="text")
    found = []
    for item in attachments_of(event):
        media = media_of(item)
        if media is not None and media[0] in IMAGE_TYPES:
            found.append(media)
            continue
        note = f"attached: {item.get('kind', 'file')} {item.get('source')}"
        body = Markup(body + tag("div", note, class_="attached"))
    # an import keeps a prompt's images as the request's own (what the model is
    # sent); the record's copies are drawn only for a request that has none
    found = found or list(shown)
    return tag("div", Markup(body + pictures(found)), class_="request")


def _response(event: Event) -> Markup:
    if "message" in event:
        cut = (
            tag("p", "[interrupted: the answer was cut off here]", class_="cut")
            if is_interrupted(event)
            else ""
        )
        return tag("div", Markup(render(str(event["message"])) + cut), class_="answer")
    if "reasoning" in event:
        return folded("thinking", tag("div", str(event["reasoning"]), class_="text"), "reasoning")
    if "data" in event:
        return tag("pre", json.dumps(event["data"], indent=2, ensure_ascii=False), class_="data")
    return Markup("")


def _parsed(text: str) -> Any:
    """A result's content that the import kept as the blocks' JSON (else None)."""
    try:
        return json.loads(text)
    except ValueError:
        return None


def tool_call(event: Event, result: Event | None, found: Sequence[tuple[Any, Any]]) -> Markup:
    """One line (the tool's name, its input), folding its whole input and its result."""
    name = str(event.get("name"))
    arguments = event.get("arguments") or {}
    line = one_line(name, arguments)
    if name == PROPOSE_COMPACTION:
        name = "proposal (propose_compaction)"
    if result is None:
        outcome, body = "no result", Markup("")
    else:
        text = str(result.get("content", ""))
        blocks = _parsed(text) if found else None
        if isinstance(blocks, list):  # the blocks' JSON, images' data too: their text only
            text = _texts(blocks)
        outcome = ("error, " if result.get("is_error") else "") + f"{len(text):,} characters"
        body = tag("div", Markup(bounded(text) + pictures(found)), class_="tool-output")
    whole = json.dumps(arguments, indent=1, ensure_ascii=False)
    alone = isinstance(arguments, dict) and list(arguments.values()) == [line]  # said in full
    shown = "" if alone or whole == line else tag("div", bounded(whole), class_="tool-input")
    label = Markup(
        tag("span", name, class_="tool-name")
        + (tag("code", line, class_="tool-line") if line else "")
        + tag("span", f" → {outcome}", class_="outcome")
    )
    error = " error" if result is not None and result.get("is_error") else ""
    return folded(label, Markup(esc(shown) + body), f"tool{error}")


def turn_html(items: Sequence[tuple[Event, str]], names: dict[str, str]) -> list[Markup]:
    """The HTML of each event of one turn worth showing, a tool result under its
    call (a result whose call is not in the turn stands alone)."""
    events = [e for e, _ in items]
    results = {str(e.get("id")): e for e in events if e.get("type") == Kind.TOOL_CALL_RESPONSE}
    calls = {str(e.get("id")) for e in events if e.get("type") == Kind.TOOL_CALL_REQUEST}
    imported = any(source_record(e) for e in events)
    found = result_images(events) if imported else {}
    prompt = prompt_images(events) if imported else []
    parts = []
    for event, commit in items:
        kind = event.get("type")
        if kind == Kind.CHAT_REQUEST:
            body, prompt = _request(event, prompt), []
        elif kind == Kind.TOOL_CALL_REQUEST:
            key = str(event.get("id"))
            body = tool_call(event, results.get(key), found.get(key, []))
        elif kind == Kind.TOOL_CALL_RESPONSE and str(event.get("id")) in calls:
            continue
        else:
            body = event_html(event, names)
        if body:
            parts.append(tag("div", body, class_="event", id=f"e-{commit}" if commit else None))
    return parts


def event_html(event: Event, names: dict[str, str]) -> Markup:
    """An event's HTML (empty for jp's own bookkeeping events)."""
    kind = event.get("type")
    if kind == Kind.CHAT_REQUEST:
        return _request(event)
    if kind == Kind.CHAT_RESPONSE:
        return _response(event)
    if kind == Kind.TOOL_CALL_REQUEST:
        return tool_call(event, None, [])
    if kind == Kind.TOOL_CALL_RESPONSE:
        name = names.get(str(event.get("id")), "tool")
        what = "error" if event.get("is_error") else "result"
        text = str(event.get("content", ""))
        return folded(f"{what} of {name} ({len(text):,} characters)", bounded(text), "tool-result")
    if kind == Kind.INQUIRY_REQUEST:
        question = (event.get("question") or {}).get("text", "")
        return tag("div", f"inquiry: {question}", class_="inquiry")
    return Markup("")
