"""Metadata for a conversation that a pull moved to a new id (local to this store),
and the anchors of those it creates."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import partial

import pygit2

from gitstore import ids
from gitstore.clock import seconds
from gitstore.git import pruned
from gitstore.store import notes, packwrite
from gitstore.sync.here import Here
from gitstore.sync.plan import PullStep

PACKED_AT = 100  # anchors written at once from which they go into one pack


@contextmanager
def anchors(here: Here, cids: list[str]) -> Iterator[None]:
    """The anchor blob of each of ``cids`` (their notes hang on it) written before
    their refs are created: a first pull of thousands writes one pack of them, not
    a loose file each."""
    if len(cids) < PACKED_AT:
        for cid in cids:
            pruned.write(partial(here.place.repo.create_blob, ids.anchor_bytes(cid)))
        yield
        return
    packwrite.write_blobs(here.place.gitdir, (ids.anchor_bytes(c) for c in cids))
    try:
        yield
    finally:
        packwrite.release()  # nothing will name them: they need no shelter past the moves


def naming_origins(texts: dict[str, str]) -> dict[str, str]:
    """The metadata notes of ``texts`` that may say what their conversation continues:
    those that name the key, as a JSON string or through an escape (the others, nearly
    every note of a first pull, need not be looked at again)."""
    return {k: t for k, t in texts.items() if '"diverged_from"' in t or "\\" in t}


def continues(here: Here, texts: dict[str, str], cid: str) -> str:
    """The ``diverged_from`` of ``cid``'s metadata note among ``texts`` (annotated hex
    id -> text, from ``naming_origins`` of every note the store holds), "" when it
    has none."""
    text = texts.get(here.notes.anchor(cid)) if texts else None
    if not text:
        return ""
    value = notes.meta_values(text).get("diverged_from")
    return value if isinstance(value, str) else ""


def copy_meta(
    here: Here, signature: pygit2.Signature, cid: str, new_id: str, step: PullStep, remote: str
) -> None:
    """``new_id`` gets ``cid``'s metadata (title, labels...) and its origin:
    ``diverged_from``, ``diverge_reason``, ``diverged_at_commit``, ``diverged_remote``
    and ``diverged_at``; a review's
    source note is copied too."""
    anchor = here.notes.anchor(new_id)
    pruned.write(partial(here.place.repo.create_blob, ids.anchor_bytes(new_id)))
    stamp = int(seconds(here.clock) * 1000)
    extra = {
        "diverged_from": cid,
        "diverge_reason": step.action.value,
        "diverged_at_commit": step.base,
        "diverged_remote": remote,
        "diverged_at": datetime.fromtimestamp(stamp / 1000, UTC).isoformat().replace("+00:00", "Z"),
    }
    lines = "".join(
        notes.meta_line(k, v, stamp, here.notes.machine) + "\n" for k, v in extra.items()
    )
    meta = here.notes.note(here.notes.refs.meta, cid) or ""
    if meta and not meta.endswith("\n"):
        meta += "\n"
    source = here.notes.note(here.notes.refs.source, cid)

    def change_meta(_: notes.NoteTexts) -> dict[str, str | None]:
        return {anchor: notes.compact_meta(meta + lines)}

    message = f"jp pull {remote}: metadata of {new_id}"
    own = here.notes.refs
    record = here.ops.moving
    notes.update(here.place.repo, own.meta, change_meta, signature, message, record)
    if source:
        take = {anchor: source}
        notes.update(here.place.repo, own.source, lambda _: take, signature, message, record)
