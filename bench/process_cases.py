"""Whole `jp` processes: start-up, `ls` and `show` with many conversations, import."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from bench import build
from bench.common import (
    Profile,
    Results,
    Row,
    clean_env,
    clock,
    interleaved,
    jp_command,
    run_process,
    verdict,
)
from gitstore.store.core import Store

START_LIMIT = 0.15
FLAT = 1.5
LS_LIMIT = 0.5
HEAVY = ("anthropic", "pydantic", "tomlkit")


def heavy_imports(argv: list[str], env: dict[str, str], cwd: Path) -> list[str]:
    """Which of the heavy packages a `jp` command imports (``-X importtime``)."""
    script = jp_command()
    if len(script) != 1:
        return []
    done = subprocess.run(
        [sys.executable, "-X", "importtime", script[0], *argv],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
    )
    found = set()
    for line in done.stderr.splitlines():
        name = line.rsplit("|", 1)[-1].strip()
        top = name.split(".", 1)[0]
        if top in HEAVY:
            found.add(top)
    return sorted(found)


def startup_section(root: Path, profile: Profile, results: Results) -> None:
    home = root / "home-start"
    home.mkdir()
    store = build.new_store(root / "small.git")
    cid = build.cid_for(5)
    build.conversation(store, cid, 1 + 3 * 8, seed=5)
    store.refs.set_active(cid)
    env = clean_env(home, store.path)
    jp = jp_command()
    commands = {
        "jp --help": ["--help"],
        "jp conversation ls": ["conversation", "ls"],
        "jp conversation show": ["conversation", "show"],
        "jp conversation print": ["conversation", "print"],
    }
    python = [sys.executable, "-c", "pass"]

    def runner(argv: list[str]) -> Callable[[], float]:
        return lambda: run_process(argv, env, home)

    variants = {name: runner([*jp, *args]) for name, args in commands.items()}
    variants["python"] = runner(python)
    # short processes: three times the samples, since one slow minute moves a median of 7
    medians = interleaved(variants, profile.few(3 * profile.runs))
    for name, args in commands.items():
        heavy = heavy_imports(args, env, home)
        sdk = "anthropic" in heavy
        note = "imports " + ", ".join(heavy) if heavy else ""
        ok = medians[name] < START_LIMIT and not sdk
        met = verdict(ok) + (" (SDK imported)" if sdk else "")
        results.add(
            Row(
                f"process: {name}",
                medians[name],
                "python -c pass",
                medians["python"],
                f"< {START_LIMIT * 1000:.0f} ms, no SDK import",
                met,
                note=note,
                cpu=medians.cpu[name],
                base_cpu=medians.cpu["python"],
            )
        )


def many_section(root: Path, profile: Profile, results: Results) -> None:
    count = profile.conversations
    results.log(f"  building {count:,} conversations")
    store = build.new_store(root / "many.git")
    took = clock(lambda: _fill(store, count, results))
    results.log(f"    {took:.1f} s")
    gitdir = store.gitdir
    home = root / "home-many"
    home.mkdir()
    env = clean_env(home, store.path)
    jp = jp_command()
    target = build.cid_for(count // 2)
    git = ["git", "--git-dir", str(gitdir)]
    cache = gitdir / "jp" / "cache.sqlite"

    def cold_ls() -> float:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{cache}{suffix}").unlink(missing_ok=True)
        return run_process([*jp, "conversation", "ls"], env, home)

    cold = interleaved({"ls": cold_ls}, profile.few(profile.runs // 2), warmup=False)
    results.add(
        Row(
            f"process: jp conversation ls, {count:,} conversations, no cache",
            cold["ls"],
            cpu=cold.cpu["ls"],
        )
    )
    variants = {
        "ls": lambda: run_process([*jp, "conversation", "ls"], env, home),
        "show": lambda: run_process([*jp, "conversation", "show", target], env, home),
        "git ls": lambda: run_process(
            [*git, "for-each-ref", "--format=%(refname:short) %(subject)", "refs/conversations/"],
            env,
            home,
        ),
        "git show": lambda: run_process(
            [*git, "log", "--format=%h %s", f"refs/conversations/{target}"], env, home
        ),
    }
    medians = interleaved(variants, profile.few(profile.runs))
    results.add(
        Row(
            f"process: jp conversation ls, {count:,} conversations",
            medians["ls"],
            "git for-each-ref with subjects",
            medians["git ls"],
            f"< {LS_LIMIT} s",
            verdict(medians["ls"] < LS_LIMIT),
            cpu=medians.cpu["ls"],
            base_cpu=medians.cpu["git ls"],
        )
    )
    results.add(
        Row(
            f"process: jp conversation show, {count:,} conversations",
            medians["show"],
            "git log of that conversation",
            medians["git show"],
            f"< {LS_LIMIT} s",
            verdict(medians["show"] < LS_LIMIT),
            cpu=medians.cpu["show"],
            base_cpu=medians.cpu["git show"],
        )
    )
    fork_titled(root, store, target, profile, results)


def fork_titled(root: Path, store: Store, target: str, profile: Profile, results: Results) -> None:
    """Fork a titled conversation (the title is carried over) among many titled ones,
    against the same fork in a store that holds only that conversation."""
    from porcelain.app.lifecycle import fork

    lone = build.new_store(root / "lone.git")
    cid = build.cid_for(1)
    build.conversation(lone, cid, 1 + 8, seed=3)
    lone.notes.set_meta(cid, {"title": "Synthetic conversation"}, "bench: title")
    made: list[tuple[Store, str]] = []

    def one(where: Store, source: str) -> Callable[[], float]:
        def run() -> float:
            start = time.perf_counter()
            made.append((where, fork(where, where.refs.require(source))[0]))
            return time.perf_counter() - start

        return run

    count = len(store.refs.list())
    medians = interleaved({"many": one(store, target), "lone": one(lone, cid)}, profile.few(9))
    results.add(
        Row(
            f"fork a titled conversation, {count:,} titled conversations in the store",
            medians["many"],
            "the same fork, store of 1 conversation",
            medians["lone"],
            f"flat (CPU <= {FLAT}x)",
            verdict(medians.cpu["many"] <= FLAT * medians.cpu["lone"]),
            cpu=medians.cpu["many"],
            base_cpu=medians.cpu["lone"],
        )
    )
    for where, made_id in made:
        where.refs.delete(made_id, "bench: clean up")
    lone.close()


def _fill(store: Store, count: int, results: Results) -> None:
    from bench.store_cases import maintain

    build.many_conversations(store, count, results.log)
    maintain(store)  # what jp's own maintenance leaves behind


def import_section(root: Path, profile: Profile, results: Results, fixtures: Path) -> None:
    from porcelain.app.transfer import store_imported
    from porcelain.jpformat import read_conversation, scan_conversation

    if not fixtures.is_dir():
        results.add(Row("import JP conversations", None, note=f"skipped: no {fixtures}"))
        return
    folders = sorted(p for p in fixtures.iterdir() if (p / "events.json").is_file())
    if profile.fixtures is not None:
        folders = folders[: profile.fixtures]
    if not folders:
        results.add(Row("import JP conversations", None, note=f"skipped: {fixtures} is empty"))
        return
    work = root / "import"
    work.mkdir()
    stores = iter(range(1_000_000))
    events = [0]

    def jp() -> float:
        store = build.new_store(work / f"s{next(stores)}.git")
        start = time.perf_counter()
        total = 0
        for folder in folders:
            scanned = scan_conversation(folder)  # as `jp conversation import` reads it
            store_imported(store, scanned)
            total += len(scanned.events)
        took = time.perf_counter() - start
        events[0] = total
        store.close()
        return took

    def jp_layout() -> float:
        """Read the same folders and write each as JP would keep it (events.json)."""
        out = work / f"j{next(stores)}"
        start = time.perf_counter()
        for n, folder in enumerate(folders):
            conv = read_conversation(folder)
            dest = out / str(n)
            dest.mkdir(parents=True)
            data = json.dumps(conv.events, indent=2, ensure_ascii=False) + "\n"
            (dest / "events.json").write_text(data)
        return time.perf_counter() - start

    medians = interleaved({"jp": jp, "layout": jp_layout}, profile.few(profile.runs // 2))
    results.add(
        Row(
            f"import {len(folders)} JP conversations ({events[0]:,} events)",
            medians["jp"],
            "read them + write events.json files",
            medians["layout"],
            cpu=medians.cpu["jp"],
            base_cpu=medians.cpu["layout"],
        )
    )
    shutil.rmtree(work)
