"""In-process benchmarks on one big store: size, append, load, fork, review start."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pygit2

from bench import build
from bench.baselines import GitPlumbing, JsonFile, LooseFloor, RefFile, SqliteLog
from bench.common import (
    Medians,
    Profile,
    Results,
    Row,
    clock,
    disk_usage,
    interleaved,
    median,
    verdict,
)
from bench.synth import Writer
from gitstore.cache.db import Cache
from gitstore.events import Event
from gitstore.store.core import Store

FLAT = 1.5  # "flat": the largest size within this factor of the smallest


@dataclass
class BigStore:
    """The store of section 8's conversations, one per size."""

    root: Path
    store: Store
    convs: dict[int, str] = field(default_factory=dict)  # size -> id
    events: dict[int, list[Event]] = field(default_factory=dict)


def _label(n: int) -> str:
    return f"{n:,}"


def build_big(root: Path, profile: Profile, results: Results, sections: set[str]) -> BigStore:
    """Write the largest conversation, measure the store, maintain it, then the rest.

    Only the conversations that ``sections`` need are written.
    """
    store = build.new_store(root / "big.git")
    big = BigStore(root, store)
    wanted: set[int] = set()
    if sections & {"store", "append", "fork"}:
        wanted |= set(profile.sizes)
    if "load" in sections:
        wanted.add(profile.load_size)
    if "review" in sections:
        wanted |= set(profile.review_sizes)
    sizes = sorted(wanted)
    for n, size in enumerate(reversed(sizes)):
        cid = build.cid_for(1000 + n)
        results.log(f"  writing a conversation of {_label(size)} events")
        events = list(Writer(seed=size).events(cid, size))
        began = time.perf_counter()
        _write(store, cid, events)
        took = time.perf_counter() - began
        results.log(f"    {took:.1f} s")
        big.convs[size] = cid
        big.events[size] = events
        if n == 0 and "store" in sections:
            size_section(big, size, profile, results)
    return big


def _write(store: Store, cid: str, events: list[Event]) -> None:
    tip = build.write_events(store, events, None)
    assert tip is not None
    store.log.create(cid, [], tip, f"bench: {len(events)} events")
    build.fake_reflog(store, cid, tip, len(events))


# -- store size -------------------------------------------------------------------


def size_section(big: BigStore, size: int, profile: Profile, results: Results) -> None:
    store = big.store
    gitdir = store.gitdir
    cache = gitdir / "jp"
    folder = big.root / "jp-layout"
    JsonFile(folder, big.events[size], durable=False)
    json_bytes = (folder / "events.json").stat().st_size
    label = f"store size, {_label(size)} events"
    loose, _ = disk_usage(gitdir, exclude=[cache])
    results.add(
        Row(
            f"{label}, before maintenance (loose objects)",
            loose,
            "JP's events.json",
            json_bytes,
            "",
            "",
            unit="B",
        )
    )
    results.log("  appending at the largest size before maintenance")
    lone_append(big, size, results, profile.few(11), note="store not yet maintained")
    took = clock(lambda: maintain(store))
    after, _ = disk_usage(gitdir, exclude=[cache])
    results.add(
        Row(
            f"{label}, after jp's maintenance",
            after,
            "JP's events.json",
            json_bytes,
            "within 2x of events.json",
            verdict(after <= 2 * json_bytes),
            unit="B",
        )
    )
    cached, _ = disk_usage(cache)
    results.add(
        Row(
            f"{label}: jp's cache (SQLite, disposable)",
            cached,
            "JP's events.json",
            json_bytes,
            "",
            "",
            unit="B",
        )
    )
    results.add(Row(f"maintenance of that store (git gc), {_label(size)} events", took))
    shutil.rmtree(folder)


def maintain(store: Store) -> None:
    """jp's own maintenance, forced and waited for (before it existed: git gc)."""
    method = getattr(store.local, "maintain", None)
    if callable(method):
        method(force=True, wait=True)
    else:
        subprocess.run(["git", "--git-dir", str(store.gitdir), "gc", "--quiet"], check=True)


# -- append -------------------------------------------------------------------------


def append_section(big: BigStore, profile: Profile, results: Results) -> None:
    """Every size and every baseline in the same rounds, so drift hits them alike."""
    writer = Writer(seed=11, start=Writer(0).moment.replace(year=2026))
    work = big.root / "append"
    work.mkdir()
    variants: dict[str, Callable[[Event], float]] = {}
    budget: dict[str, float] = {}
    closing: list[SqliteLog] = []
    for size in profile.sizes:
        events = big.events[size]
        tip = big.store.refs.require(big.convs[size]).tip
        variants[f"jp {size}"] = _jp_appender(big, size)
        sqlite = SqliteLog(work / f"{size}.sqlite", events, durable=False)
        closing.append(sqlite)
        variants[f"sqlite {size}"] = sqlite.append
        variants[f"json {size}"] = JsonFile(work / f"jp-{size}", events, durable=False).append
        budget[f"json {size}"] = 5.0
        ref = f"refs/bench/plumbing-{size}"
        variants[f"git {size}"] = GitPlumbing(big.store.gitdir, ref, tip, False).append
    variants["ref"] = RefFile(work / "ref").append
    small_tip = big.store.refs.require(big.convs[min(profile.sizes)]).tip
    variants["floor"] = LooseFloor(big.store.gitdir, "refs/bench/floor", small_tip).append
    results.log(f"  {len(variants)} variants, {profile.rounds} rounds")
    medians = _rounds(writer, variants, profile.rounds, budget)
    for sqlite in closing:
        sqlite.close()
    shutil.rmtree(work)
    for size in profile.sizes:
        jp = medians[f"jp {size}"]
        label = f"append 1 event to {_label(size)} events"
        base = medians[f"sqlite {size}"]
        cpu = medians.cpu
        mine = cpu[f"jp {size}"]
        results.add(
            Row(
                label,
                jp,
                "SQLite insert, WAL, no fsync",
                base,
                "reference",
                cpu=mine,
                base_cpu=cpu[f"sqlite {size}"],
            )
        )
        results.add(
            Row(
                label,
                jp,
                "the floor of one commit per event",
                medians["floor"],
                "<= 2x the floor",
                verdict(jp <= 2 * medians["floor"]),
                cpu=mine,
                base_cpu=medians.cpu["floor"],
            )
        )
        json_file = medians[f"json {size}"]
        results.add(
            Row(
                label,
                jp,
                "rewrite events.json (JP's layout)",
                json_file,
                cpu=mine,
                base_cpu=cpu[f"json {size}"],
            )
        )
        results.add(
            Row(
                label,
                jp,
                "git plumbing, 4 processes",
                medians[f"git {size}"],
                cpu=mine,
                base_cpu=cpu[f"git {size}"],
            )
        )
    results.add(
        Row(
            "append 1 event (any size)",
            None,
            "replace a 41-byte file by rename",
            medians["ref"],
            note="the floor of a loose-ref update on this disk",
            base_cpu=medians.cpu["ref"],
        )
    )
    floor, floor_cpu = medians["floor"], medians.cpu["floor"]
    results.add(
        Row(
            "one commit per event, the least it costs",
            floor,
            "SQLite insert, WAL, no fsync",
            medians[f"sqlite {min(profile.sizes)}"],
            note="3 loose objects, ref, reflog; plain syscalls",
            cpu=floor_cpu,
            base_cpu=medians.cpu[f"sqlite {min(profile.sizes)}"],
        )
    )
    small, large = min(profile.sizes), max(profile.sizes)
    ratio = medians.cpu[f"jp {large}"] / medians.cpu[f"jp {small}"]  # flatness: on CPU time
    results.add(
        Row(
            f"append: {_label(large)} events vs {_label(small)}",
            medians[f"jp {large}"],
            f"append to {_label(small)} events",
            medians[f"jp {small}"],
            f"flat (CPU <= {FLAT}x)",
            verdict(ratio <= FLAT),
            cpu=medians.cpu[f"jp {large}"],
            base_cpu=medians.cpu[f"jp {small}"],
        )
    )
    results.log("  appending with fsync")
    durable_rows(big, large, results, profile.few(max(5, profile.rounds // 3)))


def _jp_appender(big: BigStore, size: int, fsync: bool = False) -> Callable[[Event], float]:
    """``store.log.append`` of one event to the conversation of ``size`` events, timed."""
    store, cid = big.store, big.convs[size]
    tip = store.refs.require(cid).tip

    def append(event: Event) -> float:
        nonlocal tip
        if fsync:
            pygit2.settings.enable_fsync_gitdir(True)
        try:
            start = time.perf_counter()
            tip = store.log.append(cid, [event], tip, f"jp query {cid}")
            return time.perf_counter() - start
        finally:
            if fsync:
                pygit2.settings.enable_fsync_gitdir(False)

    return append


def lone_append(big: BigStore, size: int, results: Results, rounds: int, note: str) -> None:
    writer = Writer(seed=size + 1, start=Writer(0).moment.replace(year=2026))
    medians = _rounds(writer, {"jp": _jp_appender(big, size)}, rounds, {})
    results.add(
        Row(
            f"append 1 event to {_label(size)} events",
            medians["jp"],
            note=note,
            cpu=medians.cpu["jp"],
        )
    )


def durable_rows(big: BigStore, size: int, results: Results, rounds: int) -> None:
    """The same comparison with every writer syncing to disk (power-loss safe)."""
    work = big.root / "durable"
    work.mkdir(exist_ok=True)
    writer = Writer(seed=size + 2, start=Writer(0).moment.replace(year=2027))
    tip = big.store.refs.require(big.convs[size]).tip
    sqlite = SqliteLog(work / "events.sqlite", big.events[size][:1000], durable=True)
    git = GitPlumbing(big.store.gitdir, "refs/bench/plumbing-durable", tip, True)
    variants: dict[str, Callable[[Event], float]] = {
        "jp": _jp_appender(big, size, fsync=True),
        "sqlite": sqlite.append,
        "git": git.append,
    }
    medians = _rounds(writer, variants, rounds, {})
    label = f"append 1 event to {_label(size)} events, fsync"
    results.add(
        Row(
            label,
            medians["jp"],
            "SQLite insert, WAL, synchronous=FULL",
            medians["sqlite"],
            "reference",
            cpu=medians.cpu["jp"],
            base_cpu=medians.cpu["sqlite"],
        )
    )
    results.add(
        Row(
            label,
            medians["jp"],
            "git plumbing, core.fsync=committed",
            medians["git"],
            cpu=medians.cpu["jp"],
            base_cpu=medians.cpu["git"],
        )
    )
    sqlite.close()
    shutil.rmtree(work)


def _rounds(
    writer: Writer,
    variants: dict[str, Callable[[Event], float]],
    rounds: int,
    budget: dict[str, float],
) -> Medians:
    """Each call appends a fresh 2 KB assistant message, made outside the clock.

    Fresh for every writer, so that no writer finds its objects already stored.
    """

    def bind(fn: Callable[[Event], float]) -> Callable[[], float]:
        # made before any clock starts, so that CPU time does not count them
        ready = [writer.message_of_size(2048) for _ in range(rounds + 1)]
        return lambda: fn(ready.pop() if ready else writer.message_of_size(2048))

    return interleaved({n: bind(f) for n, f in variants.items()}, rounds, budget)


# -- load and project ------------------------------------------------------------------


def load_section(big: BigStore, profile: Profile, results: Results) -> None:
    from porcelain.domain.view import model_events

    size = profile.load_size
    cid = big.convs[size]
    path = big.store.path
    folder = big.root / "load-json"
    JsonFile(folder, big.events[size], durable=False)
    rounds = profile.few(profile.rounds // 3)

    def jp_cold() -> float:
        """A new process's view with no cache at all: walk git, fill a new cache."""
        scratch = big.root / "cold-cache"
        shutil.rmtree(scratch, ignore_errors=True)
        start = time.perf_counter()
        store = Store(path)
        # a new, empty cache beside the store's own, which the warm rows keep using
        # (no caller may swap a store's cache: the bench reaches its ground for it)
        store._ground.cache = Cache(scratch)
        model_events(store.log.load(cid).events)
        took = time.perf_counter() - start
        store.close()
        return took

    def jp_warm() -> float:
        """A new process's view with the cache built: a fresh Store each time."""
        start = time.perf_counter()
        store = Store(path)
        model_events(store.log.load(cid).events)
        took = time.perf_counter() - start
        store.close()
        return took

    def raw_walk() -> float:
        """The floor for reading git: pygit2 walk, blob, json.loads; fresh Repository."""
        start = time.perf_counter()
        repo = pygit2.Repository(str(path))
        commit = repo.references[f"refs/conversations/{cid}"].peel(pygit2.Commit)
        out = []
        while True:
            blob = repo[commit.tree["event.json"].id]
            assert isinstance(blob, pygit2.Blob)
            out.append(json.loads(blob.data))
            if not commit.parent_ids:
                break
            commit = repo[commit.parent_ids[0]].peel(pygit2.Commit)
        model_events(out[::-1])
        return time.perf_counter() - start

    def json_file() -> float:
        """JP's layout: read and parse events.json, project the same way."""
        start = time.perf_counter()
        events = json.loads((folder / "events.json").read_bytes())
        model_events(events)
        return time.perf_counter() - start

    def hot() -> float:
        """The same Store loading again (a long-lived process)."""
        return clock(lambda: model_events(held.log.load(cid).events))

    held = Store(path)
    held.log.load(cid)
    medians = interleaved(
        {"cold": jp_cold, "warm": jp_warm, "walk": raw_walk, "json": json_file, "hot": hot},
        rounds,
    )
    label = f"load + project {_label(size)} events"
    results.add(
        Row(
            f"{label}, cold (no cache)",
            medians["cold"],
            "pygit2 walk + json.loads (no cache)",
            medians["walk"],
            cpu=medians.cpu["cold"],
            base_cpu=medians.cpu["walk"],
        )
    )
    results.add(
        Row(
            f"{label}, warm (cache built, new Store)",
            medians["warm"],
            "read events.json (JP's layout)",
            medians["json"],
            "< 100 ms",
            verdict(medians["warm"] < 0.1),
            cpu=medians.cpu["warm"],
            base_cpu=medians.cpu["json"],
        )
    )
    results.add(
        Row(
            f"{label}, hot (same Store again)",
            medians["hot"],
            "read events.json (JP's layout)",
            medians["json"],
            "< 100 ms",
            verdict(medians["hot"] < 0.1),
            cpu=medians.cpu["hot"],
            base_cpu=medians.cpu["json"],
        )
    )
    held.close()
    shutil.rmtree(folder)


# -- fork and review start --------------------------------------------------------------


def fork_section(big: BigStore, profile: Profile, results: Results) -> None:
    from porcelain.app.lifecycle import fork

    store = big.store
    made: list[str] = []

    def one(size: int) -> Callable[[], float]:
        def run() -> float:
            start = time.perf_counter()
            made.append(fork(store, store.refs.require(big.convs[size]))[0])
            return time.perf_counter() - start

        return run

    medians = interleaved({str(s): one(s) for s in profile.sizes}, profile.rounds)
    _flat_rows("fork", profile.sizes, medians, results)
    for cid in made:
        store.refs.delete(cid, "bench: clean up")


def review_section(big: BigStore, profile: Profile, results: Results, home: Path) -> None:
    """`compact --interactive`'s start on the offline model, its summarizer time taken out."""
    from porcelain.app.review import start as review_start
    from porcelain.config import load_config
    from porcelain.domain.compaction.ranges import RangeOverrides

    store = big.store
    config = load_config(
        environ={"HOME": str(home), "XDG_CONFIG_HOME": str(home / "config")},
        store_config=None,
        files=[],
        overrides=[],
    )
    real = getattr(review_start, "summarize")  # noqa: B009 (patched below)
    model_time = [0.0, 0.0]  # wall, CPU

    def timed_summarize(*args: Any, **kwargs: Any) -> Any:
        start, cpu = time.perf_counter(), time.process_time()
        try:
            return real(*args, **kwargs)
        finally:
            model_time[0] += time.perf_counter() - start
            model_time[1] += time.process_time() - cpu

    def one(size: int) -> Callable[[], float]:
        def run() -> float:
            model_time[:] = [0.0, 0.0]
            source = store.refs.require(big.convs[size])
            start, cpu = time.perf_counter(), time.process_time()
            started = review_start.start_review(
                store,
                source,
                config,
                RangeOverrides(turn=(2, 11)),
                "offline/bench",
                "offline/bench",
            )
            took = time.perf_counter() - start - model_time[0]
            own_cpu[size].append(time.process_time() - cpu - model_time[1])
            summarizer[size].append(model_time[0])
            store.refs.delete(started.review_id, "bench: clean up")
            return took

        return run

    summarizer: dict[int, list[float]] = {s: [] for s in profile.review_sizes}
    own_cpu: dict[int, list[float]] = {s: [] for s in profile.review_sizes}
    setattr(review_start, "summarize", timed_summarize)  # noqa: B010
    try:
        one(min(profile.review_sizes))()  # first use imports the review modules
        for size in profile.review_sizes:  # the cache as any command after the first finds it
            store.log.view_chain(store.refs.require(big.convs[size]).tip)
        medians = interleaved(
            {str(s): one(s) for s in profile.review_sizes},
            profile.few(profile.rounds),
            {str(max(profile.review_sizes)): 20.0},
            warmup=False,
        )
    finally:
        setattr(review_start, "summarize", real)  # noqa: B010
    for size in profile.review_sizes:
        # the start's own CPU, sample by sample: without the summarizer's, and without
        # the clean-up after the clock that the harness's CPU figure counts
        medians.cpu[str(size)] = median(own_cpu[size])
    _flat_rows(
        "review start (turns 2-11), summarizer excluded", profile.review_sizes, medians, results
    )
    every = [t for size in profile.review_sizes for t in summarizer[size]]
    results.add(Row("  (the offline summarizer's time, excluded above)", median(every)))


def _flat_rows(what: str, sizes: tuple[int, ...], medians: Medians, results: Results) -> None:
    small = str(min(sizes))
    for size in sizes:
        ratio = medians.cpu[str(size)] / medians.cpu[small]  # flatness: on CPU time
        ok = verdict(ratio <= FLAT) if size != min(sizes) else ""
        results.add(
            Row(
                f"{what}, {_label(size)} events",
                medians[str(size)],
                f"{what}, {_label(int(small))} events",
                medians[small],
                f"flat (CPU <= {FLAT}x)" if ok else "",
                ok,
                cpu=medians.cpu[str(size)],
                base_cpu=medians.cpu[small],
            )
        )
