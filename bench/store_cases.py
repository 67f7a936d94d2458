"""In-process benchmarks on one big store: its size and the append rows (load, fork
and review start on the same store: ``store_reads``)."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

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
    verdict,
)
from bench.synth import Writer
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


def count_label(n: int) -> str:
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
        results.log(f"  writing a conversation of {count_label(size)} events")
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
    label = f"store size, {count_label(size)} events"
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
    results.add(Row(f"maintenance of that store (git gc), {count_label(size)} events", took))
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
        label = f"append 1 event to {count_label(size)} events"
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
            f"append: {count_label(large)} events vs {count_label(small)}",
            medians[f"jp {large}"],
            f"append to {count_label(small)} events",
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
            f"append 1 event to {count_label(size)} events",
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
    label = f"append 1 event to {count_label(size)} events, fsync"
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
