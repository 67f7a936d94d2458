"""`jp usage --by day` against ccusage itself, day by day: the tokens exactly, the cost
within 2%, on one store and on two stores that sync through a bare remote.

Runs when ccusage is installed (``npm install -g ccusage@18``, or the path of its
binary in ``$CCUSAGE``; ccusage 20's npm package needs a native binary that the
registry may not have for this platform): on the project's own files
(tests/fixtures/usage) and, when the checkout sits beside them, on the real Claude
Code sessions of ``../shared/fixtures/claude-code`` laid out as a ``~/.claude`` holds
them (one capture of each session: the fixtures keep some sessions twice, at two
moments, which no real ``~/.claude`` does and which ccusage would count twice where
their records have no ``requestId``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.sync_machine import Machine

ROOT = Path(__file__).resolve().parents[2]
OWN = ROOT / "tests" / "fixtures" / "usage" / "claude" / "projects"
SHARED = ROOT.parent / "shared" / "fixtures" / "claude-code"
CCUSAGE = os.environ.get("CCUSAGE") or shutil.which("ccusage")
COUNTS = ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens")
THEIRS = ("inputTokens", "outputTokens", "cacheCreationTokens", "cacheReadTokens")

pytestmark = pytest.mark.skipif(
    CCUSAGE is None,
    reason="ccusage is not installed: `npm install -g ccusage@18` (or set CCUSAGE to its binary)",
)


def shared_projects(into: Path) -> Path:
    """The shared fixtures as a ``projects`` folder: each session once, subagents beside it."""
    projects = into / "projects"
    codemie = SHARED / "codemie"
    shutil.copytree(codemie / "claude" / "-tmp-private", projects / "-tmp-private")
    simple = projects / "incremental-simple"
    simple.mkdir(parents=True)
    shutil.copy(codemie / "claude" / "incremental-simple" / "turn-2.jsonl", simple)
    agents = projects / "incremental-subagents"
    (agents / "turn-2").mkdir(parents=True)
    shutil.copy(codemie / "claude" / "incremental-subagents" / "turn-2.jsonl", agents)
    shutil.copytree(
        codemie / "claude" / "incremental-subagents" / "turn-2" / "subagents",
        agents / "turn-2" / "subagents",
    )
    (projects / "codemie").mkdir()
    shutil.copy(codemie / "session-196820da.jsonl", projects / "codemie")
    shutil.copytree(
        SHARED / "spotter", projects / "spotter", ignore=shutil.ignore_patterns("LICENSE")
    )
    return projects


def ccusage_daily(projects: Path, tz: str) -> list[dict[str, Any]]:
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(projects.parent), "TZ": tz}
    proc = subprocess.run(
        [str(CCUSAGE), "daily", "--json", "--offline"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return list(json.loads(proc.stdout)["daily"])


def compare(ours: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> None:
    """Day by day the same tokens, and the cost within 2%; where ccusage prices a
    model it does not know at 0 (the own files' mystery-model-1), jp has no cost."""
    assert [r["period"] for r in ours] == [d["date"] for d in theirs]
    for row, day in zip(ours, theirs, strict=True):
        assert [row[k] for k in COUNTS] == [day[k] for k in THEIRS], row["period"]
        if "mystery-model-1" in day["modelsUsed"]:
            assert row["cost_usd"] is None, row
        else:
            assert row["cost_usd"] == pytest.approx(day["totalCost"], rel=0.02), row["period"]


def sets(tmp_path: Path) -> list[Path]:
    found = [OWN]
    if SHARED.is_dir():
        found.append(shared_projects(tmp_path / "shared"))
    return found


@pytest.mark.parametrize("tz", ["UTC", "America/Los_Angeles"])
def test_one_store_counts_as_ccusage(tmp_path: Path, tz: str) -> None:
    for n, projects in enumerate(sets(tmp_path)):
        theirs = ccusage_daily(projects, tz)
        machine = Machine(tmp_path / f"m{n}", tmp_path / "no-remote.git")
        machine.env["TZ"] = tz
        machine.ok("conversation", "import", "--from", "claude-code", str(projects))
        ours = machine.json("usage", "--by", "day")
        mystery = {d["date"] for d in theirs if "mystery-model-1" in d["modelsUsed"]}
        # ccusage prices a model it does not know at 0; jp says it has no price
        compare(
            [r for r in ours if r["period"] not in mystery],
            [d for d in theirs if d["date"] not in mystery],
        )
        assert all(r["cost_usd"] is None for r in ours if r["period"] in mystery)


def test_two_stores_that_sync_count_as_ccusage_on_one(tmp_path: Path) -> None:
    """Every session file imported on one machine or the other (a subagent stream with
    its session), both synced through a bare remote: each counts as ccusage on all."""
    projects = sets(tmp_path)[-1]
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
    one, two = Machine(tmp_path / "one", remote), Machine(tmp_path / "two", remote)
    halves = [tmp_path / "half-1" / "projects", tmp_path / "half-2" / "projects"]
    for n, project in enumerate(sorted(p for p in projects.iterdir() if p.is_dir())):
        shutil.copytree(project, halves[n % 2] / project.name)
    one.ok("conversation", "import", "--from", "claude-code", str(halves[0]))
    two.ok("conversation", "import", "--from", "claude-code", str(halves[1]))
    for machine in (one, two, one):
        machine.ok("sync")
    theirs = ccusage_daily(projects, "UTC")
    mystery = {d["date"] for d in theirs if "mystery-model-1" in d["modelsUsed"]}
    for machine in (one, two):
        ours = machine.json("usage", "--by", "day")
        compare(
            [r for r in ours if r["period"] not in mystery],
            [d for d in theirs if d["date"] not in mystery],
        )
