"""The secret scan at push (docs/security.md): what it adds to `jp push`.

A store of N conversations (``bench.scalestore``: 4,000 in the full run) is
pushed once; then, each run, 10 of them get a turn's worth of new text (a tool
result of about 8 KB of code and shell output, with `KEY=value` lines and URLs
that are no secrets) and `jp push` sends them.  The row compares the scan's own
work, done in this process exactly as the push's hold does it (the events the
remote lacks, read from the store and scanned), with the whole `jp push` process
that ran it: the target is under 20%.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from bench import build, scalestore
from bench.common import Profile, Results, Row, clean_env, jp_command, median, run_process
from gitstore.store.core import Store
from porcelain.app.secretcheck import PushCheck
from porcelain.domain.secretevents import AllowList

CHANGED = 10
_OUTPUT = (
    "$ cat config/settings.py\nDATABASE_HOST = 'db.internal'\nTIMEOUT=30\n"
    "API_BASE=https://api.example.com/v1\nsort_key = lambda row: row.id\n"
    "$ git log --oneline -3\n3f9a2c4 fix the build\n8b7e6d5 add tests\n"
) * 40


def _append(store: Store, cids: list[str], n: int) -> dict[str, str]:
    """A new turn's text on each of ``cids``; the tips before it (the remote's)."""
    before = {}
    for cid in cids:
        tip = store.refs.require(cid).tip
        before[cid] = tip
        events = [
            {"type": "turn_start", "timestamp": "2026-01-05T09:30:00Z"},
            {"type": "chat_request", "timestamp": "2026-01-05T09:30:01Z", "content": f"run {n}"},
            {"type": "chat_response", "timestamp": "2026-01-05T09:30:02Z", "message": _OUTPUT},
        ]
        store.log.append(cid, events, tip, "bench")
    return before


def secrets_section(root: Path, profile: Profile, results: Results) -> None:
    count = {"full": 4_000, "quick": 1_000}.get(profile.name, 100)
    folder = root / "secrets"
    folder.mkdir()
    store = build.new_store(folder / "store.git")
    cids = scalestore.many_conversations(store, count, results.log)
    remote = folder / "remote.git"
    subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
    home = folder / "home"
    home.mkdir()
    env = clean_env(home, store.path)
    jp = jp_command()
    run_process([*jp, "remote", "add", "origin", str(remote)], env, home)
    run_process([*jp, "push", "origin"], env, home)
    changed = cids[:: max(1, count // CHANGED)][:CHANGED]
    scans, pushes = [], []
    for n in range(max(3, profile.few(profile.runs))):
        before = _append(store, changed, n)
        check = PushCheck(store, AllowList())
        start = time.perf_counter()
        for cid in changed:
            assert check(cid, store.refs.require(cid).tip, frozenset({before[cid]})) is None
        scans.append(time.perf_counter() - start)
        pushes.append(run_process([*jp, "push", "origin"], env, home))
    scan, push = median(scans), median(pushes)
    results.add(
        Row(
            f"secret scan at push: {CHANGED} changed of {count:,}",
            scan,
            f"jp push of the {CHANGED} (scan included)",
            push,
            "under 20%",
            "yes" if scan < 0.2 * push else "NO",
            note=f"{len(_OUTPUT) * CHANGED // 1024} KiB of new text scanned",
        )
    )
    store.close()
