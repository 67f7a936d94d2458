"""A synthetic JP conversation folder of any size, for measuring `jp conversation import`.

    python -m bench.jpfolder DIR COUNT [--text BYTES]

writes ``DIR/<digits>-synthetic/events.json`` (COUNT entries in JP's own
layout: two-space indent, JP's time stamps) and ``metadata.json``, one entry at
a time, so the generator's own memory does not grow with COUNT.  Turns are a
request and an answer of about ``--text`` bytes each (100 by default), so a
million entries stay under the store's 256 MiB file limit; text comes from
``bench.synth``'s seeded vocabulary, so runs are repeatable.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

from bench.synth import START, Writer

FOLDER = "17000000001-synthetic"


def _jp_time(moment_text: str) -> str:
    """RFC 3339 (``...T..Z``) as JP writes it (``YYYY-MM-DD HH:MM:SS.ffffff``)."""
    return moment_text.replace("T", " ").removesuffix("Z")


def entries(count: int, text: int = 100, seed: int = 1) -> Iterator[dict[str, Any]]:
    """``count`` JP entries: turns of a request and its answer."""
    writer = Writer(seed, START - timedelta(days=365))
    made = 0
    while made < count:
        turn = [
            {"timestamp": writer.stamp(30), "type": "chat_request", "content": writer.text(text)},
            {"timestamp": writer.stamp(), "type": "chat_response", "message": writer.text(text)},
        ]
        for entry in turn[: count - made]:
            entry["timestamp"] = _jp_time(entry["timestamp"])
            yield entry
            made += 1


def write_folder(root: Path, count: int, text: int = 100) -> Path:
    """Write the folder under ``root``; returns its path."""
    folder = root / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "events.json", "w", encoding="utf-8") as out:
        out.write("[")
        for n, entry in enumerate(entries(count, text)):
            body = json.dumps(entry, indent=2, ensure_ascii=False).replace("\n", "\n  ")
            out.write(("\n  " if n == 0 else ",\n  ") + body)
        out.write("\n]\n" if count else "]\n")
    meta = {"title": f"synthetic, {count:,} events", "last_activated_at": "2025-01-06 09:00:00"}
    (folder / "metadata.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path, help="where the folder is written")
    parser.add_argument("count", type=int, help="how many events.json entries")
    parser.add_argument("--text", type=int, default=100, help="bytes of text per entry")
    args = parser.parse_args()
    print(write_folder(args.root, args.count, args.text))


if __name__ == "__main__":
    main()
