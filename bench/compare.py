"""This tree against another revision of jp, timed in pairs in one run.

    .venv/bin/python bench/compare.py --against 3ba0708            # process rows
    .venv/bin/python bench/compare.py --against 3ba0708 --inproc load --inproc import

The other revision is checked out into a temporary worktree (``git worktree
add --detach``).  By default both trees run on this interpreter, each with its
own folder first on ``PYTHONPATH`` (checked: each side's ``porcelain`` is
imported from its own tree); ``--venv`` builds the other tree its own venv
instead (``pip install -e``, which needs PyPI).

Process rows: the same commands of both trees (``jp --help``; ``ls``, ``show``
and ``print`` on a small store each side builds with its own code; an import
of the JP fixtures into an empty store each time) run alternately, old then
new or new then old, round after round; each figure is the median CPU time of
the process and its children (``wait4``), and the wall time beside it.
``--instructions`` also runs each process row once per side under valgrind's
callgrind and reports the instructions it executed in user space: a count the
machine's load does not move (CPU times under a load of 10 spread by 10%),
blind to the system's share (file creation, fsync) that the CPU column holds.
In-process rows (``--inproc SECTION``): each tree's own ``bench/run.py --only
SECTION`` in a child process, alternately, rows matched by name, the median of
each row's CPU figure over the runs.  Prints one Markdown table: new / old.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import ROOT, clean_env, machine, show

FIXTURES = ROOT.parent / "shared" / "fixtures" / "jp-conversations"
CLI = "import sys; from porcelain.cli import main; sys.exit(main())"
# built by each side's own bench code: a store with one conversation of 25 events, active
SMALL_STORE = """
import sys
from pathlib import Path
from bench import build
store = build.new_store(Path(sys.argv[1]))
cid = build.cid_for(5)
build.conversation(store, cid, 1 + 3 * 8, seed=5)
(getattr(store, "set_active", None) or store.refs.set_active)(cid)
getattr(store, "close", lambda: None)()
"""
EMPTY_STORES = """
import sys
from pathlib import Path
from bench import build
for path in sys.argv[1:]:
    store = build.new_store(Path(path))
    getattr(store, "close", lambda: None)()
"""


@dataclass
class Side:
    """One tree: its folder and the interpreter that runs it."""

    name: str
    tree: Path
    python: str
    work: Path
    samples: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    instructions: dict[str, int] = field(default_factory=dict)

    def env(self, home: Path, store: Path | None = None) -> dict[str, str]:
        env = clean_env(home, store)
        env["PYTHONPATH"] = str(self.tree)
        env["PATH"] = f"{Path(self.python).parent}{os.pathsep}{env['PATH']}"
        return env

    def run(self, argv: Sequence[str], what: str) -> str:
        """Its output; a failure stops the comparison."""
        done = subprocess.run(
            list(argv), env=self.env(self.work), cwd=self.tree, capture_output=True, text=True
        )
        if done.returncode != 0:
            raise SystemExit(f"error: the {self.name} side's {what} failed: {done.stderr[-2000:]}")
        return done.stdout

    def python_run(self, code: str, *args: str) -> None:
        self.run([self.python, "-c", code, *args], "setup")

    def check(self) -> None:
        """That this side imports its own tree's code, not the other's."""
        done = subprocess.run(
            [self.python, "-c", "import porcelain, gitstore; print(porcelain.__file__)"],
            env=self.env(self.work),
            cwd=self.work,
            capture_output=True,
            text=True,
            check=True,
        )
        found = Path(done.stdout.strip()).resolve()
        if not found.is_relative_to(self.tree.resolve()):
            raise SystemExit(f"error: the {self.name} side imports {found}, not its tree")


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def timed(argv: Sequence[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(wall, CPU of the process and its children) of one whole process."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        list(argv), env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read() if proc.stderr else b""
    if proc.stderr:
        proc.stderr.close()
    if proc.returncode != 0:
        raise SystemExit(f"error: {' '.join(argv)} failed: {err.decode(errors='replace')}")
    return wall, usage.ru_utime + usage.ru_stime


COLLECTED = re.compile(r"Collected : (\d+)")


def counted(argv: Sequence[str], env: dict[str, str], cwd: Path) -> int:
    """The user-space instructions one whole process executed (callgrind's count)."""
    tool = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
    done = subprocess.run(
        [*tool, *argv], env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    found = COLLECTED.search(done.stderr.decode(errors="replace"))
    if done.returncode != 0 or found is None:
        raise SystemExit(f"error: {' '.join(argv)} under callgrind failed")
    return int(found.group(1))


def checkout(rev: str, where: Path) -> Path:
    tree = where / f"jp-{rev}"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), rev],
        check=True,
        capture_output=True,
    )
    return tree


def own_venv(tree: Path) -> str:
    venv = tree / ".venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, "-e", str(tree)], check=True)
    return str(venv / "bin" / "python")


def process_rows(
    sides: Sequence[Side], runs: int, fixtures: Path, instructions: bool = False
) -> list[str]:
    folders = sorted(str(p) for p in fixtures.iterdir() if (p / "events.json").is_file())
    commands: dict[str, list[str]] = {
        "jp --help": ["--help"],
        "jp conversation ls": ["conversation", "ls"],
        "jp conversation show": ["conversation", "show"],
        "jp conversation print": ["conversation", "print"],
    }
    stores: dict[str, list[Path]] = {}
    for side in sides:
        log(f"  {side.name}: building its stores")
        side.python_run(SMALL_STORE, str(side.work / "small.git"))
        # one empty store per round, and one for the count under callgrind
        stores[side.name] = [side.work / f"import{n}.git" for n in range(runs + 2)]
        side.python_run(EMPTY_STORES, *map(str, stores[side.name]))
    names = [*commands, "python -c pass"] + ([f"import {len(folders)} JP folders"] * bool(folders))
    order = random.Random(0)

    def command(side: Side, name: str, round_: int) -> tuple[list[str], dict[str, str]]:
        env = side.env(side.work, side.work / "small.git")
        if name == "python -c pass":
            return [side.python, "-c", "pass"], env
        if name.startswith("import"):
            env = side.env(side.work, stores[side.name][round_])
            return [side.python, "-c", CLI, "conversation", "import", *folders], env
        return [side.python, "-c", CLI, *commands[name]], env

    for round_ in range(runs + 1):  # the first round warms up and is not kept
        log(f"  round {round_}/{runs}")
        for name in names:
            pair = list(sides)
            order.shuffle(pair)
            for side in pair:
                sample = timed(*command(side, name, round_), side.work)
                if round_:
                    side.samples.setdefault(name, []).append(sample)
    if instructions:
        log("  instructions (callgrind), one run of each row and side")
        for name in names:
            for side in sides:
                argv, env = command(side, name, runs + 1)
                side.instructions[name] = counted(argv, env, side.work)
    return names


NUMBER = re.compile(r"([\d.,]+) (s|ms|µs)")
SCALE = {"s": 1.0, "ms": 1e-3, "µs": 1e-6}


def parse_table(text: str) -> dict[str, tuple[float, float]]:
    """Row name -> (wall, CPU) of the jp column of a bench/run.py table."""
    rows: dict[str, tuple[float, float]] = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 2 or cells[0] in ("benchmark", "") or cells[0].startswith("-"):
            continue
        found = NUMBER.findall(cells[1])
        if not found:
            continue
        values = [float(v.replace(",", "")) * SCALE[u] for v, u in found]
        rows[cells[0]] = (values[0], values[-1])
    return rows


def inproc_rows(
    sides: Sequence[Side], sections: Sequence[str], runs: int, profile: str, fixtures: Path
) -> list[str]:
    names: list[str] = []
    order = random.Random(1)
    for n in range(runs):
        pair = list(sides)
        order.shuffle(pair)
        for side in pair:
            log(f"  run {n + 1}/{runs}: {side.name}")
            argv = [side.python, "bench/run.py", f"--{profile}", "--fixtures", str(fixtures)]
            argv += [f"--only={s}" for s in sections]
            for name, sample in parse_table(side.run(argv, "bench/run.py")).items():
                side.samples.setdefault(name, []).append(sample)
                if name not in names:
                    names.append(name)
    return names


def report(old: Side, new: Side, names: Sequence[str]) -> str:
    counts = bool(old.instructions)
    lines = [
        "| row | old: CPU (wall) | new: CPU (wall) | new / old, CPU | runs |"
        + (" instructions, old / new | new / old, instructions |" if counts else ""),
        "| --- | --- | --- | --- | --- |" + (" --- | --- |" if counts else ""),
    ]
    for name in names:
        a, b = old.samples.get(name), new.samples.get(name)
        if not a or not b:
            lines.append(f"| {name} | {'yes' if a else '-'} | {'yes' if b else '-'} | - | - |")
            continue
        wall_a, cpu_a = (statistics.median(x) for x in zip(*a, strict=True))
        wall_b, cpu_b = (statistics.median(x) for x in zip(*b, strict=True))
        ratio = f"{cpu_b / cpu_a:.2f}x" if cpu_a else "-"
        line = (
            f"| {name} | {show(cpu_a)} ({show(wall_a)}) | {show(cpu_b)} ({show(wall_b)}) "
            f"| {ratio} | {min(len(a), len(b))} |"
        )
        ia, ib = old.instructions.get(name), new.instructions.get(name)
        if counts:
            line += (
                f" {ia / 1e6:,.0f} M / {ib / 1e6:,.0f} M | {ib / ia:.3f}x |"
                if ia and ib
                else " - | - |"
            )
        lines.append(line)
    return "\n".join(lines)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench/compare.py", description=__doc__.split("\n")[0])
    parser.add_argument("--against", required=True, help="the other revision (a commit, a branch)")
    parser.add_argument("--runs", type=int, default=15, help="pairs per process row")
    parser.add_argument("--inproc", action="append", default=[], help="a bench/run.py section")
    parser.add_argument("--inproc-runs", type=int, default=5, help="runs of each tree's run.py")
    parser.add_argument("--profile", choices=("quick", "smoke"), default="quick")
    parser.add_argument("--no-process", action="store_true", help="only the in-process rows")
    parser.add_argument(
        "--instructions", action="store_true", help="also count process rows under callgrind"
    )
    parser.add_argument("--venv", action="store_true", help="give the other tree its own venv")
    parser.add_argument("--fixtures", type=Path, default=FIXTURES)
    parser.add_argument("--output", type=Path, help="also write the report to this file")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    where = Path(tempfile.mkdtemp(prefix="jp-compare-"))
    began = time.monotonic()
    load = os.getloadavg()[0]
    tree = checkout(args.against, where)
    try:
        python = own_venv(tree) if args.venv else sys.executable
        old = Side(f"old ({args.against})", tree, python, where / "old")
        new = Side("new (this tree)", ROOT, sys.executable, where / "new")
        for side in (old, new):
            side.work.mkdir()
            side.check()
        names: list[str] = []
        if not args.no_process:
            log("process rows")
            names += process_rows((old, new), args.runs, args.fixtures, args.instructions)
        if args.inproc:
            log("in-process rows (each tree's bench/run.py)")
            names += inproc_rows(
                (old, new), args.inproc, args.inproc_runs, args.profile, args.fixtures
            )
        text = "\n".join(
            [
                f"new / old against {args.against}, {time.monotonic() - began:.0f} s: "
                f"`bench/compare.py {' '.join(argv if argv is not None else sys.argv[1:])}`",
                f"Machine: {machine()}; load average {load:.2f} at the start, "
                f"{os.getloadavg()[0]:.2f} at the end",
                "",
                report(old, new, names),
                "",
            ]
        )
        print(text, end="")
        if args.output:
            args.output.write_text(text)
    finally:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
            capture_output=True,
        )
        shutil.rmtree(where, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
