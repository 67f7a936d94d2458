"""Other tools' sessions: `jp conversation import --from claude-code|codex` of the real
session files of ../shared/fixtures (skipped when absent), against git's own floor.

- a first import, against `git fast-import` of as many one-file commits (the
  same `event.json` blobs, read back from jp's store) fed from a stream file
  prepared beforehand, so the baseline holds none of jp's serialisation;
- a re-import of the unchanged files, against a process that reads and hashes
  them (SHA-1), which is what the recorded position leaves to do.

Whole processes on both sides, so the interpreter's start counts for both.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

from bench.common import (
    Profile,
    Results,
    Row,
    clean_env,
    cpu_now,
    interleaved,
    jp_command,
    median,
    run_process,
    verdict,
)

SHARED = Path(__file__).resolve().parents[2] / "shared" / "fixtures"
_HASH = """
import hashlib, sys
from pathlib import Path
for root in sys.argv[1:]:
    for path in sorted(Path(root).rglob("*.jsonl")):
        hashlib.sha1(path.read_bytes()).hexdigest()
"""


def _roots(work: Path, most: int | None) -> tuple[Path, Path]:
    """A Claude Code root and a Codex home holding the real files (up to ``most`` bytes each)."""
    claude = work / "projects"
    for project in ("spotter", "codemie"):
        for path in sorted((SHARED / "claude-code" / project).rglob("*.jsonl")):
            if most is not None and path.stat().st_size > most:
                continue
            rel = path.relative_to(SHARED / "claude-code" / project)
            target = claude / project / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    codex = work / "codex"
    (codex / "sessions").mkdir(parents=True)
    for path in sorted((SHARED / "codex").rglob("*.jsonl")):
        if most is not None and path.stat().st_size > most:
            continue
        shutil.copyfile(path, codex / "sessions" / path.name)
    return claude, codex


def _stream(store: Path, out: Path) -> int:
    """A fast-import stream of one commit per event commit of ``store``: its blobs."""
    git = ["git", "--git-dir", str(store)]
    ids = subprocess.run(
        [*git, "rev-list", "--glob=refs/conversations"], capture_output=True, text=True, check=True
    ).stdout.split()
    blobs = subprocess.run(
        [*git, "cat-file", "--batch"],
        input="".join(f"{c}:event.json\n" for c in ids).encode(),
        capture_output=True,
        check=True,
    ).stdout
    count = 0
    with open(out, "wb") as handle:
        pos = 0
        while pos < len(blobs):
            end = blobs.index(b"\n", pos)
            size = int(blobs[pos:end].split()[2])
            data = blobs[end + 1 : end + 1 + size]
            pos = end + 2 + size
            count += 1
            blob = 2 * count - 1
            handle.write(b"blob\nmark :%d\ndata %d\n%s\n" % (blob, len(data), data))
            handle.write(b"commit refs/bench/s\nmark :%d\n" % (2 * count))
            handle.write(b"committer b <b@b> 0 +0000\ndata 2\nx\n")
            if count > 1:
                handle.write(b"from :%d\n" % (2 * count - 2))
            handle.write(b"M 100644 :%d event.json\n\n" % blob)
        handle.write(b"done\n")
    return count


def _fast_import(stream: Path, store: Path) -> float:
    subprocess.run(["git", "init", "-q", "--bare", str(store)], check=True)
    start = time.perf_counter()
    with open(stream, "rb") as feed:
        subprocess.run(
            ["git", "--git-dir", str(store), "fast-import", "--quiet", "--done"],
            stdin=feed,
            check=True,
        )
    return time.perf_counter() - start


def _first_import(
    jp: list[str], env: dict[str, str], work: Path, roots: tuple[Path, Path]
) -> tuple[float, float]:
    """Wall and CPU seconds of both first imports into a new store (made outside
    the clock), which is left for the stream."""
    shutil.rmtree(work / "jp.git", ignore_errors=True)
    run_process([*jp, "init"], env, work)
    before = cpu_now()
    wall = sum(
        run_process([*jp, "conversation", "import", "--from", tool, str(where)], env, work)
        for tool, where in zip(("claude-code", "codex"), roots, strict=True)
    )
    return wall, cpu_now() - before


def _first_fast_import(stream: Path, store: Path) -> tuple[float, float]:
    """Wall and CPU seconds of ``git fast-import`` of ``stream`` into a new store."""
    shutil.rmtree(store, ignore_errors=True)
    before = cpu_now()
    wall = _fast_import(stream, store)
    return wall, cpu_now() - before


def _medians(samples: list[tuple[float, float]]) -> tuple[float, float]:
    return median([s[0] for s in samples]), median([s[1] for s in samples])


def sessions_section(root: Path, profile: Profile, results: Results) -> None:
    if not (SHARED / "claude-code").is_dir() or not (SHARED / "codex").is_dir():
        results.add(Row("import Claude Code and Codex sessions", None, note="skipped: no fixtures"))
        return
    work = root / "sessions"
    work.mkdir()
    claude, codex = _roots(work, 100_000 if profile.name == "smoke" else None)
    store = work / "jp.git"
    env = clean_env(work / "home", store)
    (work / "home").mkdir()
    jp = jp_command()
    # rounds in turn (the first import makes the stream), medians: noise lands on both
    ours = [_first_import(jp, env, work, (claude, codex))]
    count = _stream(store, work / "stream")
    theirs: list[tuple[float, float]] = []
    for _ in range(profile.few(3)):
        theirs.append(_first_fast_import(work / "stream", work / "git.git"))
        if len(ours) < profile.few(3):
            ours.append(_first_import(jp, env, work, (claude, codex)))
    (first_time, first_cpu), (git_time, git_cpu) = _medians(ours), _medians(theirs)
    results.add(
        Row(
            f"import of the real sessions ({count:,} event commits)",
            first_time,
            "git fast-import of as many one-file commits (prepared stream)",
            git_time,
            "<= 3x",
            verdict(first_time <= 3 * git_time),
            cpu=first_cpu,
            base_cpu=git_cpu,
        )
    )

    def reimport() -> float:
        return sum(
            run_process([*jp, "conversation", "import", "--from", tool, str(where)], env, work)
            for tool, where in (("claude-code", claude), ("codex", codex))
        )

    def hashing() -> float:
        return sum(
            run_process([sys.executable, "-c", _HASH, str(where)], env, work)
            for where in (claude, codex)
        )

    # alternated rounds (the order changing), medians: a neighbour's burst lands on both
    medians = interleaved({"jp": reimport, "hash": hashing}, profile.few(9))
    size = sum(p.stat().st_size for p in work.rglob("*.jsonl"))
    results.add(
        Row(
            f"re-import of the unchanged sessions ({size / 2**20:.1f} MiB)",
            medians["jp"],
            "read and hash them (a Python process per root)",
            medians["hash"],
            "<= 2x",
            verdict(medians["jp"] <= 2 * medians["hash"]),
            cpu=medians.cpu["jp"],
            base_cpu=medians.cpu["hash"],
        )
    )
    shutil.rmtree(work)
