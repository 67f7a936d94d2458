"""Push and pull of 1,000 conversations to a local bare remote.

Every figure is a whole `jp` process, measured against plain git on the same
store in the same run: `git push --mirror` for a push, and a plain
`git fetch` of the same refs into an empty repository for a pull.

    python bench/sync_bench.py [--conversations N] [--turns N]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gitstore.store.core import Store  # noqa: E402
from gitstore.store.repo import init_bare  # noqa: E402

JP = Path(sys.executable).parent / "jp"


def synthetic(cid: str, turns: int, rng: random.Random) -> list[dict[str, Any]]:
    """A request, reasoning, two tool calls with 1-4 KB results and an answer per turn."""
    stamp = f"2026-01-05T09:00:{rng.randrange(60):02d}Z"
    events: list[dict[str, Any]] = [
        {"type": "conversation_start", "timestamp": stamp, "conversation_id": cid}
    ]
    for turn in range(turns):
        events.append({"type": "turn_start", "timestamp": stamp})
        events.append(
            {
                "type": "chat_request",
                "timestamp": stamp,
                "content": f"{cid} turn {turn}: please look at module {rng.random()}",
            }
        )
        events.append(
            {
                "type": "chat_response",
                "timestamp": stamp,
                "reasoning": f"thinking about {rng.random()}",
            }
        )
        for call in range(2):
            tool_id = f"toolu_{turn}_{call}"
            events.append(
                {
                    "type": "tool_call_request",
                    "timestamp": stamp,
                    "id": tool_id,
                    "name": "fs_read_file",
                    "arguments": {"path": f"src/m{call}.rs"},
                }
            )
            body = "".join(rng.choice("abcdefgh \n") for _ in range(rng.randrange(1024, 4096)))
            events.append(
                {
                    "type": "tool_call_response",
                    "timestamp": stamp,
                    "id": tool_id,
                    "content": body,
                    "is_error": False,
                }
            )
        events.append(
            {
                "type": "chat_response",
                "timestamp": stamp,
                "message": f"done with turn {turn} {rng.random()}",
            }
        )
    return events


def environment(root: Path, store: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "TMPDIR")}
    env.update(
        {
            "HOME": str(root / "home"),
            "XDG_CONFIG_HOME": str(root / "config"),
            "XDG_DATA_HOME": str(root / "data"),
            "XDG_CACHE_HOME": str(root / "cache"),
            "JP_STORE": str(store),
            "GIT_CONFIG_NOSYSTEM": "1",
        }
    )
    return env


def timed(args: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    proc = subprocess.run(args, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args[:4])} failed: {proc.stderr.strip()}")
    return elapsed


def settle(*stores: Path, limit: float = 300.0) -> None:
    """Wait for the `git gc --auto` a sync leaves running in the background."""
    deadline = time.monotonic() + limit
    while any((s / "gc.pid").exists() for s in stores) and time.monotonic() < deadline:
        time.sleep(0.1)


def bare(path: Path) -> Path:
    subprocess.run(["git", "init", "--bare", "-q", str(path)], check=True)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=2)
    opts = parser.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory(prefix="jp-sync-bench-") as tmp:
        root = Path(tmp)
        laptop, desktop = root / "laptop.git", root / "desktop.git"
        init_bare(laptop)
        store = Store(laptop)
        started = time.perf_counter()
        ids = [f"jp-c{17000000000 + n}" for n in range(opts.conversations)]
        for cid in ids:
            store.log.create(cid, synthetic(cid, opts.turns, rng), None, "bench")
        events = opts.conversations * (1 + opts.turns * 7)
        print(
            f"{opts.conversations} conversations, {events} events "
            f"(written in {time.perf_counter() - started:.1f}s)"
        )

        settle(laptop)  # the store's own background `git gc --auto` after the writes
        mirror = bare(root / "mirror.git")
        base_push = timed(["git", "--git-dir", str(laptop), "push", "-q", "--mirror", str(mirror)])
        fetched = bare(root / "fetched.git")
        base_pull = timed(
            [
                "git",
                "--git-dir",
                str(fetched),
                "fetch",
                "-q",
                str(mirror),
                "+refs/conversations/*:refs/conversations/*",
                "+refs/notes/*:refs/notes/*",
            ]
        )

        remote = bare(root / "remote.git")
        env_l, env_d = environment(root / "l", laptop), environment(root / "d", desktop)
        for env in (env_l, env_d):
            timed([str(JP), "init"], env)
            timed([str(JP), "remote", "add", "origin", str(remote)], env)
        rows: list[tuple[str, float, float | None]] = []

        def run(name: str, env: dict[str, str], verb: str, baseline: float | None) -> None:
            rows.append((name, timed([str(JP), verb], env), baseline))
            settle(laptop, desktop)

        run("jp push (first)", env_l, "push", base_push)
        run("jp pull (first)", env_d, "pull", base_pull)
        run("jp push (nothing new)", env_l, "push", None)
        run("jp pull (nothing new)", env_d, "pull", None)
        store.log.append(ids[0], synthetic(ids[0], 1, rng)[1:], store.refs.require(ids[0]).tip, "bench")
        run("jp push (1 changed)", env_l, "push", None)
        run("jp pull (1 changed)", env_d, "pull", None)
        print(f"baseline: git push --mirror {base_push:.2f}s, git fetch {base_pull:.2f}s")
        for name, seconds, baseline in rows:
            ratio = f"  {seconds / baseline:.1f}x the git baseline" if baseline else ""
            print(f"{name:24s} {seconds:6.2f}s{ratio}")


if __name__ == "__main__":
    main()
