"""Writing the import summary at the end of a session import
(``porcelain/domain/importsummary.py`` says what it holds and why).

A summary is written only when the next import of the same files, if none of
them changed, would find every one of them unchanged: each file has a
conversation and a position kept for that conversation's tip, read to its end
(nothing after the position, no line being written).  Otherwise the summary
of those roots is removed, so that no older one can answer for them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gitstore import Store, errors
from gitstore import files as store_files
from porcelain.app.sessions import FileOutcome
from porcelain.domain import importsummary
from porcelain.errors import JpError


def config_mark(environ: Mapping[str, str], store: Store) -> dict[str, Any] | None:
    """The configuration files as they are before the import reads them (None: unknown)."""
    try:
        return importsummary.config_mark(environ, store.local.folder)
    except (OSError, JpError):  # unreadable, or no HOME: the command's config load says so
        return None


def keep_summary(
    store: Store,
    tool: str,
    paths: Sequence[Path],
    done: Sequence[FileOutcome],
    mark: dict[str, Any] | None,
) -> None:
    """Replace the summary of these roots (or remove it when it could not answer)."""
    path = importsummary.summary_path(store.local.folder, tool, importsummary.roots_of(tool, paths))
    state = store.refs.state()  # taken first: a ref moved after this changes it on disk
    files = _entries(store, done) if state is not None and mark is not None else None
    try:
        if files is None:
            path.unlink(missing_ok=True)
            return
        value = {
            "version": importsummary.VERSION,
            "tool": tool,
            "refs": state,
            "config": mark,
            "files": files,
        }
        store_files.write_atomic(path, json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    except (OSError, errors.GitStoreError):  # a read-only or full store: the next import reads all
        return


def _entries(store: Store, done: Sequence[FileOutcome]) -> list[dict[str, Any]] | None:
    out = []
    for o in done:
        position, tip = o.position, o.tip
        if o.cid is None or position is None or tip is None or o.size != position.get("size"):
            return None
        where = store.refs.locate(o.cid)
        if where is None or where.tip != tip:
            return None  # moved since the import kept the position: let the next one look
        try:
            st = o.found.path.stat()
        except OSError:
            return None
        out.append(
            {
                "path": str(o.found.path.resolve()),
                "rel": o.found.rel,
                "size": position["size"],
                "sha1": position["sha1"],
                "records": position["records"],
                "mtime_ns": st.st_mtime_ns,
                "ino": st.st_ino,
                "id": o.cid,
                "tip": tip,
            }
        )
    return out
