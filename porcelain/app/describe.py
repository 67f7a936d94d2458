"""What `show` and `ls` say about a conversation, as one dict per conversation.

Counts come from a per-tip summary kept in the store's cache, so listing
10,000 conversations reads no event chains once they have been seen.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from gitstore import (
    Conversation,
    Event,
    Kind,
    Located,
    Store,
    errors,
    ids,
    meta_values,
    parse_time,
    turns,
)
from porcelain.domain.titles import agent_type, session_facts, shown_title

if TYPE_CHECKING:
    from porcelain.domain.token_count import TokenCount
    from porcelain.models.catalog import Catalog

SUMMARY_VERSION = 8  # 7: tool_title and project; 8: imported_from.tool_branch_of


def summarize(events: Sequence[Event]) -> dict[str, Any]:
    """Counts and previews of one event chain (a pure function of the events)."""
    first_request = ""
    last_time = None
    start: dict[str, Any] = {}
    for event in events:
        if event.get("type") == Kind.CHAT_REQUEST and not first_request:
            first_request = " ".join(str(event.get("content", "")).split())[:80]
        if event.get("type") == Kind.CONVERSATION_START:
            start = event
        last_time = event.get("timestamp", last_time)
    facts = start_facts(start)
    told = session_facts(events) if facts["imported_from"] else {}
    return {
        **facts,
        "tool_title": told.get("tool_title"),
        "project": told.get("project"),
        "agents": told.get("agents") or {},
        "v": SUMMARY_VERSION,
        "turns": turns.turn_count(events),
        "events": turns.event_count(events),
        "first_request": first_request,
        "last_event_at": last_time,
        "last_ts": _seconds(last_time),  # what `ls` sorts by, parsed once
    }


def start_facts(start: dict[str, Any]) -> dict[str, Any]:
    """Whose start the chain's latest ``conversation_start`` is, and what it forked."""
    fork = start.get("forked_from")
    parent = fork.get("conversation_id") if isinstance(fork, dict) else None
    point = fork.get("commit") if isinstance(fork, dict) else None
    return {
        "start_id": start.get("conversation_id") if start else None,
        "forked_from": parent if isinstance(parent, str) and ids.is_valid(parent) else None,
        "fork_commit": point if isinstance(point, str) else None,
        **imported_facts(start.get("imported")),
    }


SESSION_TOOLS = ("claude-code", "codex")


def imported_facts(imported: Any) -> dict[str, Any]:
    """``imported_from`` {tool, session, agent, path, branch} of another tool's session
    (else None),
    and the conversation an import of a changed file replaced."""
    if not isinstance(imported, dict) or imported.get("format") not in SESSION_TOOLS:
        return {"imported_from": None, "replaces": None}
    shown = {
        key: value if isinstance(value := imported.get(key), str) else None
        for key in ("session", "agent", "path")
    }
    replaces = imported.get("replaces")
    replaces = replaces if isinstance(replaces, str) else None
    beside = replaces if imported.get("because") == "continues" else None
    return {
        "imported_from": {
            "tool": imported["format"],
            **shown,
            "branch": _branch(imported),
            "tool_branch_of": beside,  # the tool went on from a point of this one, before jp's turns
        },
        "replaces": replaces,
    }


def _branch(imported: dict[str, Any]) -> dict[str, Any] | None:
    """A rewind branch's ``{of: the session's conversation, record: its first record's
    1-based place in the file}`` (None for a session's own stream)."""
    rewind = imported.get("rewind")
    if not isinstance(rewind, dict):
        return None
    of, record = rewind.get("of"), rewind.get("record")
    if not isinstance(of, str) or not ids.is_valid(of):
        return None
    if not isinstance(record, int) or isinstance(record, bool) or record < 1:
        return None
    return {"of": of, "record": record}


def summaries(store: Store, located: Sequence[Located]) -> dict[str, dict[str, Any]]:
    tips = sorted({loc.tip for loc in located})
    found = store.local.summaries(tips)
    missing = [t for t in tips if t not in found or found[t].get("v") != SUMMARY_VERSION]
    if len(missing) > 1:
        store.log.prefetch(missing)  # e.g. after a pull: every chain cached in one pass
    fresh: dict[str, dict[str, Any]] = {}
    broken: dict[str, dict[str, Any]] = {}
    for tip in missing:
        try:
            events, _ = store.log.read_chain(tip)
        except errors.CorruptEvent as exc:  # one damaged chain must not hide the others
            broken[tip] = {**summarize([]), "first_request": "", "unreadable": exc.reason}
            continue
        fresh[tip] = summarize(events)
    # an unreadable tip stays unreadable (objects never change), unless one is missing
    lasting = {t: s for t, s in broken.items() if "missing" not in s["unreadable"]}
    store.local.keep_summaries({**fresh, **lasting})
    found.update(fresh)
    found.update(broken)
    return found


def _from_notes(store: Store, ref: str, name: str, read: Callable[[], dict[str, Any]]) -> Any:
    """``read()``, cached under the notes ref's commit (notes are read whole otherwise)."""
    tip = store.refs.target(ref)
    if tip is None:
        return {}
    found = store.local.value(name, tip)
    if isinstance(found, dict):
        return found
    value = read()
    store.local.keep_value(name, tip, value)
    return value


def all_meta(store: Store) -> dict[str, dict[str, Any]]:
    """Every conversation's metadata, by anchor (cached under the notes commit)."""
    own = store.notes.refs
    return _from_notes(  # type: ignore[no-any-return]
        store,
        own.meta,
        "ls-meta-notes/1",
        lambda: {a: meta_values(t) for a, t in store.notes.all(own.meta).items()},
    )


def titles(store: Store) -> list[tuple[str, str]]:
    """(id, title) of every conversation, live ones first, newest first."""
    metas = all_meta(store)
    located = sorted(store.refs.list(archived=None), key=lambda loc: (loc.archived, loc.cid))
    live = [loc for loc in located if not loc.archived][::-1]
    archived = [loc for loc in located if loc.archived][::-1]
    out = []
    for loc in live + archived:
        title = str(metas.get(store.notes.anchor(loc.cid), {}).get("title") or "")
        out.append((loc.cid, ("[archived] " if loc.archived else "") + title))
    return out


def listing(store: Store, located: Sequence[Located], active: str | None) -> list[dict[str, Any]]:
    """One row per conversation for `ls`, oldest activity first, active last."""
    sums = summaries(store, located)
    own = store.notes.refs
    metas = all_meta(store)
    sources = _from_notes(store, own.source, "ls-source-notes/1", store.notes.sources)
    names = _identities(store, located)
    rows = []
    when: dict[str, float] = {}
    for loc in located:
        anchor, created = names[loc.cid]
        meta = metas.get(anchor, {})
        s = sums[loc.tip]
        when[loc.cid] = s["last_ts"]
        rows.append(
            {
                "id": loc.cid,
                "title": meta.get("title") or None,
                "turns": s["turns"],
                "events": s["events"],
                "archived": loc.archived,
                "active": loc.cid == active,
                "pinned": bool(meta.get("pinned_at")),
                "source_id": sources.get(anchor),
                "created_at": created,
                "last_event_at": s["last_event_at"],
                "preview": s["first_request"],
                "tool_title": s.get("tool_title"),
                "project": s.get("project"),
                "unreadable": s.get("unreadable"),
                **lineage(loc.cid, s, meta),
                "imported_from": s.get("imported_from") if s.get("start_id") == loc.cid else None,
            }
        )
    rows.sort(key=lambda r: (r["active"], r["pinned"], when[r["id"]]))
    name_agents(store, rows)
    return rows


def name_agents(store: Store, rows: Sequence[dict[str, Any]]) -> None:
    """Add ``agent_type`` to each subagent stream's ``imported_from``: the type its
    session's call gave it (read from the session's summary), else None."""
    agents = [r for r in rows if (r.get("imported_from") or {}).get("agent")]
    parents = {r["forked_from"] for r in agents if r.get("forked_from")}
    located = [loc for loc in map(store.refs.locate, sorted(parents)) if loc is not None]
    sums = summaries(store, located) if located else {}
    by_id = {loc.cid: sums[loc.tip].get("agents") or {} for loc in located}
    for row in agents:
        origin = row["imported_from"]
        origin["agent_type"] = agent_type(
            origin["agent"], by_id.get(row.get("forked_from") or "", {})
        )


def _named_agent(store: Store, facts: dict[str, Any], cid: str) -> dict[str, Any] | None:
    """``imported_from`` for `show`, a subagent stream's with its ``agent_type``."""
    origin = facts.get("imported_from") if facts.get("start_id") == cid else None
    if origin and origin.get("agent"):
        row = {"imported_from": dict(origin), "forked_from": facts.get("forked_from")}
        name_agents(store, [row])
        return row["imported_from"]
    return origin


def lineage(cid: str, facts: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    """``forked_from`` (the chain's own start names a parent), ``diverged_from``
    (a pull moved this copy to a new id) and the labels, for a row."""
    own = facts.get("start_id") == cid
    diverged = meta.get("diverged_from")
    return {
        "forked_from": facts.get("forked_from") if own else None,
        "diverged_from": diverged if isinstance(diverged, str) and ids.is_valid(diverged) else None,
        "labels": meta.get("labels") or {},
    }


def origins(cid: str, facts: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    """For `show`: the fork parent and commit, and where a divergence came from."""
    row = lineage(cid, facts, meta)
    point = facts.get("fork_commit")
    divergence = None
    if row["diverged_from"]:
        divergence = {
            key: _text(meta.get(name))
            for key, name in (
                ("remote", "diverged_remote"),
                ("commit", "diverged_at_commit"),
                ("at", "diverged_at"),
                ("reason", "diverge_reason"),
            )
        }
    return {
        "forked_from": row["forked_from"],
        "fork_commit": point if row["forked_from"] and _is_commit(point) else None,
        "diverged_from": row["diverged_from"],
        "divergence": divergence,
    }


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _is_commit(value: Any) -> bool:
    return (
        isinstance(value, str)
        and len(value) in (40, 64)
        and all(c in "0123456789abcdef" for c in value)
    )


FEW_IDS = 200  # ids whose anchor and time are made afresh rather than read from the cache


def _identities(store: Store, located: Sequence[Located]) -> dict[str, list[str]]:
    """Each id's anchor and creation time (pure functions of the id, kept in the cache)."""
    if len(located) <= FEW_IDS:  # made for a few moved rows: cheaper than reading them all
        return {loc.cid: [store.notes.anchor(loc.cid), _created(loc.cid)] for loc in located}
    found = store.local.value("ls-ids/1", "1")
    known: dict[str, list[str]] = found if isinstance(found, dict) else {}
    missing = [loc.cid for loc in located if loc.cid not in known]
    for cid in missing:
        known[cid] = [store.notes.anchor(cid), _created(cid)]
    if missing:
        store.local.keep_value("ls-ids/1", "1", known)
    return known


def _created(cid: str) -> str:
    return ids.created_at(cid).isoformat().replace("+00:00", "Z")


def _seconds(stamp: Any) -> float:
    try:
        return parse_time(stamp).timestamp() if isinstance(stamp, str) and stamp else 0.0
    except ValueError:
        return 0.0


def details(store: Store, conv: Conversation, active: str | None) -> dict[str, Any]:
    """Everything `show` prints about one conversation."""
    meta = store.notes.meta(conv.cid)
    source = store.notes.source_of(conv.cid)
    s = summarize(conv.events)
    info: dict[str, Any] = {
        "id": conv.cid,
        "title": meta.get("title") or None,
        "shown_title": shown_title(meta.get("title"), s["tool_title"], s["first_request"]),
        "project": s["project"],
        "turns": s["turns"],
        "events": s["events"],
        "archived": conv.archived,
        "active": conv.cid == active,
        "pinned": bool(meta.get("pinned_at")),
        "labels": meta.get("labels") or {},
        "source_id": source,
        "created_at": _created(conv.cid),
        "last_event_at": s["last_event_at"],
        "tip": conv.tip,
        "compactions": _compactions(conv),
        **origins(conv.cid, s, meta),
        "imported_from": _named_agent(store, s, conv.cid),
        "tokens": token_count(store, conv, source).to_json(),
    }
    if source is not None:
        # lazy: `show` of a plain conversation loads no review module
        from porcelain.app.review.revisions import latest_json

        origin = store.refs.locate(source)
        info["proposal"] = latest_json(
            conv.events, store.log.load(source).events if origin is not None else None
        )
    return info


TOKENS_CACHE = "tokens/1/"  # + id: the provider's count at a tip (``count_for_show``)


def model_view(conv: Conversation, source: str | None) -> list[Event]:
    """What the model reads of the conversation.  A plain one is its own events
    (the estimate reads only provider-visible text), so the view modules load
    only for one with compactions or a review."""
    if source is None and not any(e.get("type") == Kind.COMPACTION for e in conv.events):
        return conv.events
    # lazy: the view modules load only for a conversation with compactions or a review
    from porcelain.domain.view import model_events

    return model_events(conv.events)


def token_count(store: Store, conv: Conversation, source: str | None) -> TokenCount:
    """The count a provider made at this tip (kept in the cache), else the estimate."""
    # lazy: only `show` counts tokens, and it loads no model module for it
    from porcelain.domain.token_count import TokenCount, estimate

    cached = store.local.value(TOKENS_CACHE + conv.cid, conv.tip)
    found = TokenCount.from_json(cached)
    return found if found is not None else estimate(model_view(conv, source))


def count_for_show(
    store: Store, conv: Conversation, source: str | None, model_id: str, catalog: Catalog
) -> TokenCount:
    """Ask the provider to count the conversation now; kept for this tip when it did."""
    # lazy: only `show --tokens` loads the provider count
    from porcelain.models.tokens import count

    found = count(model_id, model_view(conv, source), catalog=catalog)
    if not found.estimated:
        store.local.keep_value(TOKENS_CACHE + conv.cid, conv.tip, found.to_json())
    return found


def _compactions(conv: Conversation) -> list[dict[str, Any]]:
    """The standing compactions, as `show` prints them (none without a compaction event).

    The compaction and review modules are loaded only for a conversation that has
    compactions: most have none, and `show` is a command that must start fast.
    """
    if not any(e.get("type") == Kind.COMPACTION for e in conv.events):
        return []
    # lazy: `show` of a plain conversation loads no compaction module
    from porcelain.domain.compaction.overlays import overlay_json, standing_overlays

    return [overlay_json(o) for o in standing_overlays(_own_view(conv))]


def _own_view(conv: Conversation) -> list[Event]:
    """The events whose compactions apply to this conversation (a review drops the source's)."""
    # lazy: `show` of a plain conversation loads no review module
    from porcelain.domain.review.markers import review_view

    return review_view(conv.events)
