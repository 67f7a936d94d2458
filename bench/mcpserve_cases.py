"""`jp mcp serve`: its start-up against `jp conversation ls`, and a search against
`jp conversation grep` of the same word, on the search rows' stores (search_cases).

The client is this process speaking the protocol's JSON lines on the server's
pipes (no `mcp` package here, so only the server's own cost is measured).
Start-up: spawn `jp mcp serve`, `initialize`, `tools/list`, close stdin, wait
for the exit, against the whole `jp conversation ls --limit 50` process, and
against a floor no code of jp's feeds: a Python process that imports the
modules of the `mcp` package `jp mcp serve` uses (``FLOOR``) and exits as jp
does (its objects frozen, out of the interpreter's last collection); the
difference is jp's own share of the start-up.  A search: one `tools/call` of search_conversations for the word on a server
started before (an agent keeps its server running), against the whole
`jp conversation grep WORD` process; its CPU is the server's (its /proc
times before and after the call).  The target of both: within 2x.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import IO, Any

from bench.common import (
    VENV_BIN,
    Profile,
    Results,
    Row,
    clean_env,
    interleaved,
    jp_command,
    run_process,
)
from bench.common import verdict as met
from bench.search_cases import HOLDERS, SIZES, WORD, build_stores

INIT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "jp-bench", "version": "1"},
}
TICKS = os.sysconf("SC_CLK_TCK")
# what `jp mcp serve` imports of the mcp package (porcelain/app/mcpserve/server.py), and
# jp's exit: everything alive frozen (porcelain/cli.py), not collected once more
FLOOR = (
    "import anyio, mcp_types\n"
    "from mcp.server.lowlevel import Server\n"
    "from mcp.server.stdio import stdio_server\n"
    "import gc; gc.freeze()\n"
)


class Server:
    """A running `jp mcp serve`, spoken to in JSON lines."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [*jp_command(), "mcp", "serve"],
            env=env,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next = 0

    def ask(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next += 1
        stdin, stdout = self.pipes()
        stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.next, "method": method,
                                "params": params}).encode() + b"\n")  # fmt: skip
        stdin.flush()
        while True:
            answer = json.loads(stdout.readline())
            if answer.get("id") == self.next:
                assert "result" in answer, answer
                return dict(answer["result"])

    def start(self) -> None:
        self.ask("initialize", INIT)
        stdin, _ = self.pipes()
        stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        stdin.flush()
        assert len(self.ask("tools/list", {})["tools"]) == 3

    def pipes(self) -> tuple[IO[bytes], IO[bytes]]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        return self.proc.stdin, self.proc.stdout

    def cpu(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime

    def stop(self) -> None:
        stdin, _ = self.pipes()
        stdin.close()
        self.proc.wait(timeout=60)


def mcpserve_section(root: Path, profile: Profile, results: Results) -> None:
    for count in SIZES[profile.name]:
        results.log(f"  building {count:,} conversations")
        own = root / "mcpserve"  # the search rows may have built this size in root already
        own.mkdir(exist_ok=True)
        store, _ = build_stores(own, count, results)
        home = root / f"home-mcpserve-{count}"
        home.mkdir()
        env = clean_env(home, store)
        grep = [*jp_command(), "conversation", "grep", WORD]
        subprocess.run(grep, env=env, cwd=home, capture_output=True, check=True)  # the index
        _start_row(count, env, home, profile, results)
        _search_row(count, env, home, grep, profile, results)


def _start_row(
    count: int, env: dict[str, str], home: Path, profile: Profile, results: Results
) -> None:
    def start() -> float:
        began = time.perf_counter()
        server = Server(env, home)
        server.start()
        ready = time.perf_counter() - began
        server.stop()
        return ready

    ls = [*jp_command(), "conversation", "ls", "--limit", "50"]
    floor = [str(VENV_BIN / "python"), "-c", FLOOR]
    medians = interleaved(
        {
            "start": start,
            "ls": lambda: run_process(ls, env, home),
            "floor": lambda: run_process(floor, env, home),
        },
        profile.few(profile.runs),
    )
    cpu, base = medians.cpu["start"], medians.cpu["ls"]
    results.add(
        Row(
            f"process: jp mcp serve ready (initialize, tools/list), {count:,} conversations",
            medians["start"],
            "jp conversation ls --limit 50",
            medians["ls"],
            "within 2x",
            met(medians["start"] < 2 * medians["ls"]),
            note=f"CPU ratio {cpu / base:.2f}x" if base else "",
            cpu=cpu,
            base_cpu=base,
        )
    )
    floor_cpu = medians.cpu["floor"]
    results.add(
        Row(
            f"process: jp mcp serve ready, {count:,} conversations, against its floor",
            medians["start"],
            "python importing the mcp modules jp mcp serve uses (a floor)",
            medians["floor"],
            "jp's own share: what is left",
            "",
            note=f"jp's own share {cpu - floor_cpu:+.3f} s of CPU" if floor_cpu else "",
            cpu=cpu,
            base_cpu=floor_cpu,
        )
    )


def _search_row(
    count: int, env: dict[str, str], home: Path, grep: list[str], profile: Profile, results: Results
) -> None:
    server = Server(env, home)
    server.start()
    server_cpu: list[float] = []

    def search() -> float:
        before, began = server.cpu(), time.perf_counter()
        result = server.ask(
            "tools/call",
            {"name": "search_conversations", "arguments": {"query": WORD, "limit": 50}},
        )
        took = time.perf_counter() - began
        server_cpu.append(server.cpu() - before)
        found = json.loads(result["content"][0]["text"])
        assert found["conversations_with_hits"] == min(HOLDERS, count), found
        return took

    try:
        medians = interleaved(
            {"search": search, "grep": lambda: run_process(grep, env, home)},
            profile.few(profile.runs),
        )
    finally:
        server.stop()
    cpu = sorted(server_cpu)[len(server_cpu) // 2]
    results.add(
        Row(
            f"mcp: search_conversations WORD (held by {HOLDERS}), {count:,} conversations",
            medians["search"],
            "jp conversation grep WORD (a whole process)",
            medians["grep"],
            "within 2x",
            met(medians["search"] < 2 * medians["grep"]),
            note="a call on a running server; its CPU is the server's",
            cpu=cpu,
            base_cpu=medians.cpu["grep"],
        )
    )
