"""`jp conversation import FOLDER...` of JP folders: read and check them all, then
write them in one batch.  Free of click, so ``porcelain.early`` runs it for a plain
command line without loading the command line's machinery (issue 45)."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitstore import activity
from porcelain.commands.context import App
from porcelain.errors import UserError

if TYPE_CHECKING:
    from porcelain.jpformat import JpFolder
    from porcelain.render.progress import ReadProgress


def import_jp(app: App, folders: tuple[Path, ...], activate: bool) -> None:
    for folder in folders:
        if not folder.is_dir():
            raise UserError(
                f"{folder}: not a folder",
                "give a JP conversation folder (one that holds events.json and metadata.json)",
            )
    # lazy: a session import (the hooks' frequent call) never reads JP folders
    from porcelain.jpformat import scan_conversation
    from porcelain.render.progress import ReadProgress

    limits = app.limits()
    progress = ReadProgress(app.output, "import")
    try:
        # every folder read and checked first; its events are then read again as written
        read = [scan_conversation(folder, limits, progress) for folder in folders]
        if app.config(warn=False).get("redaction.on_import") is True:  # docs/security.md
            from porcelain.app.redaction import redacted_folder  # lazy: the scanner, when asked

            read = [redacted_folder(conv) for conv in read]
        _write_jp(app, folders, read, activate, progress)
    finally:
        progress.clear()


def _write_jp(
    app: App,
    folders: tuple[Path, ...],
    read: list[JpFolder],
    activate: bool,
    progress: ReadProgress,
) -> None:
    # lazy: only an import reads the re-import records (the reader is loaded by import_jp)
    from porcelain.app.reimport import already_there, outcome
    from porcelain.app.transfer import store_imported, unfinished_metas
    from porcelain.jpformat import EventFile

    store = app.store()
    created: list[dict[str, Any]] = []
    kept_ids: list[str | None] = []
    titles: dict[str, dict[str, Any]] = {}
    # one set of packs and one ref update for the whole command, not one per folder
    with store.log.batch() as batch:
        for folder, conv in zip(folders, read, strict=True):
            if conv.jp_id and batch.pending_ids(conv.jp_id):
                batch.flush()  # the same folder twice: the second compares with the first
            streamed = conv.events if isinstance(conv.events, EventFile) else None
            if streamed:  # the progress line counts each pass over a file read again
                streamed.on_event = progress.counting("compared")
            kept = already_there(store, conv.jp_id, conv.events)
            if streamed:
                streamed.on_event = progress.counting("wrote")
            cid = kept or store_imported(store, conv, titles)
            kept_ids.append(kept)
            progress.clear()
            created.append({"id": cid, "folder": str(folder), "events": len(conv.events)})
        batch.flush()
    for row, conv, kept in zip(created, read, kept_ids, strict=True):
        # an id another writer took as the batch was written: created under a fresh one
        row["id"] = batch.renamed.get(row["id"], row["id"])
        row.update(outcome(conv.jp_id, row["id"], kept))
    titles = {batch.renamed.get(c, c): meta for c, meta in titles.items()}
    titles.update(unfinished_metas(store, {k: c for c, k in zip(read, kept_ids, strict=True) if k}))
    if titles:
        made = {row["id"] for row, kept in zip(created, kept_ids, strict=True) if not kept}
        store.notes.set_metas(titles, "jp: metadata of imported conversations", made)
    if any(not kept for kept in kept_ids):
        store.local.maintain()  # git gc --auto in the background, when past git's limits
    app.output.text(partial(_imported, app, created))
    if activate and created:
        store.refs.set_active(str(created[-1]["id"]))
        activity.record_activation(store, str(created[-1]["id"]))
    app.output.emit(created)


def _imported(app: App, created: list[dict[str, Any]]) -> None:
    """stdout: the ids, one a line (written together, not a write each); what happened
    to one not imported as it was on stderr, after its line."""
    lines: list[str] = []
    for done in created:
        cid = done["id"]
        lines.append(cid)
        if done["action"] == "imported":
            continue
        app.output.lines(lines)
        lines = []
        if done["action"] == "unchanged":
            app.output.note(f"{cid}: already in the store (imported before); nothing written")
        else:
            app.output.note(f"{cid}: a new id, since {done['jp_id']} is another conversation here")
    app.output.lines(lines)
