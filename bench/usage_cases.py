"""`jp usage` at scale: 1,000 and 10,000 conversations whose answers record usage.

Each store holds conversations of 5 turns (a request and an answer, the answer
with ``metadata.usage`` and its model, as `jp q` records them), written with
`git fast-import` (the commits jp writes, ``events.commits``), one ref
per conversation, refs packed.  The first `jp usage` reads every chain and keeps
one row per tip in the cache (timed once: "first"); the rows measured after it
are what every later run costs: one query for the kept rows, no event read.
The baseline is `jp conversation ls --limit 50` on the same store, a command
whose cost does not grow with the store, and `jp usage` at 1,000 for the ratio.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from bench import build
from bench.common import Profile, Results, Row, clean_env, interleaved, jp_command, run_process
from bench.common import verdict as met
from bench.synth import Writer
from gitstore.events import commits, parse_time

TURNS = 5
SIZES = {"full": (1_000, 10_000), "quick": (1_000, 10_000), "smoke": (40, 120)}
MODELS = ("anthropic/claude-sonnet-4-5", "anthropic/claude-haiku-4-5", "openai/gpt-5")


def _conversation(writer: Writer, cid: str, n: int) -> list[dict[str, object]]:
    events: list[dict[str, object]] = [writer.start(cid)]
    for turn in range(TURNS):
        usage = {"input_tokens": 1000 + 37 * turn + n % 500, "output_tokens": 50 + n % 90}
        events += [
            {"type": "turn_start", "timestamp": writer.stamp()},
            {"type": "chat_request", "timestamp": writer.stamp(), "content": writer.text(120)},
            {
                "type": "chat_response",
                "timestamp": writer.stamp(600),
                "message": writer.text(200),
                "metadata": {"usage": usage, "model": MODELS[(n + turn) % len(MODELS)]},
            },
        ]
    return events


def conversations(count: int) -> Iterator[tuple[str, list[dict[str, object]]]]:
    writer = Writer(13)
    for n in range(count):
        cid = build.cid_for(n)
        yield cid, _conversation(writer, cid, n)


def build_store(root: Path, count: int) -> Path:
    store = build.new_store(root / f"usage-{count}.git")
    path = store.gitdir
    store.close()

    def line(who: str, event: dict[str, object]) -> bytes:
        moment = int(parse_time(str(event["timestamp"])).timestamp())
        return b"%s <jp@localhost> %d +0000" % (who.encode(), moment)

    feed = root / f"usage-{count}.fi"
    with feed.open("wb") as out:
        for cid, events in conversations(count):
            for n, event in enumerate(events):
                author, committer = line(commits.author_name(event), event), line("jp", event)
                blob, message = commits.blob_bytes(event), commits.message(event).encode()
                out.write(b"commit refs/conversations/%s\n" % cid.encode())
                out.write(b"author %s\ncommitter %s\n" % (author, committer))
                out.write(b"data %d\n%s\n" % (len(message), message))
                if n == 0:
                    out.write(b"deleteall\n")
                out.write(b"M 100644 inline event.json\ndata %d\n%s\n\n" % (len(blob), blob))
        out.write(b"done\n")
    git = ["git", "--git-dir", str(path)]
    with feed.open("rb") as source:
        subprocess.run([*git, "fast-import", "--quiet", "--done"], stdin=source, check=True)
    feed.unlink()
    subprocess.run([*git, "pack-refs", "--all"], check=True)
    return path


def usage_section(root: Path, profile: Profile, results: Results) -> None:
    kept = {count: _one_size(root, count, profile, results) for count in SIZES[profile.name]}
    small, big = min(kept), max(kept)
    ratio = (kept[big][1] or kept[big][0]) / (kept[small][1] or kept[small][0])
    results.add(
        Row(
            f"jp usage: {big:,} conversations vs {small:,}",
            kept[big][0],
            f"jp usage, {small:,} conversations",
            kept[small][0],
            "CPU < 10x (no event read)",
            met(ratio < 10),
            cpu=kept[big][1],
            base_cpu=kept[small][1],
        )
    )


def _one_size(
    root: Path, count: int, profile: Profile, results: Results
) -> tuple[float, float | None]:
    """The rows of one size; the medians of `jp usage` on kept rows."""
    jp = jp_command()
    results.log(f"  building {count:,} conversations with usage")
    store = build_store(root, count)
    home = root / f"home-usage-{count}"
    home.mkdir()
    env = clean_env(home, store)
    usage = [*jp, "-F", "json", "usage", "--by", "model"]
    start = time.perf_counter()
    first = subprocess.run(usage, env=env, cwd=home, capture_output=True, text=True)
    took = time.perf_counter() - start
    assert first.returncode == 0 and '"model"' in first.stdout, first.stderr
    results.add(Row(f"process: jp usage, first run, {count:,} conversations", took))
    variants = {
        "usage": lambda: run_process(usage, env, home),
        "ls": lambda: run_process([*jp, "conversation", "ls", "--limit", "50"], env, home),
    }
    medians = interleaved(variants, profile.few(profile.runs))
    results.add(
        Row(
            f"process: jp usage, kept rows, {count:,} conversations",
            medians["usage"],
            "jp conversation ls --limit 50, the same store",
            medians["ls"],
            cpu=medians.cpu["usage"],
            base_cpu=medians.cpu["ls"],
        )
    )
    return medians["usage"], medians.cpu["usage"]
