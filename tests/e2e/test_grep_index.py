"""`jp conversation grep` narrows by the cache's full-text index and finds exactly
what a scan of every conversation finds: after edits of history (compaction),
forks, deletions, undo, a pull, a tip that plain git moved, and a cache that is
deleted or damaged."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

from tests.e2e.harness import NO_MARKERS, RUST, WITH_COMPACTION
from tests.reliability.harness import Sandbox, remote_pair

# (options, pattern): fixed strings, smart and forced case, regular expressions,
# scopes, words that no conversation has, and patterns too short to narrow by
SEARCHES = [
    ((), "apples"),
    ((), "Apples"),
    (("-i",), "APPLES"),
    (("--case-sensitive",), "apples"),
    ((), "xdist"),
    (("-r",), r"x[a-z]ist"),
    (("-r",), r"pyt(es)?t"),
    (("-r",), r"(?i)CARGO|zebra"),
    (("-s", "tool-result"), "import"),
    (("-s", "reasoning"), "the"),
    ((), "zebra crossing"),
    ((), "no-such-words-anywhere"),
    ((), "ap"),
    (("-l",), "the"),
    (("--archived", "-l"), "banana"),
    (("--reviews", "-l"), "summary"),
]


# after a change of the store, the searches that read what changed: each kind of
# narrowing (a word, a regular expression, a scope, a pattern too short to narrow by,
# names only, archived ones), on words of the conversations the tests change; the
# case rules are the query's, not the store's, and are checked on the first and last
# state (each search is two `jp` processes)
AFTER_CHANGE = [
    ((), "apples"),
    (("-r",), r"x[a-z]ist"),
    (("-r",), r"(?i)CARGO|zebra"),
    (("-s", "tool-result"), "import"),
    ((), "zebra crossing"),
    ((), "ap"),
    (("-l",), "the"),
    (("--archived", "-l"), "banana"),
]
assert all(search in SEARCHES for search in AFTER_CHANGE)


def same_as_scan(box: Sandbox, searches: list[tuple[tuple[str, ...], str]] = SEARCHES) -> None:
    """Each search gives what ``--scan`` (no index) gives, exit code included."""
    for options, pattern in searches:
        args = ("-F", "json", "conversation", "grep", *options, "--", pattern)
        indexed = box.run(*args)
        scanned = box.run(*args[:-2], "--scan", "--", pattern)
        assert indexed.returncode in (0, 1), indexed.stderr
        assert (indexed.returncode, json.loads(indexed.stdout or "null")) == (
            scanned.returncode,
            json.loads(scanned.stdout or "null"),
        ), (options, pattern)


def git(box: Sandbox, *args: str, input: str | None = None) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(box.store), *args],
        input=input,
        capture_output=True,
        text=True,
        check=True,
        env=box.env,
    ).stdout.strip()


def plain_git_append(box: Sandbox, cid: str, text: str) -> None:
    """Move a conversation's tip with plain git: one more request, no jp involved."""
    ref = f"refs/conversations/{cid}"
    tip = git(box, "rev-parse", ref)
    event = {"type": "chat_request", "timestamp": "2026-01-05T09:00:00Z", "content": text}
    blob = git(box, "hash-object", "-w", "--stdin", input=json.dumps(event))
    tree = git(box, "mktree", input=f"100644 blob {blob}\tevent.json\n")
    commit = git(box, "commit-tree", tree, "-p", tip, "-m", "chat_request")
    git(box, "update-ref", ref, commit, tip)


def test_grep_with_the_index_finds_what_a_scan_finds(tmp_path: Path) -> None:
    box = Sandbox(tmp_path / "box")
    box.ok("init")
    box.ok("conversation", "import", str(RUST), str(WITH_COMPACTION), str(NO_MARKERS))
    same_as_scan(box)  # the first search builds the index
    first = box.new("apples and pears")
    box.ok("q", "banana bread, the recipe")
    fork = box.ok("conversation", "fork", first).split()[-1]
    box.ok("conversation", "use", fork)
    box.ok("q", "zebra crossing in the fork")
    box.ok("conversation", "compact", first)
    same_as_scan(box, AFTER_CHANGE)
    box.ok("conversation", "archive", first)
    same_as_scan(box, AFTER_CHANGE)
    box.ok("conversation", "rm", "--yes", fork)
    same_as_scan(box, AFTER_CHANGE)
    box.ok("undo")  # the fork is back
    same_as_scan(box, AFTER_CHANGE)
    box.ok("undo")  # and the archived one live again
    plain_git_append(box, first, "the zebra crossing that plain git wrote")
    same_as_scan(box)
    hits = box.json("conversation", "grep", "-l", "that plain git wrote")
    assert hits == [first], "a tip that plain git moved is searched again"


def test_a_pulled_store_searches_what_it_pulled(tmp_path: Path) -> None:
    one, two = remote_pair(tmp_path)
    first = one.new("apples from the first machine")
    one.ok("push")
    two.ok("pull")
    same_as_scan(two, AFTER_CHANGE)
    one.ok("q", "zebra crossing, later")
    one.ok("push")
    two.ok("pull")
    same_as_scan(two)
    assert two.json("conversation", "grep", "-l", "zebra crossing") == [first]


def test_a_deleted_or_damaged_index_is_rebuilt(tmp_path: Path) -> None:
    box = Sandbox(tmp_path / "box")
    box.ok("init")
    box.ok("conversation", "import", str(RUST), str(WITH_COMPACTION))
    box.new("apples and the zebra crossing")
    expected = box.ok("conversation", "grep", "zebra")
    cache = box.store / "jp" / "cache.sqlite"
    db = sqlite3.connect(cache)
    db.execute("DROP TABLE grep_text")
    db.commit()
    db.close()
    assert box.ok("conversation", "grep", "zebra") == expected
    same_as_scan(box)
    cache.unlink()
    assert box.ok("conversation", "grep", "zebra") == expected
