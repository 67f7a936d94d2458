"""What `jp mcp serve`'s tools answer, from one opened store (docs/mcp.md).

Each answer is read-only: the store's refs, notes and events, through the
cache as `ls` and `grep` read them (the cache is derived data and may be
brought up to date; no ref, note, object or operation is written).  Every
string that came from a conversation goes through ``clean`` (the secret
scanner's mask where it is there, then control characters made visible)
before it is cut, so a cut never leaves half a secret; the whole answer is
then kept within ``max_bytes``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from gitstore import Event, Located, Store, errors, parse_time
from gitstore import turns as store_turns
from porcelain.app import describe, listed
from porcelain.app.search import candidates, compile_pattern, indexed, searched
from porcelain.app.targets import resolve
from porcelain.domain.compaction.projection import Kept, project
from porcelain.domain.escaping import escape_untrusted
from porcelain.domain.grepmatch import SCOPES, scoped_lines
from porcelain.domain.mcptools import (
    DEFAULT_MAX_BYTES,
    LEAST_BYTES,
    LONGEST_FIELD,
    MOST_BYTES,
    Filters,
    ListRequest,
    ReadRequest,
    SearchRequest,
    ToolInputError,
    bounded,
    clip,
    excerpt,
    json_bounded,
    turn_range,
)
from porcelain.domain.recall import RECALLED_KINDS, compacted_turns, event_text, labels
from porcelain.domain.secretevents import AllowList, redact_text
from porcelain.domain.stream import Stream

Mask = Callable[[str], str]  # text with each secret the scanner finds replaced
HITS_SHOWN = 3  # excerpts per conversation; the count says how many there are


@dataclass(frozen=True)
class Answering:
    """What every answer needs besides the store and the request."""

    mask: Mask
    max_bytes: int
    rank: listed.Rank  # where `ls` sorts a row (its kept rows are ordered by it)

    def clean(self, text: str) -> str:
        """Untrusted text as it may leave: masked, then its control characters visible."""
        return escape_untrusted(self.mask(text))

    def field(self, text: str, longest: int = LONGEST_FIELD) -> str:
        """One line of a row: masked, escaped, then cut (a cut never halves a secret)."""
        return clip(escape_untrusted(self.mask(text), one_line=True), longest)


def answering(max_bytes: int | None, rank: listed.Rank, allow: AllowList | None) -> Answering:
    """How answers are made: ``max_bytes`` of the user's own configuration (None: the
    default), kept between the least and the most an answer may be; the secret
    scanner's mask with the user's allow-list (``[secrets.allow]``: kinds and hashes;
    a conversation allowed whole is masked here all the same)."""
    limit = DEFAULT_MAX_BYTES if max_bytes is None else max(LEAST_BYTES, min(max_bytes, MOST_BYTES))
    return Answering(lambda text: redact_text(text, allow), limit, rank)


def _when(stamp: Any) -> datetime | None:
    try:
        return parse_time(stamp) if isinstance(stamp, str) and stamp else None
    except ValueError:
        return None


def _facts(loc: Located, summary: dict[str, Any]) -> tuple[str, str | None]:
    """(tool, project) of a conversation from its summary: jp for its own (a fork
    of an imported session included), the folder an imported session ran in."""
    imported = summary.get("imported_from") if summary.get("start_id") == loc.cid else None
    tool = imported.get("tool") if isinstance(imported, dict) else None
    project = summary.get("project")
    return (tool if isinstance(tool, str) else "jp"), (
        project if isinstance(project, str) else None
    )


def _row(loc: Located, summary: dict[str, Any], title: Any, how: Answering) -> dict[str, Any]:
    tool, project = _facts(loc, summary)
    row: dict[str, Any] = {
        "id": loc.cid,
        "title": how.field(str(title)) if title else None,
        "tool": tool,
        "project": how.field(project) if project else None,
        "turns": summary.get("turns", 0),
        "last_activity": summary.get("last_event_at"),
    }
    if loc.archived:
        row["archived"] = True
    return row


# -- search ------------------------------------------------------------------------


def search(store: Store, request: SearchRequest, how: Answering) -> str:
    try:
        matcher = compile_pattern(request.query, request.regex)
    except re.error as exc:
        raise ToolInputError(f"query is not a valid regular expression: {exc}") from None
    found = _search_candidates(store, request, matcher, how.rank)
    sums = describe.summaries(store, found)
    kept = [loc for loc in found if request.filters.keeps(*_facts(loc, sums[loc.tip]))]
    kept.sort(key=lambda loc: loc.cid)  # the oldest first: a hit forks share is the source's
    seen: set[tuple[str, str, int]] = set()
    groups: list[tuple[int, float, dict[str, Any]]] = []
    unreadable: list[str] = []
    metas = describe.all_meta(store) if kept else {}
    for loc in kept:
        try:
            events, commits = store.log.read_chain(loc.tip)
        except errors.CorruptEvent:
            unreadable.append(loc.cid)
            continue
        hits = list(_hits(events, commits, matcher, (request.filters, how.mask), seen))
        if not hits:
            continue
        meta = metas.get(store.notes.anchor(loc.cid), {})
        row = _row(loc, sums[loc.tip], meta.get("title"), how)
        row["hits"] = len(hits)
        row["matches"] = [_shown(hit, matcher, how) for hit in hits[:HITS_SHOWN]]
        groups.append((len(hits), float(sums[loc.tip].get("last_ts") or 0.0), row))
    groups.sort(key=lambda g: (-g[0], -g[1]))
    rows = [row for _, _, row in groups[: request.limit]]
    head: dict[str, Any] = {
        "query": how.field(request.query),
        "conversations_with_hits": len(groups),
        "shown": len(rows),
    }
    if unreadable:
        head["unreadable"] = unreadable[:20]
    return json_bounded(head, "results", rows, how.max_bytes)


def _search_candidates(
    store: Store, request: SearchRequest, matcher: re.Pattern[str], rank: listed.Rank
) -> list[Located]:
    """The conversations the index says may match (as `jp conversation grep` asks)."""
    if request.conversation:
        return candidates(store, [resolve(store, request.conversation)], matcher)
    archived = request.filters.archived
    located = indexed(store, matcher, archived, False, rank)
    if located is None:
        located = candidates(store, searched(store, archived, False), matcher)
    if len(located) > 1:
        store.log.prefetch([loc.tip for loc in located])
    return located


@dataclass(frozen=True)
class _Hit:
    turn: int  # 1-based
    scope: str
    line: str
    at: str | None


def _hits(
    events: list[Event],
    commits: list[str],
    matcher: re.Pattern[str],
    narrowing: tuple[Filters, Mask],
    seen: set[tuple[str, str, int]],
) -> Iterator[_Hit]:
    """Each line of the chain that matches once masked (a query never finds what the
    mask hides, so no hit tells a secret's text) and was not yet reported for another
    conversation (forks share their history), within the filters' dates."""
    filters, mask = narrowing
    scopes = tuple(SCOPES)
    for event, turn, commit in zip(events, store_turns.turn_indices(events), commits, strict=True):
        for scope, lines in scoped_lines(event, scopes):
            for n, line in enumerate(lines):
                if not matcher.search(line) or (commit, scope, n) in seen:
                    continue
                seen.add((commit, scope, n))
                visible = mask(line)
                stamp = event.get("timestamp")
                if matcher.search(visible) and filters.within(_when(stamp)):
                    at = stamp if isinstance(stamp, str) else None
                    yield _Hit(turn + 1, scope, visible, at)


def _shown(hit: _Hit, matcher: re.Pattern[str], how: Answering) -> dict[str, Any]:
    line = escape_untrusted(hit.line, one_line=True)  # masked already, then escaped
    return {"turn": hit.turn, "where": hit.scope, "at": hit.at, "excerpt": excerpt(line, matcher)}


# -- read ----------------------------------------------------------------------------


def read(store: Store, request: ReadRequest, how: Answering) -> str:
    loc = resolve(store, request.conversation)
    events, _ = store.log.read_chain(loc.tip)
    stream = Stream(events)
    turns = turn_range(request, stream.count)
    title = store.notes.meta(loc.cid).get("title")
    named = f' "{how.field(str(title))}"' if title else ""
    shown = f"turns {turns.start + 1}-{turns.stop}" if len(turns) > 1 else f"turn {turns.start + 1}"
    head = f"Conversation {loc.cid}{named}: {shown} of {stream.count}, view={request.view}."
    if request.view == "model":
        body = _model_blocks(stream, turns)
    else:
        body = _raw_blocks(stream, turns)
        compacted = [t for t in compacted_turns(stream) if t in turns]
        if compacted:
            head += f" A compaction summarizes {labels(compacted)} for the model (view=model)."
    text = head + "\n" + "".join(how.clean(block) for block in body)
    if not body:
        text += "\n(no message in these turns)\n"
    if turns.stop < stream.count:
        text += f"\n[{stream.count - turns.stop} later turn(s): from_turn={turns.stop + 1}]\n"
    return bounded(text, how.max_bytes)


def _raw_blocks(stream: Stream, turns: range) -> list[str]:
    out: list[str] = []
    last = None
    for event, turn in zip(stream.events, stream.indices, strict=True):
        if turn not in turns or event.get("type") not in RECALLED_KINDS:
            continue
        out.append((f"\n[turn {turn + 1}]\n" if turn != last else "") + event_text(event) + "\n")
        last = turn
    return out


def _model_blocks(stream: Stream, turns: range) -> list[str]:
    """The projected turns that show any of ``turns``: kept turns as themselves, a
    summary block once, under the raw turns it stands for."""
    projection = project(stream)
    out: list[str] = []
    last = None
    for event, turn in zip(projection.events, store_turns.turn_indices(projection.events), strict=True):
        if event.get("type") not in RECALLED_KINDS or turn >= len(projection.origins):
            continue
        origin = projection.origins[turn]
        first, end = (
            (origin.index, origin.index)
            if isinstance(origin, Kept)
            else (origin.from_turn, origin.to_turn)
        )
        if end < turns.start or first >= turns.stop:
            continue
        heading = f"turn {first + 1}" if first == end else f"summary of turns {first + 1}-{end + 1}"
        out.append((f"\n[{heading}]\n" if turn != last else "") + event_text(event) + "\n")
        last = turn
    return out


# -- list ------------------------------------------------------------------------------


def listing(store: Store, request: ListRequest, how: Answering) -> str:
    filters = request.filters
    plain = filters == Filters(archived=filters.archived)
    which = (False, True) if filters.archived else (False,)
    hide = listed.AGENT | listed.REVIEW  # as `ls` shows them: no subagent stream, no review
    newest = (
        listed.newest(store, how.rank, (which, hide), (request.limit, 0), None) if plain else None
    )
    if newest is not None:
        found = [store.refs.locate(row["id"]) for row in newest[0]]
        located = [loc for loc in found if loc is not None]
        total = newest[1]
    else:
        located, total = _filtered(store, filters, hide)
        located = located[: request.limit]
    sums = describe.summaries(store, located)
    rows = {row["id"]: row for row in describe.listing(store, located, None)}
    out = []
    for loc in located:
        row = _row(loc, sums[loc.tip], rows[loc.cid].get("title"), how)
        row["first_request"] = how.field(str(rows[loc.cid].get("preview") or ""))
        out.append(row)
    return json_bounded({"conversations": total, "shown": len(out)}, "rows", out, how.max_bytes)


def _filtered(store: Store, filters: Filters, hide: int) -> tuple[list[Located], int]:
    """Every conversation the filters keep, the newest activity first, and their count."""
    located = store.refs.list(archived=None if filters.archived else False)
    sums = describe.summaries(store, located)
    sources = store.notes.sources()
    kept: list[tuple[float, Located]] = []
    for loc in located:
        summary = sums[loc.tip]
        if not filters.keeps(*_facts(loc, summary)):
            continue
        if not filters.within(_when(summary.get("last_event_at"))):
            continue
        if hide and _hidden(store, loc, summary, sources):
            continue
        kept.append((float(summary.get("last_ts") or 0.0), loc))
    kept.sort(key=lambda pair: (-pair[0], pair[1].cid))
    return [loc for _, loc in kept], len(kept)


def _hidden(store: Store, loc: Located, summary: dict[str, Any], sources: Container[str]) -> bool:
    """A subagent's stream, a rewind branch or a compaction review (`ls` hides them)."""
    imported = summary.get("imported_from") if summary.get("start_id") == loc.cid else None
    if isinstance(imported, dict) and (imported.get("agent") or imported.get("branch")):
        return True
    return loc.archived and store.notes.anchor(loc.cid) in sources
