"""Timing, the result table, and the environment the benchmarks run in."""

from __future__ import annotations

import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WARMUP = True  # whether ``interleaved`` runs a first, unrecorded round (run.py sets it)
VENV_BIN = Path(sys.executable).parent


@dataclass(frozen=True)
class Profile:
    """How big and how often: ``full`` is the real run, ``quick`` and ``smoke`` shrink it."""

    name: str
    sizes: tuple[int, ...]  # events per conversation for append and fork
    load_size: int  # the conversation that is loaded and projected
    conversations: int  # for `ls` and `show`
    review_sizes: tuple[int, ...]
    rounds: int  # samples per in-process measurement
    runs: int  # samples per whole-process measurement
    fixtures: int | None  # how many JP conversations to import (None: all)
    least: int = 3  # the fewest samples of anything
    warmup: bool = True  # an unrecorded first round

    def few(self, n: int) -> int:
        """``n`` samples, within what this profile allows."""
        return max(self.least, min(n, self.rounds))


PROFILES = {
    "full": Profile(
        "full",
        (10, 1_000, 10_000, 100_000),
        10_000,
        10_000,
        (100, 1_000, 10_000, 100_000),
        31,
        7,
        None,
    ),
    "quick": Profile(
        "quick", (10, 1_000, 10_000), 10_000, 2_000, (100, 1_000, 10_000), 15, 5, None
    ),
    "smoke": Profile("smoke", (10, 200), 200, 30, (100, 200), 2, 1, 2, least=1, warmup=False),
}


@dataclass
class Row:
    """One comparison: a jp figure against a baseline measured in the same run."""

    bench: str
    jp: float | None  # seconds, or bytes when unit == "B"
    baseline: str = ""
    base: float | None = None
    target: str = ""
    met: str = ""
    unit: str = "s"
    note: str = ""
    cpu: float | None = None  # median CPU seconds of the jp figure
    base_cpu: float | None = None

    @property
    def ratio(self) -> float | None:
        if self.jp is None or not self.base:
            return None
        return self.jp / self.base


@dataclass
class Results:
    rows: list[Row] = field(default_factory=list)
    log: Callable[[str], None] = lambda _: None

    def add(self, row: Row) -> Row:
        self.rows.append(row)
        self.log(
            f"  {row.bench}: {show(row.jp, row.unit)}"
            + (f" ({row.baseline}: {show(row.base, row.unit)})" if row.baseline else "")
        )
        return row


def median(samples: Sequence[float]) -> float:
    return statistics.median(samples)


def clock(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


class Medians(dict[str, float]):
    """Median wall seconds per variant; ``cpu`` holds the median CPU seconds.

    CPU time counts this process and the processes it waited for (user +
    system), setup included; unlike wall time it hardly grows when other
    processes compete for the cores, so it says what an idle machine would
    take, less the time spent waiting for the disk.
    """

    def __init__(self, wall: dict[str, float], cpu: dict[str, float]) -> None:
        super().__init__(wall)
        self.cpu = cpu


def cpu_now() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def interleaved(
    variants: Mapping[str, Callable[[], float]],
    rounds: int,
    budget: Mapping[str, float] | None = None,
    warmup: bool | None = None,
) -> Medians:
    """Median seconds of each variant, run in turn round after round.

    Each callable does one operation and returns the seconds it measured
    itself (so that setup can stay outside the clock).  Interleaving keeps a
    noisy neighbour from landing on one variant only.  A variant with a
    ``budget`` (seconds) stops taking samples once it has used it up, with at
    least three samples.  A first, unrecorded round warms caches up; the
    order changes from round to round.
    """
    budget = budget or {}
    warmup = WARMUP if warmup is None else warmup
    samples: dict[str, list[float]] = {name: [] for name in variants}
    cpu: dict[str, list[float]] = {name: [] for name in variants}
    if warmup:
        for fn in variants.values():
            fn()
    order = list(variants.items())
    shuffle = random.Random(0).shuffle
    for _ in range(rounds):
        shuffle(order)  # no variant always follows the same neighbour
        for name, fn in order:
            spent = sum(samples[name])
            if name in budget and len(samples[name]) >= 3 and spent > budget[name]:
                continue
            before = cpu_now()
            samples[name].append(fn())
            cpu[name].append(cpu_now() - before)
    return Medians(
        {name: median(values) for name, values in samples.items()},
        {name: median(values) for name, values in cpu.items()},
    )


def verdict(ok: bool) -> str:
    return "yes" if ok else "**no**"


def show(value: float | None, unit: str = "s") -> str:
    if value is None:
        return "-"
    if unit == "B":
        for scale, name in ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
            if value >= scale:
                return f"{value / scale:.1f} {name}"
        return f"{value:.0f} B"
    if unit == "x":
        return f"{value:.2f}x"
    if value >= 1:
        return f"{value:.2f} s"
    if value >= 0.001:
        return f"{value * 1000:.1f} ms" if value < 0.1 else f"{value * 1000:.0f} ms"
    return f"{value * 1e6:.0f} µs"


def _with_cpu(value: float | None, cpu: float | None, unit: str) -> str:
    text = show(value, unit)
    return text if cpu is None or value is None else f"{text} (CPU {show(cpu, unit)})"


def _ratio(row: Row) -> str:
    if row.ratio is None:
        return "-"
    text = f"{row.ratio:.2f}x"
    if row.cpu is not None and row.base_cpu:
        text += f" (CPU {row.cpu / row.base_cpu:.2f}x)"
    return text


def table(rows: Sequence[Row]) -> str:
    """The one table, as Markdown."""
    head = [
        "benchmark",
        "jp (median)",
        "baseline",
        "baseline (median)",
        "jp / baseline",
        "target",
        "met",
    ]
    body = [
        [
            r.bench + (f" ({r.note})" if r.note else ""),
            _with_cpu(r.jp, r.cpu, r.unit),
            r.baseline or "-",
            _with_cpu(r.base, r.base_cpu, r.unit) if r.baseline else "-",
            _ratio(r),
            r.target or "-",
            r.met or "-",
        ]
        for r in rows
    ]
    widths = [max(len(h), *(len(line[i]) for line in body)) for i, h in enumerate(head)]

    def fmt(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    lines = [fmt(head), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += [fmt(line) for line in body]
    return "\n".join(lines)


# -- the machine and the processes --------------------------------------------------


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kib / 2**20:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    git = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    import pygit2

    return (
        f"{cpu}, {os.cpu_count()} cores{mem}; {platform.system()} {platform.release()}; "
        f"Python {platform.python_version()}, pygit2 {getattr(pygit2, '__version__', '?')} "
        f"(libgit2 {pygit2.LIBGIT2_VERSION}), {git or 'no git'}, "
        f"SQLite {__import__('sqlite3').sqlite_version}"
    )


def clean_env(home: Path, store: Path | None = None) -> dict[str, str]:
    """An environment for `jp` processes: no API key, no user configuration.

    Bytecode is written and reused, as in any installation (an inherited
    PYTHONDONTWRITEBYTECODE would make every process recompile what changed).
    """
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "JP_", "GIT_", "XDG_"))
        and k != "PYTHONDONTWRITEBYTECODE"
    }
    env.update(
        {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / "config"),
            "XDG_DATA_HOME": str(home / "data"),
            "PATH": f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}",
            "GIT_CONFIG_NOSYSTEM": "1",
        }
    )
    if store is not None:
        env["JP_STORE"] = str(store)
    return env


def jp_command() -> list[str]:
    found = VENV_BIN / "jp"
    if found.exists():
        return [str(found)]
    which = shutil.which("jp")
    if which:
        return [which]
    return [sys.executable, "-c", "from porcelain.cli import main; main()"]


def run_process(argv: Sequence[str], env: Mapping[str, str], cwd: Path) -> float:
    """Wall time of one whole process; a failure stops the benchmark."""
    start = time.perf_counter()
    done = subprocess.run(list(argv), env=dict(env), cwd=cwd, capture_output=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.decode(errors='replace')}"
        )
    return elapsed


def disk_usage(path: Path, exclude: Sequence[Path] = ()) -> tuple[int, int]:
    """(bytes on disk, apparent bytes) of everything under ``path``."""
    skip = {p.resolve() for p in exclude}
    blocks = apparent = 0
    for folder, dirs, files in os.walk(path):
        here = Path(folder)
        dirs[:] = [d for d in dirs if (here / d).resolve() not in skip]
        for name in files:
            full = here / name
            if full.resolve() in skip:
                continue
            try:
                st = full.lstat()
            except OSError:
                continue
            blocks += st.st_blocks * 512
            apparent += st.st_size
    return blocks, apparent
