"""One event, one commit.

The commit's tree holds one file, ``event.json`` (canonical JSON, see
``events.canonical_json``).  Its parent is the previous event; author and
committer dates are the event's timestamp; the author's name is the speaker
(``user``, ``assistant``, ``tool``, ``jp``).  The message is a readable subject
line, the full text for messages, and a ``Jp-Event: <type>`` trailer, so that
``git log --oneline refs/conversations/<id>`` reads as a transcript.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from gitstore.events import Event, canonical_json
from gitstore.events.kinds import PROPOSE_COMPACTION, Kind

if TYPE_CHECKING:
    from gitstore.git import objects as gitobjects
    from gitstore.git.objects import Who
else:
    from gitstore.lazy import lazy_module

    gitobjects = lazy_module("gitstore.git.objects")  # with hashlib: for a write, not a read

SUBJECT_WIDTH = 72
# the kinds as plain strings: a ``Kind`` member is looked up through the enum's
# metaclass (a thousand instructions), and these are compared for every event written
_REQUEST, _RESPONSE = Kind.CHAT_REQUEST.value, Kind.CHAT_RESPONSE.value
_CALL, _RESULT = Kind.TOOL_CALL_REQUEST.value, Kind.TOOL_CALL_RESPONSE.value
_TURN, _START = Kind.TURN_START.value, Kind.CONVERSATION_START.value
_COMPACTION, _RESET = Kind.COMPACTION.value, Kind.COMPACTION_RESET.value
_ASK, _ANSWER = Kind.INQUIRY_REQUEST.value, Kind.INQUIRY_RESPONSE.value
_CONFIG = Kind.CONFIG_DELTA.value
_AUTHORS = {_REQUEST: "user", _TURN: "user", _ANSWER: "user", _RESPONSE: "assistant"}
_AUTHORS |= {_CALL: "assistant", _RESULT: "tool"}  # any other kind: jp


def _first_line(text: str, width: int = SUBJECT_WIDTH) -> str:
    line = " ".join(text.strip().split("\n", 1)[0].split())
    if not line:
        line = "(empty)"
    return line if len(line) <= width else line[: width - 3].rstrip() + "..."


def _interrupted(event: Event) -> bool:
    """An answer a broken stream or Ctrl-C cut off (``metadata.interrupted``)."""
    meta = event.get("metadata")
    return isinstance(meta, Mapping) and bool(meta.get("interrupted"))


def _turns(event: Event) -> str:
    a, b = event.get("from_turn", 0) + 1, event.get("to_turn", 0) + 1
    return f"turn {a}" if a == b else f"turns {a}-{b}"


def _review_of(event: Event) -> str:
    """`` (review <id>)`` for a compaction a review applied, else empty."""
    meta = event.get("metadata")
    origin = meta.get("proposal") if isinstance(meta, Mapping) else None
    review = origin.get("review") if isinstance(origin, Mapping) else None
    return f" (review {review})" if isinstance(review, str) else ""


def _proposal_subject(args: Any) -> str:
    """``propose_compaction: turns 2-6 (summary, 312 words)`` (1-based, as the call says)."""
    if not isinstance(args, Mapping):
        return "propose_compaction: (no arguments)"
    a, b = args.get("from_turn"), args.get("to_turn")
    span = f"turn {a}" if a == b else f"turns {a}-{b}"
    what = []
    summary = args.get("summary")
    if isinstance(summary, str):
        words = len(summary.split())
        what.append(f"summary, {words} word{'' if words == 1 else 's'}")
    if args.get("reasoning"):
        what.append("strip reasoning")
    if args.get("tool_calls"):
        what.append(f"tools {args.get('tool_calls')}")
    return _first_line(f"propose_compaction: {span} ({'; '.join(what) or 'no policy'})")


def _compaction_subject(event: Event) -> str:
    if event.get("summary"):
        return f"compaction: summarize {_turns(event)}{_review_of(event)}"
    parts = []
    if event.get("reasoning"):
        parts.append("reasoning")
    tools = event.get("tool_calls")
    if isinstance(tools, dict):
        if tools.get("policy") == "omit":
            parts.append("omit tools")
        else:
            parts.append("tools")
    what = " + ".join(parts) or "no policy"
    return f"compaction: strip {what} on {_turns(event)}{_review_of(event)}"


def subject(event: Event, tool_names: Mapping[str, str] | None = None) -> str:
    """The readable first line of an event's commit."""
    kind = event.get("type", "?")
    if kind == _REQUEST:
        return "user: " + _first_line(str(event.get("content", "")))
    if kind == _RESPONSE:
        if "message" in event:
            cut = " [interrupted]" if _interrupted(event) else ""
            return f"assistant{cut}: " + _first_line(str(event["message"]))
        if "reasoning" in event:
            return "reasoning: " + _first_line(str(event["reasoning"]))
        return "assistant: (structured data)"
    if kind == _CALL and event.get("name") == PROPOSE_COMPACTION:
        return _proposal_subject(event.get("arguments"))
    if kind == _CALL:
        args = json.dumps(event.get("arguments", {}), ensure_ascii=False, sort_keys=True)
        return _first_line(f"tool call {event.get('name')}: {args}")
    if kind == _RESULT:
        name = (tool_names or {}).get(str(event.get("id")), "call")
        return f"tool {name}: {'error' if event.get('is_error') else 'ok'}"
    if kind == _TURN:
        return "turn: start"
    if kind == _COMPACTION:
        return _compaction_subject(event)
    if kind == _RESET:
        which = event.get("withdraw")
        if which is None:
            return "compaction: reset all"
        return "compaction: withdraw " + ", ".join(str(i + 1) for i in which)
    if kind == _CONFIG:
        keys = ", ".join(sorted(_dotted(event.get("delta", {}))))
        return _first_line("config: " + (keys or "(empty)"))
    if kind == _START:
        return _start_subject(event)
    if kind == _ASK:
        question = event.get("question", {})
        return "inquiry: " + _first_line(str(question.get("text", "")))
    if kind == _ANSWER:
        return "inquiry answer: " + _first_line(json.dumps(event.get("answer")))
    if kind == "source_record":  # a record of another tool's session, kept whole
        record = event.get("record")
        what = record.get("type") if isinstance(record, Mapping) else None
        return _first_line(f"record: {what if isinstance(what, str) else '(untyped)'}")
    return f"{kind}: (kept from a newer writer)"


def _start_subject(event: Event) -> str:
    cid = event.get("conversation_id")
    review = event.get("review")
    if isinstance(review, dict):
        return f"start: review {cid} of {review.get('source_id')}"
    fork = event.get("forked_from")
    if isinstance(fork, dict):
        return f"start: conversation {cid}, forked from {fork.get('conversation_id')}"
    return f"start: conversation {cid}"


def _dotted(table: Mapping[str, Any], prefix: str = "") -> list[str]:
    out: list[str] = []
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            out.extend(_dotted(value, name + "."))
        else:
            out.append(name)
    return out


def _attached(event: Event) -> str:
    """``Attached: file notes.md (1,234 bytes), ...``: what a request carries, by name."""
    found = event.get("attachments")
    named = []
    for item in found if isinstance(found, list) else ():
        if not isinstance(item, dict):
            continue
        source = "".join(c if c.isprintable() else "?" for c in str(item.get("source", "")))
        size = item.get("size")
        if not isinstance(size, int):
            size = len(str(item.get("content", "")).encode("utf-8", "replace"))
        media = item.get("media_type")
        what = f"{media}, {size:,} bytes" if isinstance(media, str) else f"{size:,} bytes"
        named.append(f"{item.get('kind', 'file')} {_first_line(source, 200)} ({what})")
    return "Attached: " + "; ".join(named) if named else ""


def body(event: Event) -> str:
    """The full text of message events (empty for others); a request's attachments
    are named at its end."""
    kind = event.get("type")
    text = ""
    if kind == _REQUEST:
        text = str(event.get("content", ""))
        attached = _attached(event)
        if attached:
            return f"{text.strip()}\n\n{attached}" if text.strip() else attached
    elif kind == _RESPONSE:
        text = str(event.get("message", event.get("reasoning", "")))
    elif kind == _COMPACTION and event.get("summary"):
        text = str(event["summary"].get("summary", ""))
    if kind == _COMPACTION and _review_of(event):
        origin = event["metadata"]["proposal"]
        named = f"Applied from review {origin.get('review')}, proposal {origin.get('commit')}."
        return f"{text.strip()}\n\n{named}" if text.strip() else named
    return text if "\n" in text.strip() or len(text) > SUBJECT_WIDTH else ""


def message(event: Event, tool_names: Mapping[str, str] | None = None) -> str:
    parts = [subject(event, tool_names)]
    text = body(event)
    if text:
        parts.append(text.strip())
    parts.append(f"Jp-Event: {event.get('type')}")
    return "\n\n".join(parts) + "\n"


def author_name(event: Event) -> str:
    meta = event.get("metadata")
    if isinstance(meta, Mapping) and meta.get("written_by") == "jp":
        return "jp"  # e.g. the opening proposal of a review, which jp wrote itself
    return _AUTHORS.get(event.get("type", ""), "jp")


def blob_bytes(event: Event) -> bytes:
    return canonical_json(event)


def objects(
    event: Event,
    parent: str | None,
    names: Mapping[str, str],
    author: Who,
    committer: Who,
    blob: bytes | None = None,
) -> tuple[bytes, bytes, bytes]:
    """The blob, tree and commit of one event, as raw object contents (``blob``: its
    ``event.json`` bytes, when the caller has them already)."""
    if blob is None:
        blob = blob_bytes(event)
    tree = b"100644 event.json\0" + gitobjects.object_id(gitobjects.BLOB, blob)
    tree_id = gitobjects.object_id(gitobjects.TREE, tree).hex()
    parents = [parent] if parent else []
    return (
        blob,
        tree,
        gitobjects.commit_data(tree_id, parents, author, committer, message(event, names)),
    )
