"""The benchmark still runs: `bench/run.py --smoke` end to end (tiny sizes, no timed assertions)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    not (Path(sys.executable).parent / "jp").exists(), reason="jp is not installed next to python"
)


def test_bench_smoke_prints_one_table(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JP_", "ANTHROPIC_"))}
    report = tmp_path / "report.md"
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "run.py"),
            "--smoke",
            "--workdir",
            str(tmp_path),
            "--output",
            str(report),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    lines = [line for line in done.stdout.splitlines() if line.startswith("|")]
    assert lines and lines[0].startswith("| benchmark"), done.stdout
    names = "\n".join(lines)
    for section in (
        "process: jp --help",
        "model: build the request",
        "model: jp q to the request leaving, warm",
        "model: jp q to the request leaving, cold",
        "append 1 event",
        "load + project",
        "fork,",
        "review start",
        "conversation ls",
        "store size",
    ):
        assert section in names, f"{section!r} missing from\n{done.stdout}"
    assert report.read_text() == done.stdout
    left = [p.name for p in tmp_path.iterdir() if p.name.startswith("jp-bench-")]
    assert not left, f"stores left behind: {left}"
