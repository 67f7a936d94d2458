"""Search and listing at scale: `grep` and `ls --limit 50` on 1,000 to 100,000 conversations.

Each store holds conversations of 5 turns (a request and an answer of 20 to
60 words each), written with `git fast-import` (the same commits jp writes,
``events.commits``), one ref per conversation; 20 of them hold the
word searched for.  The baseline of `grep` is simonw/llm's search, run as
llm runs it: the same texts in an SQLite database of llm's layout (one row
per turn: prompt and response, an external-content FTS5 table over both),
queried with llm's `logs -q` statement (FTS5 MATCH, ranked) by a
`python -c` process of the same interpreter that prints the rows found.
That is llm's search without the cost of importing llm itself, a floor of
`llm logs -q`.  And llm itself: installed from PyPI into a venv of its own,
100 conversations written through its own API (a model class that answers
at once; about 13 ms a turn, so 50,000 turns would take longer than the
whole benchmark), `llm logs -q WORD -n 0` as a whole process: what llm
costs at the least, since its search grows with its log as the floor shows.
The target (faster than llm at 10,000 and 100,000) is judged against that.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from bench import build
from bench.common import Profile, Results, Row, clean_env, interleaved, jp_command, run_process
from bench.common import verdict as met
from bench.synth import Writer
from gitstore.events import commits, parse_time

WORD = "quetzalcoatl"
HOLDERS = 20
TURNS = 5
SIZES = {"full": (1_000, 10_000), "quick": (1_000, 10_000), "smoke": (40, 120)}
SCALE = 100_000

# llm's search: its `logs -q` statement over its turn_search table (llm 0.36)
LLM_SCHEMA = """
CREATE TABLE turn_search (id INTEGER PRIMARY KEY, turn_id TEXT, prompt TEXT, response TEXT);
CREATE VIRTUAL TABLE turn_search_fts USING fts5(prompt, response, content=turn_search, content_rowid=id);
"""
LLM_QUERY = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute(
    "SELECT s.turn_id, s.prompt, s.response FROM turn_search AS s "
    "JOIN turn_search_fts ON turn_search_fts.rowid = s.id "
    "WHERE turn_search_fts MATCH ? ORDER BY turn_search_fts.rank",
    (sys.argv[2],),
).fetchall()
for turn, prompt, response in rows:
    print(turn, prompt, response, sep="\\n")
"""


# written through llm's own API by its own interpreter: a model that answers at once
LLM_WRITE = """
import sys
import llm, sqlite_utils
from llm.migrations import migrate

class Canned(llm.Model):
    model_id = "canned"
    def execute(self, prompt, stream, response, conversation):
        yield "an answer to " + prompt.prompt

db = sqlite_utils.Database(sys.argv[1])
migrate(db)
model = Canned()
for n in range(int(sys.argv[2])):
    talk = model.conversation()
    for turn in range(5):
        word = " " + sys.argv[3] if n % 5 == 0 and turn == 2 else ""
        reply = talk.prompt(f"request {n} of turn {turn}{word}")
        reply.text()
        reply.log_to_db(db)
"""
LLM_CONVERSATIONS = 100


def real_llm(root: Path, results: Results) -> tuple[list[str], dict[str, str]] | None:
    """simonw/llm installed from PyPI into a venv of its own, with a log of
    ``LLM_CONVERSATIONS`` conversations written through its API (None: no install)."""
    venv = root / "llm-venv"
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
        pip = [str(venv / "bin" / "pip"), "install", "--quiet", "llm"]
        subprocess.run(pip, check=True, timeout=600, capture_output=True)
        home = root / "llm-home"
        home.mkdir()
        logs = home / "logs.db"
        write = [str(venv / "bin" / "python"), "-c", LLM_WRITE, str(logs)]
        subprocess.run([*write, str(LLM_CONVERSATIONS), WORD], check=True, timeout=600)
    except (OSError, subprocess.SubprocessError) as exc:
        results.log(f"    llm could not be installed, its row is left out: {exc}")
        return None
    version = subprocess.run([str(venv / "bin" / "llm"), "--version"], capture_output=True)
    results.log(f"    {version.stdout.decode().strip()}, {LLM_CONVERSATIONS} conversations logged")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "LLM_USER_PATH": str(home)}
    return [str(venv / "bin" / "llm"), "logs", "-q", WORD, "-n", "0"], env


def _conversation(writer: Writer, cid: str, holds: bool) -> list[dict[str, object]]:
    events: list[dict[str, object]] = [writer.start(cid)]
    for turn in range(TURNS):
        request = writer.text(writer.rng.randrange(120, 360))
        if holds and turn == 2:
            request = f"{request} {WORD} {writer.text(40)}"
        events += [
            {"type": "turn_start", "timestamp": writer.stamp()},
            {"type": "chat_request", "timestamp": writer.stamp(), "content": request},
            {
                "type": "chat_response",
                "timestamp": writer.stamp(),
                "message": writer.text(writer.rng.randrange(120, 360)),
            },
        ]
    return events


def conversations(count: int) -> Iterator[tuple[str, list[dict[str, object]]]]:
    writer = Writer(11)
    every = max(1, count // HOLDERS)
    for n in range(count):
        cid = build.cid_for(n)
        yield cid, _conversation(writer, cid, n % every == 0 and n // every < HOLDERS)


def _stream(count: int, out: Path, llm: sqlite3.Connection) -> None:
    """git fast-import's input for ``count`` conversations; llm's rows of the same turns."""

    def line(who: str, event: dict[str, object]) -> bytes:
        moment = int(parse_time(str(event["timestamp"])).timestamp())
        return b"%s <jp@localhost> %d +0000" % (who.encode(), moment)

    rows: list[tuple[str, str, str]] = []
    with out.open("wb") as feed:
        for cid, events in conversations(count):
            for n, event in enumerate(events):
                blob, message = commits.blob_bytes(event), commits.message(event).encode()
                author, committer = line(commits.author_name(event), event), line("jp", event)
                feed.write(b"commit refs/conversations/%s\n" % cid.encode())
                feed.write(b"author %s\ncommitter %s\n" % (author, committer))
                feed.write(b"data %d\n%s\n" % (len(message), message))
                if n == 0:
                    feed.write(b"deleteall\n")
                feed.write(b"M 100644 inline event.json\ndata %d\n%s\n\n" % (len(blob), blob))
            for k in range(1, len(events), 3):
                prompt, answer = events[k + 1].get("content"), events[k + 2].get("message")
                rows.append((f"{cid}-{k // 3}", str(prompt), str(answer)))
        feed.write(b"done\n")
    llm.executemany("INSERT INTO turn_search (turn_id, prompt, response) VALUES (?, ?, ?)", rows)
    llm.execute("INSERT INTO turn_search_fts(turn_search_fts) VALUES ('rebuild')")
    llm.commit()


def build_stores(root: Path, count: int, log: Results) -> tuple[Path, Path]:
    """A jp store and llm's database of the same ``count`` conversations."""
    store = build.new_store(root / f"search-{count}.git")
    path = store.gitdir
    store.close()
    llm_db = root / f"llm-{count}.db"
    db = sqlite3.connect(llm_db)
    db.executescript(LLM_SCHEMA)
    feed = root / f"search-{count}.fi"
    _stream(count, feed, db)
    db.close()
    with feed.open("rb") as source:
        subprocess.run(
            ["git", "--git-dir", str(path), "fast-import", "--quiet", "--done"],
            stdin=source,
            check=True,
        )
    feed.unlink()
    subprocess.run(["git", "--git-dir", str(path), "pack-refs", "--all"], check=True)  # as jp's gc
    log.log(f"    {count:,} conversations written")
    return path, llm_db


def search_section(root: Path, profile: Profile, results: Results, scale: bool = False) -> None:
    # at scale too the smallest size, so that `ls --limit 50` has its ratio in one run
    sizes = (SIZES[profile.name][0], SCALE) if scale else SIZES[profile.name]
    llm = None if profile.name == "smoke" else real_llm(root, results)
    limits = {count: _one_size(root, count, profile, results, llm) for count in sizes}
    _limit_rows(limits, results)


def _one_size(
    root: Path,
    count: int,
    profile: Profile,
    results: Results,
    llm: tuple[list[str], dict[str, str]] | None,
) -> tuple[float, float | None]:
    """The grep row of one size; the medians of `ls --limit 50` at it."""
    results.log(f"  building {count:,} conversations")
    store, llm_db = build_stores(root, count, results)
    home = root / f"home-search-{count}"
    home.mkdir()
    env = clean_env(home, store)
    jp = jp_command()
    grep = [*jp, "conversation", "grep", WORD]
    found = subprocess.run(grep, env=env, cwd=home, capture_output=True, text=True)
    held = len({hit.split(":", 1)[0] for hit in found.stdout.splitlines()})
    assert held == min(HOLDERS, count), (held, found.stderr)  # the index is built here
    variants = {
        "grep": lambda: run_process(grep, env, home),
        "llm": lambda: run_process([sys.executable, "-c", LLM_QUERY, str(llm_db), WORD], env, home),
        "ls": lambda: run_process([*jp, "conversation", "ls", "--limit", "50"], env, home),
    }
    if llm is not None:
        variants["real llm"] = lambda: run_process(llm[0], llm[1], home)
    medians = interleaved(variants, profile.few(profile.runs))
    if llm is not None:
        results.add(
            Row(
                f"process: jp conversation grep WORD, {count:,} conversations",
                medians["grep"],
                f"llm logs -q WORD -n 0, {LLM_CONVERSATIONS} conversations (llm's least)",
                medians["real llm"],
                "faster than llm" if count >= 10_000 else "-",
                met(medians["grep"] < medians["real llm"]) if count >= 10_000 else "-",
                cpu=medians.cpu["grep"],
                base_cpu=medians.cpu["real llm"],
            )
        )
    results.add(
        Row(
            f"process: jp conversation grep WORD (held by {HOLDERS}), {count:,} conversations",
            medians["grep"],
            "llm's logs -q query (SQLite FTS5), python -c",
            medians["llm"],
            "-",
            "-",
            cpu=medians.cpu["grep"],
            base_cpu=medians.cpu["llm"],
        )
    )
    _note_sizes(results, store, llm_db, count)
    return medians["ls"], medians.cpu["ls"]


def _note_sizes(results: Results, store: Path, llm_db: Path, count: int) -> None:
    cache = store / "jp" / "cache.sqlite"
    try:
        with sqlite3.connect(cache) as db:
            query = "SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'grep_text%'"
            pages = db.execute(query).fetchone()[0]
    except sqlite3.Error:  # an SQLite without dbstat
        pages = None
    index = f"{int(pages) / 2**20:.1f} MiB" if pages else "?"
    results.log(
        f"    {count:,} conversations: the index {index}, the cache "
        f"{cache.stat().st_size / 2**20:.1f} MiB; llm's database {llm_db.stat().st_size / 2**20:.1f} MiB"
    )


def _limit_rows(limits: dict[int, tuple[float, float | None]], results: Results) -> None:
    sizes = sorted(limits)
    for count in sizes:
        wall, cpu = limits[count]
        results.add(
            Row(f"process: jp conversation ls --limit 50, {count:,} conversations", wall, cpu=cpu)
        )
    if len(sizes) > 1:
        small, big = sizes[0], sizes[-1]
        ratio = (limits[big][1] or limits[big][0]) / (limits[small][1] or limits[small][0])
        results.add(
            Row(
                f"ls --limit 50: {big:,} conversations vs {small:,}",
                limits[big][0],
                f"ls --limit 50, {small:,} conversations",
                limits[small][0],
                "CPU < 1.5x",
                met(ratio < 1.5),
                cpu=limits[big][1],
                base_cpu=limits[small][1],
            )
        )
