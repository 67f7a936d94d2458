"""Sync at scale: `jp push` and `jp pull` against plain git on the same stores.

Each size is a store of N conversations (refs packed, one title each, written
by `git fast-import`: `bench.scalestore`), a bare remote and a second store.
Every figure is a whole process, measured beside its plain-git baseline in the
same run:

- first push / first pull: `git push --mirror` of the same refs (run before jp's
  push, which adds a remote-tracking copy of each) / `git clone --mirror`;
- no-op pull: a no-op `git fetch` of one ref, and a no-op plain `git fetch` of
  every conversation ref;
- push / pull of 10 changed conversations: plain git pushing / fetching just
  those 10 refs; once on the remotes as the first pushes left them (a loose file
  per ref), once more after ``git pack-refs --all`` on them, as a server's
  maintenance leaves them.

Every row reports CPU (the process and what it waited for) and the peak
resident memory of jp's process and of git's, and is logged as soon as it is
measured (``make bench-scale`` runs 100,000 conversations once: about half an
hour on two busy cores, most of it the two first pushes).

    python bench/sync_bench.py [--sizes 1000,10000] [--runs 5] [--before SRC]

(``--before SRC``: the first pull, the no-op pull (alternated with this tree's)
and the pull of 10 changed again by the jp of another source tree, such as an
export of an earlier commit, into a third store, in the same run.)
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import build, scalestore
from bench.common import (
    Results,
    Row,
    clean_env,
    cpu_now,
    interleaved,
    jp_command,
    run_process,
    table,
)
from gitstore.fs import retry
from gitstore.git import refs
from gitstore.store.core import Store

CHANGED = 10


def _git(gitdir: Path, *args: str) -> list[str]:
    return ["git", "--git-dir", str(gitdir), *args]


def _settle(*gitdirs: Path, limit: float = 300.0) -> None:
    """Wait for the `git gc --auto` a sync may leave running."""
    for attempt in retry.until(limit, 0.1):
        if attempt.last or not any((g / "gc.pid").exists() for g in gitdirs):
            return


def _bare(path: Path) -> Path:
    subprocess.run(["git", "init", "--bare", "-q", str(path)], check=True)
    return path


def _change(store: Store, cids: list[str]) -> None:
    for cid in cids:
        tip = store.refs.require(cid).tip
        event = {"type": "chat_request", "timestamp": "2026-01-05T09:30:00Z", "content": "more"}
        store.log.append(cid, [event], tip, "bench")


TIME = Path("/usr/bin/time")  # GNU time: the peak of the process itself, not of our fork


def measured(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, int]:
    """Wall time and peak resident memory (KiB; 0 without GNU time) of one whole
    process; a failure stops the benchmark.  The peak is read by GNU time: the
    rusage of a child forked from this process starts at this process's size."""
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as out:
        timed = [str(TIME), "-f", "%M", "-o", out.name, *argv] if TIME.exists() else argv
        start = time.perf_counter()
        done = subprocess.run(timed, env=env, cwd=cwd, capture_output=True)
        elapsed = time.perf_counter() - start
        if done.returncode != 0:
            raise RuntimeError(
                f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.decode()}"
            )
        lines = out.read().split()
    return elapsed, int(lines[-1]) if lines and lines[-1].isdigit() else 0


# the other tree's own entry point: `porcelain.early` (a no-op pull without click or
# libgit2) where it has one, as its installed `jp` would run
_BEFORE = (
    "import sys, importlib.util; sys.path.insert(0, sys.argv.pop(1)); "
    "name = 'porcelain.early' if importlib.util.find_spec('porcelain.early') else 'porcelain.cli'; "
    "main = __import__(name, fromlist=['main']).main; sys.argv[0] = 'jp'; sys.exit(main())"
)


def size_section(
    root: Path, count: int, runs: int, results: Results, before: Path | None = None
) -> None:
    """Every row for one store of ``count`` conversations."""
    results.log(f"  building {count:,} conversations")
    laptop = build.new_store(root / "laptop.git")
    cids = scalestore.many_conversations(laptop, count, results.log)
    remote, mirror = _bare(root / "remote.git"), _bare(root / "mirror.git")
    desktop = build.new_store(root / "desktop.git")
    jp = jp_command()
    env_l = clean_env(root / "home-l", laptop.path)
    env_d = clean_env(root / "home-d", desktop.path)
    for env, home in ((env_l, root / "home-l"), (env_d, root / "home-d")):
        home.mkdir()
        run_process([*jp, "remote", "add", "origin", str(remote)], env, home)

    spent: dict[float, float] = {}  # CPU seconds (with children) of each figure, by figure
    peaks: dict[float, int] = {}  # peak resident memory (KiB) of each figure's process

    def once(argv: list[str], env: dict[str, str], home: Path) -> float:
        before = cpu_now()
        took, peaks_kib = measured(argv, env, home)
        spent[took], peaks[took] = cpu_now() - before, peaks_kib
        _settle(laptop.gitdir, desktop.gitdir, remote)
        return took

    def row(name: str, jp_s: float, base: str, base_s: float, target: str, ok: bool) -> None:
        met = "yes" if ok else "NO"
        cpu, base_cpu = spent.get(jp_s), spent.get(base_s)
        note = ""
        if peaks.get(jp_s) and peaks.get(base_s):
            note = f"peak RSS {peaks[jp_s] / 1024:.0f} MiB, git {peaks[base_s] / 1024:.0f} MiB"
        name = f"sync {count:,}: {name}"
        results.add(
            Row(name, jp_s, base, base_s, target, met, note=note, cpu=cpu, base_cpu=base_cpu)
        )
        results.log(f"    CPU {cpu or 0:.2f} s, git {base_cpu or 0:.2f} s; {note or 'no peak'}")

    home_l, home_d = root / "home-l", root / "home-d"
    # git's first: after jp's push the store also holds a remote-tracking copy of each
    # ref, which a mirror would send as well (twice the refs jp sends)
    mirror_push = once(_git(laptop.gitdir, "push", "-q", "--mirror", str(mirror)), env_l, home_l)
    push_first = once([*jp, "push"], env_l, home_l)
    row("first push", push_first, "git push --mirror", mirror_push, "within 2x",
        push_first <= 2 * mirror_push)  # fmt: skip
    pull_first = once([*jp, "pull"], env_d, home_d)
    clone_argv = [
        "git",
        "clone",
        "-q",
        "--mirror",
        "--no-local",
        str(remote),
        str(root / "clone.git"),
    ]
    clone = once(clone_argv, env_d, home_d)
    row("first pull", pull_first, "git clone --mirror", clone, "within 3x", pull_first <= 3 * clone)
    old_jp: list[str] = []
    env_b, home_b = env_d, root / "home-b"
    if before is not None:  # the same first pull by another source tree, in the same run
        old = build.new_store(root / "before.git")
        env_b = clean_env(root / "home-b", old.path)
        (root / "home-b").mkdir()
        old_jp = [sys.executable, "-c", _BEFORE, str(before)]
        run_process([*old_jp, "remote", "add", "origin", str(remote)], env_b, root / "home-b")
        pull_old = once([*old_jp, "pull"], env_b, root / "home-b")
        row("first pull (before)", pull_old, "git clone --mirror", clone, "within 3x",
            pull_old <= 3 * clone)  # fmt: skip

    clone_git = root / "clone.git"
    one_ref = _git(clone_git, "fetch", "-q", str(remote), "+refs/notes/meta:refs/bench/meta")
    all_refs = _git(clone_git, "fetch", "-q", str(remote), "+refs/conversations/*:refs/bench/c/*")
    run_process(one_ref, env_d, home_d)
    run_process(all_refs, env_d, home_d)
    variants = {
        "jp": lambda: run_process([*jp, "pull"], env_d, home_d),
        "one": lambda: run_process(one_ref, env_d, home_d),
        "all": lambda: run_process(all_refs, env_d, home_d),
    }
    if old_jp:  # the other tree's no-op pull, alternated with this one's
        variants["before"] = lambda: run_process([*old_jp, "pull"], env_b, home_b)
    noop = interleaved(variants, runs)
    spent.update({noop[k]: noop.cpu[k] for k in variants})
    for key, argv in (("jp", [*jp, "pull"]), ("one", one_ref), ("all", all_refs)):
        peaks[noop[key]] = measured(argv, env_d, home_d)[1]  # one more run, for its peak
    if old_jp:
        row("no-op pull (before)", noop["before"], "git fetch of one ref", noop["one"],
            "within 2x", noop["before"] <= 2 * noop["one"])  # fmt: skip
    row("no-op pull", noop["jp"], "git fetch of one ref", noop["one"], "within 2x",
        noop["jp"] <= 2 * noop["one"])  # fmt: skip
    row("no-op pull", noop["jp"], "git fetch of every conversation ref", noop["all"],
        "faster at 10,000", noop["jp"] < noop["all"] or count < 10_000)  # fmt: skip

    changed = cids[:: max(1, len(cids) // CHANGED)][:CHANGED]
    names = [refs.live(c) for c in changed]
    plain_push = _git(laptop.gitdir, "push", "-q", str(mirror), *names)
    plain_fetch = _git(clone_git, "fetch", "-q", str(mirror), *(f"+{n}:{n}" for n in names))
    # first on the remotes as the first pushes left them (a loose file a ref), then as
    # a server's maintenance leaves them (`git gc` packs them into packed-refs)
    for packed in (False, True):
        if packed:
            for bare in (remote, mirror):
                run_process(_git(bare, "pack-refs", "--all"), env_l, home_l)
        tag = ", the remotes' refs packed" if packed else ""
        _change(laptop, changed)
        jp_push = once([*jp, "push"], env_l, home_l)
        git_push = once(plain_push, env_l, home_l)
        row(f"push of {CHANGED} changed{tag}", jp_push, f"git push of the {CHANGED} refs",
            git_push, "within 2x", jp_push <= 2 * git_push)  # fmt: skip
        jp_pull = once([*jp, "pull"], env_d, home_d)
        git_fetch = once(plain_fetch, env_d, home_d)
        if old_jp:
            old_pull = once([*old_jp, "pull"], env_b, home_b)
            row(f"pull of {CHANGED} changed{tag} (before)", old_pull,
                f"git fetch of the {CHANGED} refs", git_fetch, "within 2x",
                old_pull <= 2 * git_fetch)  # fmt: skip
        row(f"pull of {CHANGED} changed{tag}", jp_pull, f"git fetch of the {CHANGED} refs",
            git_fetch, "within 2x", jp_pull <= 2 * git_fetch)  # fmt: skip


def section(
    root: Path, sizes: tuple[int, ...], runs: int, results: Results, before: Path | None = None
) -> None:
    for count in sizes:
        folder = root / f"sync-{count}"
        folder.mkdir()
        size_section(folder, count, runs, results, before)


def main(argv: list[str] | None = None, log: Callable[[str], None] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--before", type=Path, help="a source tree whose first pull to compare")
    opts = parser.parse_args(argv)
    sizes = tuple(int(s) for s in opts.sizes.split(","))
    results = Results(log=log or (lambda text: print(text, file=sys.stderr)))
    with tempfile.TemporaryDirectory(prefix="jp-sync-bench-") as tmp:
        section(Path(tmp), sizes, opts.runs, results, opts.before)
    print(table(results.rows))


if __name__ == "__main__":
    main()
