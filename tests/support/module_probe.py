"""Run jp's entry point in a fresh interpreter and name, after the command, which of
some modules it executed (a module bound lazily and never touched is not)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.support.sandbox import TIMEOUT, TRACEBACK

PROBE = """
import sys, types
PRELOAD
from ENTRY import main
sys.argv = ["jp", *sys.argv[1:]]
try:
    main()
except SystemExit as exc:
    code = exc.code
else:
    code = 0
ran = [n for n in WATCHED if type(sys.modules.get(n)) is types.ModuleType] or ["-"]
sys.stderr.write(f"\\nPROBE code={code} loaded={','.join(ran)}\\n")
"""


@dataclass(frozen=True)
class Probed:
    out: str
    err: str  # without the probe's own line
    code: int
    loaded: set[str]


def probe(
    args: Sequence[str],
    env: Mapping[str, str],
    cwd: Path,
    watched: Sequence[str],
    entry: str = "porcelain.cli",
    preload: str = "",
) -> Probed:
    """``jp ARGS`` through ``entry``'s ``main``, after running ``preload``."""
    code = (
        PROBE.replace("PRELOAD", preload)
        .replace("ENTRY", entry)
        .replace("WATCHED", repr(tuple(watched)))
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, *args],
        env=dict(env),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        input="",
    )
    assert TRACEBACK not in proc.stderr, proc.stderr
    err, _, last = proc.stderr.rstrip("\n").rpartition("\n")
    assert last.startswith("PROBE "), proc.stderr
    fields = dict(item.split("=", 1) for item in last.split()[1:])
    status = 0 if fields["code"] == "None" else int(fields["code"])
    return Probed(proc.stdout, err, status, set(fields["loaded"].split(",")) - {"-"})
