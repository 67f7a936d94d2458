"""Creating conversations: new, fork, import.  Each prints nothing itself."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from gitstore import Event, EventSource, Kind, Located, Store, activity, errors, files, ids, make
from porcelain import clock
from porcelain.config import Recorded
from porcelain.errors import UserError

if TYPE_CHECKING:
    from porcelain.config import Recorded

JP_WRITTEN = {"written_by": "jp"}
ID_ATTEMPTS = 20


# the last id this process took in each store: an import of thousands takes ids
# faster than deciseconds pass, and each new one would otherwise be looked for
# past every one taken before it (one ref look-up each)
_LAST: dict[str, str] = {}


def fresh_id(store: Store, moment: datetime | None = None) -> str:
    moment = moment or clock.now()
    last = _LAST.get(str(store.local.folder))
    if last is not None:
        moment = max(moment, ids.created_at(last) + timedelta(milliseconds=100))
    cid = ids.new_id(moment, store.refs.exists)
    _LAST[str(store.local.folder)] = cid
    return cid


def publish(
    store: Store,
    events: Callable[[str], EventSource],
    parent: str | None,
    reason: str,
    cid: str | None = None,
    packed: bool = False,
) -> str:
    """Create a conversation under a fresh id (``cid`` first when given and free;
    ``packed``: its events into a pack however few they are, as an import wants)."""
    return publish_at(store, events, parent, reason, cid, packed)[0]


def publish_at(
    store: Store,
    events: Callable[[str], EventSource],
    parent: str | None,
    reason: str,
    cid: str | None = None,
    packed: bool = False,
) -> tuple[str, str]:
    """``publish``, with the tip this process created the conversation at.

    Processes that start conversations in the same decisecond pick the same
    id; the creation is a compare-and-swap against absence, so the loser takes
    the next free id instead of failing (or of writing over the winner).
    """
    if cid:  # the id asked for, if free (the creation looks it up: not once more here)
        try:
            return cid, store.log.create(
                cid, events(cid), parent, f"{reason} {cid}", packed=packed, remake=events
            )
        except errors.ConversationExists:
            pass
    for _ in files.retry_jittered(ID_ATTEMPTS):  # losers spread apart
        chosen = fresh_id(store)
        try:
            return chosen, store.log.create(
                chosen, events(chosen), parent, f"{reason} {chosen}", packed=packed, remake=events
            )
        except errors.ConversationExists:
            continue
    raise errors.ConversationExists(chosen)


def start_event(cid: str, **fields: Any) -> Event:
    event = make.conversation_start(clock.now_text(), cid)
    event.update({k: v for k, v in fields.items() if v is not None})
    return event


def new_conversation(store: Store, title: str | None = None, activate: bool = True) -> str:
    return create_conversation(store, title, activate)[0]


def create_conversation(
    store: Store, title: str | None = None, activate: bool = True
) -> tuple[str, str]:
    """A new conversation: its id and the tip this process created it at."""
    if activate:  # a JP_HEAD that cannot move: refuse before the conversation exists
        store.refs.check_unlocked("JP_HEAD")
    cid, tip = publish_at(store, lambda c: [start_event(c)], None, "jp conversation new")
    if title:
        store.notes.set_meta(cid, {"title": title}, f"jp: title of {cid}")
    if activate:
        try:
            store.refs.set_active(cid)
        except (errors.RefBusy, errors.LockedRef) as exc:  # the conversation exists: say so, not "nothing"
            raise UserError(
                f"created conversation {cid}, but JP_HEAD stayed locked ({exc}), so it "
                "is not the active one",
                f"make it active once the other command is done: `jp conversation use {cid}`",
            ) from None
        activity.record_activation(store, cid)
    return cid, tip


def fork(
    store: Store,
    source: Located,
    *,
    events: Sequence[Event] | None = None,
    extra: Sequence[Event] = (),
    title: str | None = None,
    review: dict[str, Any] | None = None,
    cid: str | None = None,
) -> tuple[str, str]:
    """Branch ``source``: a creation commit on its tip (O(1)).  The new id, and the
    commit this write made last (a writer beside may move the ref on at once).

    With ``events`` (a filtered copy, e.g. `--last N`) a new chain is written
    instead, since it no longer shares the source's history.
    """
    origin = {"conversation_id": source.cid, "commit": source.tip}

    def chain(new: str) -> list[Event]:
        start = start_event(new, forked_from=origin, review=review)
        return [start, *extra] if events is None else [start, *events, *extra]

    reason = f"jp conversation fork {source.cid} ->"
    parent = source.tip if events is None else None
    if cid is not None:  # the caller chose the id (a review): it handles a taken one
        tip = store.log.create(cid, chain(cid), parent, f"{reason} {cid}")
    else:
        cid, tip = publish_at(store, chain, parent, reason)
    meta = store.notes.meta(source.cid)
    carry: dict[str, Any] = {k: meta[k] for k in ("title", "labels") if k in meta}
    if title:
        carry["title"] = title
    if carry:
        store.notes.set_meta(cid, carry, f"jp: metadata of fork {cid}")
    return cid, tip


def config_delta(delta: dict[str, Any]) -> Event:
    """A configuration entry in jp's own keys (``written_by`` is a label, not a credential)."""
    return {**make.config_delta(clock.now_text(), delta), "metadata": dict(JP_WRITTEN)}


def _in_jp_keys(event: Event) -> bool:
    """A ``config_delta`` in jp's keys; JP's own (imported) deltas use JP's keys.

    The label says which vocabulary the delta speaks, nothing more: anyone can
    write it, so whatever a delta holds goes through the trust rule
    (``porcelain/config/trust.py``) before any of it is applied.
    """
    return (
        event.get("type") == Kind.CONFIG_DELTA
        and (event.get("metadata") or {}).get("written_by") == "jp"
    )


def jp_deltas(events: Sequence[Event]) -> list[dict[str, Any]]:
    """The configuration entries in jp's keys, in order."""
    return [e["delta"] for e in events if _in_jp_keys(e)]


def recorded_deltas(
    cid: str,
    events: Sequence[Event],
    commits: Sequence[str] = (),
    accepted: frozenset[str] = frozenset(),
) -> list[Recorded]:
    """``jp_deltas``, each named for ``config show``: conversation, number, commit.

    A delta whose commit is in ``accepted`` (``accepted_commits``: written by
    the user's own command here, or named to the user once) is ``own``."""
    out: list[Recorded] = []
    for i, event in enumerate(events):
        if _in_jp_keys(event):
            commit = commits[i] if i < len(commits) else ""
            named = f", commit {commit[:12]}" if commit else ""
            source = f"conversation {cid} (config_delta #{len(out) + 1}{named})"
            out.append(Recorded(event.get("delta"), source, own=commit in accepted, commit=commit))
    return out
