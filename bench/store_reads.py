"""Section 8's reading rows on the big store of ``store_cases``: load and project
a conversation, fork it, start a review of it; each size against the smallest."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pygit2

from bench.baselines import JsonFile
from bench.common import Medians, Profile, Results, Row, clock, interleaved, median, verdict
from bench.store_cases import FLAT, BigStore, count_label
from gitstore.cache.db import Cache
from gitstore.store.core import Store

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
    label = f"load + project {count_label(size)} events"
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
    for key, how in (("warm", "cache built, new Store"), ("hot", "same Store again")):
        results.add(
            Row(
                f"{label}, {key} ({how})",
                medians[key],
                "read events.json (JP's layout)",
                medians["json"],
                "< 100 ms",
                verdict(medians[key] < 0.1),
                cpu=medians.cpu[key],
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
    flat_rows("fork", profile.sizes, medians, results)
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
    real = getattr(review_start, "summarize_counted")  # noqa: B009 (patched below)
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
    setattr(review_start, "summarize_counted", timed_summarize)  # noqa: B010
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
        setattr(review_start, "summarize_counted", real)  # noqa: B010
    for size in profile.review_sizes:
        # the start's own CPU, sample by sample: without the summarizer's, and without
        # the clean-up after the clock that the harness's CPU figure counts
        medians.cpu[str(size)] = median(own_cpu[size])
    flat_rows(
        "review start (turns 2-11), summarizer excluded", profile.review_sizes, medians, results
    )
    every = [t for size in profile.review_sizes for t in summarizer[size]]
    results.add(Row("  (the offline summarizer's time, excluded above)", median(every)))


def flat_rows(what: str, sizes: tuple[int, ...], medians: Medians, results: Results) -> None:
    small = str(min(sizes))
    for size in sizes:
        ratio = medians.cpu[str(size)] / medians.cpu[small]  # flatness: on CPU time
        ok = verdict(ratio <= FLAT) if size != min(sizes) else ""
        results.add(
            Row(
                f"{what}, {count_label(size)} events",
                medians[str(size)],
                f"{what}, {count_label(int(small))} events",
                medians[small],
                f"flat (CPU <= {FLAT}x)" if ok else "",
                ok,
                cpu=medians.cpu[str(size)],
                base_cpu=medians.cpu[small],
            )
        )
