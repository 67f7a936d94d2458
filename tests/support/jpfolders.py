"""Small JP conversation folders (a request and its answer, a title) for the
import tests: ``jp-c<first + n>`` each, as JP names a folder by its start."""

from __future__ import annotations

import json
from pathlib import Path


def small_jp_folders(
    root: Path,
    count: int,
    label: str,
    first: int = 17727391000,
    day: str = "2026-03-01",
    answer: str = "ok",
    activated: bool = True,
) -> list[Path]:
    """``count`` folders under ``root``: request ``q<n>``, answer ``answer``
    (``{n}`` filled in), title ``<label> <n>``, and with ``activated`` the time
    the conversation was last made active."""
    out = []
    for n in range(count):
        folder = root / f"{first + n}-{label}-{n}"
        folder.mkdir(parents=True)
        events = [
            {"timestamp": f"{day} 10:00:01.0", "type": "chat_request", "content": f"q{n}"},
            {
                "timestamp": f"{day} 10:00:02.0",
                "type": "chat_response",
                "message": answer.format(n=n),
            },
        ]
        (folder / "events.json").write_text(json.dumps(events))
        meta: dict[str, str] = {"title": f"{label} {n}"}
        if activated:
            meta["last_activated_at"] = f"{day} 10:00:02.0"
        (folder / "metadata.json").write_text(json.dumps(meta))
        out.append(folder)
    return out
