"""Many small imports into one store, as a script or a tool's history brings them.

`jp conversation import` of many small conversations in commands of a fixed
number each (12 commands of 250 in the full run: 3,000 JP folders, then 3,000
synthetic Claude Code session files), every command into the same store:

- the first command against the last (a store's write path must not grow
  slower with what it holds already);
- the whole, against `git fast-import` of as many commits (the same
  `event.json` blobs, read back from jp's store afterwards, one branch per
  conversation) fed from a stream file prepared before its clock starts;
- the number of packs the store holds afterwards (``objects/pack/*.pack``),
  once git's maintenance started by the imports has finished.

Whole processes on both sides, one sample each (the full run takes minutes).

``big_section`` (``--only big-import``): one JP conversation of 50,000 events
(``--quick``: 10,000) imported by one `jp conversation import FOLDER`, against
`git fast-import` of the same commits from a stream prepared before its clock
starts; wall and CPU (the process and its children), the verdict on CPU.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

from bench.common import Profile, Results, Row, clean_env, cpu_now, jp_command, run_process, verdict
from bench.jpfolder import entries, write_folder
from bench.session_scale import _session
from gitstore.fs.retry import until

# (conversations in all, commands): 12 commands, but 2 for the smoke run (the test suite's)
SIZES = {"full": (3_000, 12), "quick": (600, 12), "smoke": (4, 2)}
EVENTS = 4  # entries of each JP conversation: two turns
BIG = {"full": 50_000, "quick": 10_000, "smoke": 200}  # events of the one big conversation


def _jp_folders(root: Path, total: int, commands: int) -> list[list[Path]]:
    """``total`` small JP folders in ``commands`` groups (a folder of each group per
    command), each with a title."""
    groups: list[list[Path]] = [[] for _ in range(commands)]
    for n in range(total):
        folder = root / f"g{n % commands:02d}" / f"{17_000_000_000 + n}-conversation-{n}"
        folder.mkdir(parents=True)
        listed = list(entries(EVENTS, 60, seed=n))
        (folder / "events.json").write_text(json.dumps(listed, indent=2), encoding="utf-8")
        meta = {"title": f"conversation {n}", "last_activated_at": "2025-01-06 09:00:00"}
        (folder / "metadata.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
        groups[n % commands].append(folder)
    return [sorted(g) for g in groups]


def _claude_projects(root: Path, total: int, commands: int) -> list[Path]:
    """``total`` one-turn Claude Code sessions, in ``commands`` project folders."""
    projects = [root / f"-home-me-project-{k:02d}" for k in range(commands)]
    for project in projects:
        project.mkdir(parents=True)
    for n in range(total):
        session = f"{n:08d}-5ca1-4e00-8000-{n:012d}"
        _session(projects[n % commands] / f"{session}.jsonl", session, 1, n)
    return projects


def _stream(store: Path, out: Path) -> int:
    """A fast-import stream of every event commit of ``store`` (its blobs, its parents),
    each conversation its own branch; the number of commits."""
    git = ["git", "--git-dir", str(store)]
    listed = subprocess.run(
        [*git, "rev-list", "--reverse", "--topo-order", "--parents", "--glob=refs/conversations"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    commits = [line.split() for line in listed]
    blobs = subprocess.run(
        [*git, "cat-file", "--batch"],
        input="".join(f"{c[0]}:event.json\n" for c in commits).encode(),
        capture_output=True,
        check=True,
    ).stdout
    marks: dict[str, tuple[int, str]] = {}  # commit -> (its mark, its branch)
    pos = 0
    with open(out, "wb") as handle:
        for n, line in enumerate(commits):
            end = blobs.index(b"\n", pos)
            size = int(blobs[pos:end].split()[2])
            data = blobs[end + 1 : end + 1 + size]
            pos = end + 2 + size
            parent = marks.get(line[1]) if len(line) > 1 else None
            branch = parent[1] if parent else f"refs/bench/c{n}"
            blob, mark = 2 * n + 1, 2 * n + 2
            marks[line[0]] = (mark, branch)
            handle.write(b"blob\nmark :%d\ndata %d\n%s\n" % (blob, len(data), data))
            handle.write(b"commit %s\nmark :%d\n" % (branch.encode(), mark))
            handle.write(b"committer b <b@b> 0 +0000\ndata 2\nx\n")
            if parent:
                handle.write(b"from :%d\n" % parent[0])
            handle.write(b"M 100644 :%d event.json\n\n" % blob)
        handle.write(b"done\n")
    return len(commits)


def _fast_import(stream: Path, store: Path) -> tuple[float, float]:
    subprocess.run(["git", "init", "-q", "--bare", str(store)], check=True)
    before = cpu_now()
    start = time.perf_counter()
    with open(stream, "rb") as feed:
        subprocess.run(
            ["git", "--git-dir", str(store), "fast-import", "--quiet", "--done"],
            stdin=feed,
            check=True,
        )
    return time.perf_counter() - start, cpu_now() - before


def _packs(store: Path, settle: float = 120.0) -> int:
    """The store's packs once no maintenance of git's runs in it (up to ``settle`` s)."""
    for _ in until(settle, 0.2):
        if not any((store / name).exists() for name in ("gc.pid", "objects/maintenance.lock")):
            break
    return len(list((store / "objects" / "pack").glob("*.pack")))


def _run(
    label: str,
    work: Path,
    commands: list[list[str]],
    total: int,
    results: Results,
) -> None:
    store = work / "jp.git"
    home = work / "home"
    home.mkdir()
    env = clean_env(home, store)
    jp = jp_command()
    run_process([*jp, "init"], env, work)
    times: list[float] = []
    before = cpu_now()
    for argv in commands:
        times.append(run_process([*jp, "conversation", "import", *argv], env, work))
    cpu = cpu_now() - before
    packs = _packs(store)
    count = _stream(store, work / "stream")
    git_time, git_cpu = _fast_import(work / "stream", work / "git.git")
    whole = sum(times)
    each = total // len(commands)
    results.add(
        Row(
            f"{label}: the last of {len(commands)} imports of {each:,} into one store",
            times[-1],
            "the first of them",
            times[0],
            "<= 1.5x",
            verdict(times[-1] <= 1.5 * times[0]),
        )
    )
    results.add(
        Row(
            f"{label}: {len(commands)} imports of {each:,} ({count:,} event commits)",
            whole,
            "git fast-import of as many commits (prepared stream)",
            git_time,
            "<= 3x",
            verdict(whole <= 3 * git_time),
            note=f"{packs} packs afterwards",
            cpu=cpu,
            base_cpu=git_cpu,
        )
    )


def batches_section(root: Path, profile: Profile, results: Results) -> None:
    total, commands = SIZES.get(profile.name, SIZES["quick"])
    work = root / "batches-jp"
    groups = _jp_folders(work / "folders", total, commands)
    argvs = [[str(f) for f in group] for group in groups]
    _run(f"{total:,} small JP conversations", work, argvs, total, results)
    shutil.rmtree(work)
    work = root / "batches-claude"
    projects = _claude_projects(work / "projects", total, commands)
    argvs = [["--from", "claude-code", "-q", str(p)] for p in projects]
    _run(f"{total:,} small Claude Code sessions", work, argvs, total, results)
    shutil.rmtree(work)


def big_section(root: Path, profile: Profile, results: Results) -> None:
    """One conversation of many events, imported whole, against fast-import."""
    count = BIG.get(profile.name, BIG["quick"])
    work = root / "big-import"
    folder = write_folder(work / "folder", count)
    store = work / "jp.git"
    home = work / "home"
    home.mkdir(parents=True)
    env = clean_env(home, store)
    jp = jp_command()
    run_process([*jp, "init"], env, work)
    before = cpu_now()
    wall = run_process([*jp, "conversation", "import", str(folder)], env, work)
    cpu = cpu_now() - before
    commits = _stream(store, work / "stream")
    git_time, git_cpu = _fast_import(work / "stream", work / "git.git")
    results.add(
        Row(
            f"one JP conversation of {count:,} events imported ({commits:,} event commits)",
            wall,
            "git fast-import of as many commits (prepared stream)",
            git_time,
            "<= 2x (CPU)",
            verdict(cpu <= 2 * git_cpu),
            cpu=cpu,
            base_cpu=git_cpu,
        )
    )
    shutil.rmtree(work)
