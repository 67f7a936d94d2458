"""Memory of `jp conversation import --from claude-code` against the total size imported.

Writes a `~/.claude/projects` of synthetic Claude Code sessions (many small ones and
a few large ones, the largest the same size whatever the total), imports it under
`/usr/bin/time -v` and reports the maximum resident set size and the time, for
each total asked.  Memory is bounded by one session: the figure must not grow
with the total.

    python -m bench.session_scale --sizes 250,1000 [--workdir /tmp/jp-scale] [--keep]
    python -m bench.session_scale --generate DIR --mib 250   # only write the sessions

Sizes are MiB.  Text is drawn from a seeded generator, so runs are repeatable.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.common import clean_env, jp_command

LARGE_MIB = 24  # each of the few large sessions
LARGE_COUNT = 3
SMALL_MIB = 2  # the many others
_WORDS = [
    "".join(random.Random(n).choice("aeioukrstnlmpd") for _ in range(2 + n % 7)) for n in range(900)
]


def _text(rng: random.Random, size: int) -> str:
    words: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(_WORDS)
        words.append(word)
        length += len(word) + 1
    return " ".join(words)


def _turn(rng: random.Random, session: str, n: int, parent: str | None) -> list[dict[str, Any]]:
    """A prompt, an answer with a tool call, its (large) result and a closing answer."""
    stamp = (
        f"2026-03-{1 + n // 86400 % 28:02d}T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}Z"
    )
    base = {"sessionId": session, "timestamp": stamp, "isSidechain": False, "version": "2.1.39"}
    ids = [f"{session[:8]}-{n}-{k}" for k in range(4)]
    call = f"toolu_{session[:8]}_{n}"
    model = {"model": "claude-opus-4-6", "type": "message", "role": "assistant"}
    return [
        {
            **base,
            "type": "user",
            "uuid": ids[0],
            "parentUuid": parent,
            "message": {"role": "user", "content": _text(rng, 200)},
        },
        {
            **base,
            "type": "assistant",
            "uuid": ids[1],
            "parentUuid": ids[0],
            "message": {
                **model,
                "id": f"msg_{ids[1]}",
                "content": [
                    {"type": "text", "text": _text(rng, 400)},
                    {"type": "tool_use", "id": call, "name": "Read", "input": {"path": f"f{n}"}},
                ],
            },
        },
        {
            **base,
            "type": "user",
            "uuid": ids[2],
            "parentUuid": ids[1],
            "message": {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": call, "content": _text(rng, 8000)}
                ],
            },
        },
        {
            **base,
            "type": "assistant",
            "uuid": ids[3],
            "parentUuid": ids[2],
            "message": {
                **model,
                "id": f"msg_{ids[3]}",
                "content": [{"type": "text", "text": "ok"}],
            },
        },
    ]


def _session(path: Path, session: str, size: int, seed: int) -> int:
    rng = random.Random(seed)
    written = n = 0
    parent = None
    with open(path, "w", encoding="utf-8") as handle:
        while written < size:
            for record in _turn(rng, session, n, parent):
                line = json.dumps(record, separators=(",", ":")) + "\n"
                handle.write(line)
                written += len(line)
            parent = f"{session[:8]}-{n}-3"
            n += 1
    return written


def generate(root: Path, mib: int) -> int:
    """A Claude Code root of about ``mib`` MiB; returns the number of sessions."""
    total = mib << 20
    sizes = [LARGE_MIB << 20] * LARGE_COUNT
    while sum(sizes) < total:
        sizes.append(SMALL_MIB << 20)
    for number, size in enumerate(sizes):
        project = root / f"-home-me-project-{number % 10}"
        project.mkdir(parents=True, exist_ok=True)
        session = f"{number:08d}-5ca1-4e00-8000-{number:012d}"
        _session(project / f"{session}.jsonl", session, size, number)
    return len(sizes)


def measure(work: Path, mib: int) -> dict[str, Any]:
    """Import ``mib`` MiB of sessions into a new store under `/usr/bin/time -v`."""
    root = work / f"projects-{mib}"
    sessions = generate(root, mib)
    store = work / f"store-{mib}.git"
    home = work / "home"
    home.mkdir(exist_ok=True)
    env = clean_env(home, store)
    jp = jp_command()
    subprocess.run([*jp, "init"], env=env, check=True, capture_output=True)
    argv = ["/usr/bin/time", "-v", *jp, "conversation", "import", "--from", "claude-code"]
    done = subprocess.run([*argv, str(root)], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", done.stderr)
    user = re.search(r"User time \(seconds\): ([\d.]+)", done.stderr)
    size = sum(p.stat().st_size for p in root.rglob("*.jsonl"))
    shutil.rmtree(root)
    # the import may have started git gc --auto on its packs (one per session): still writing
    shutil.rmtree(store, ignore_errors=True)
    return {
        "mib": round(size / 2**20),
        "sessions": sessions,
        "largest_mib": LARGE_MIB,
        "max_rss_mib": round(int(rss.group(1)) / 1024, 1) if rss else None,
        "wall": wall.group(1) if wall else None,
        "user_seconds": float(user.group(1)) if user else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="bench/session_scale.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--sizes", default="250,1000", help="totals to import, MiB (default 250,1000)"
    )
    parser.add_argument("--workdir", type=Path, help="where to write (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument("--generate", type=Path, metavar="DIR", help="only write sessions in DIR")
    parser.add_argument("--mib", type=int, default=250, help="with --generate: the total, MiB")
    args = parser.parse_args(argv)
    if args.generate:
        print(f"{generate(args.generate, args.mib)} sessions in {args.generate}")
        return 0
    work = args.workdir or Path(tempfile.mkdtemp(prefix="jp-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        for mib in (int(x) for x in args.sizes.split(",")):
            print(json.dumps(measure(work, mib)), flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
