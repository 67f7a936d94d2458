"""Bulk writes: an import's commits streamed into packs, against `git fast-import`.

Both sides write the same commits (the bytes ``store.log.write_commits`` writes,
from ``gitstore.events.commits``) into an empty store: jp through
``store.log.write_packed`` fed by a generator, git through ``git fast-import``
fed the same objects on a pipe.  Each runs in a child process, so its peak
memory (``ru_maxrss``) is its own; for git it is fast-import's, the feeder
aside.  One sample each: a million events takes minutes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from bench.common import ROOT, Profile, Results, Row, verdict

SIZES = {"full": 1_000_000, "quick": 100_000, "smoke": 2_000}
CID = "jp-c17800000900"

_JP = """
import sys
from pathlib import Path
from bench import build, synth
store = build.new_store(Path(sys.argv[1]))
events = synth.Writer(7).events(sys.argv[2], int(sys.argv[3]))
tip = store.log.write_packed(events, None, {})[-1]
print(tip)
"""

_FEED = """
import sys
from bench import synth
from gitstore.events import commits
from gitstore.events import parse_time
out = sys.stdout.buffer
names, parent, mark = {}, None, 0
def line(who, event):
    moment = int(parse_time(str(event["timestamp"])).timestamp())
    return b"%s <jp@localhost> %d +0000" % (who.encode(), moment)
for event in synth.Writer(7).events(sys.argv[1], int(sys.argv[2])):
    if event.get("type") == "tool_call_request":
        names[str(event.get("id"))] = str(event.get("name"))
    blob, message = commits.blob_bytes(event), commits.message(event, names).encode()
    mark += 1
    out.write(b"blob\\nmark :%d\\ndata %d\\n%s\\n" % (mark, len(blob), blob))
    author, committer = line(commits.author_name(event), event), line("jp", event)
    out.write(b"commit refs/bench/import\\nauthor %s\\ncommitter %s\\n" % (author, committer))
    out.write(b"data %d\\n%s\\n" % (len(message), message))
    if parent is None:
        out.write(b"deleteall\\n")
    out.write(b"M 100644 :%d event.json\\n\\n" % mark)
    parent = mark
out.write(b"done\\n")
"""


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _peak_kib(pid: int) -> tuple[int, int]:
    """Wait for ``pid``: its exit status and peak resident memory in KiB."""
    _, status, usage = os.wait4(pid, 0)
    return status, usage.ru_maxrss


def _jp(store: Path, count: int) -> tuple[float, int, str]:
    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-c", _JP, str(store), CID, str(count)],
        env=_child_env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    tip = child.stdout.read().strip()
    status, peak = _peak_kib(child.pid)
    child.returncode = status
    took = time.perf_counter() - start
    assert status == 0, f"the jp bulk write failed ({status})"
    return took, peak, tip


def _fast_import(store: Path, count: int) -> tuple[float, int, str]:
    subprocess.run(["git", "init", "-q", "--bare", str(store)], check=True)
    start = time.perf_counter()
    feed = subprocess.Popen(
        [sys.executable, "-c", _FEED, CID, str(count)], env=_child_env(), stdout=subprocess.PIPE
    )
    git = subprocess.Popen(
        ["git", "--git-dir", str(store), "fast-import", "--quiet", "--done"], stdin=feed.stdout
    )
    assert feed.stdout is not None
    feed.stdout.close()
    status, peak = _peak_kib(git.pid)
    git.returncode = status
    feed.wait()
    took = time.perf_counter() - start
    assert status == 0 and feed.returncode == 0, "git fast-import failed"
    tip = subprocess.run(
        ["git", "--git-dir", str(store), "rev-parse", "refs/bench/import"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return took, peak, tip


def bulk_section(root: Path, profile: Profile, results: Results) -> None:
    count = SIZES.get(profile.name, SIZES["quick"])
    work = root / "bulk"
    work.mkdir()
    jp_time, jp_peak, jp_tip = _jp(work / "jp.git", count)
    git_time, git_peak, git_tip = _fast_import(work / "git.git", count)
    same = "the same tip" if jp_tip == git_tip else f"TIPS DIFFER ({jp_tip[:12]} {git_tip[:12]})"
    results.add(
        Row(
            f"bulk write of {count:,} events into packs (an import)",
            jp_time,
            "git fast-import of the same commits",
            git_time,
            "<= 2x fast-import",
            verdict(jp_time <= 2 * git_time and jp_tip == git_tip),
            note=f"peak memory: jp {jp_peak / 1024:.0f} MiB, git fast-import "
            f"{git_peak / 1024:.0f} MiB; {same}",
        )
    )
