"""`jp q` with one configured MCP server until its request leaves, against the
same query without one (design section 8), in one run.

The server is the test suite's (tests/support/mcp_server.py, the `mcp`
package's own server side); the provider is the loopback fake of the Messages
API, which notes when each request arrives.  A sample is the time from
starting `jp q` to the request reaching the fake: with the server, that
includes loading the `mcp` package and the server's start and tool list.
A third variant, the `mcp` package's client alone starting the same server
and listing its tools, shows how much of the difference is the server's.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import Profile, Results, Row, clean_env, interleaved, jp_command

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "support" / "mcp_server.py"
BASE = '[assistant.model]\nid = "anthropic/claude-bench"\n'
# the floor: the mcp package's client starts the server and lists its tools
CLIENT = """
import anyio, sys
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
async def main():
    params = StdioServerParameters(command=sys.executable, args=[sys.argv[1]])
    async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
        await s.initialize()
        await s.list_tools()
anyio.run(main)
"""


def mcp_section(root: Path, profile: Profile, results: Results) -> None:
    sys.path.insert(0, str(ROOT))
    from tests.support.fake_messages import FakeMessages

    homes = {}
    server = (
        f"[providers.mcp.bench]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = {json.dumps([str(SERVER)])}\n"
    )
    for name, text in (("plain", BASE), ("mcp", BASE + server)):
        home = root / f"home-mcp-{name}"
        (home / "config" / "jp").mkdir(parents=True)
        (home / "config" / "jp" / "config.toml").write_text(text)
        subprocess.run([*jp_command(), "init"], env=clean_env(home), cwd=home, capture_output=True, check=True)
        homes[name] = home
    arrivals: list[float] = []

    def arrived(body: dict[str, Any]) -> bool:
        arrivals.append(time.perf_counter())
        return True

    runtime = Path(tempfile.mkdtemp(prefix="jpb-", dir="/tmp"))
    with FakeMessages() as fake:
        fake.reply_text("ok", when=arrived, times=None)

        def query(name: str) -> Callable[[], float]:
            env = {**clean_env(homes[name]), **fake.env(), "XDG_RUNTIME_DIR": str(runtime), "JP_WARM": "0"}

            def run() -> float:
                arrivals.clear()
                start = time.perf_counter()
                subprocess.run([*jp_command(), "q", "--new", "bench"], env=env, cwd=homes[name],
                               capture_output=True, check=True)
                return arrivals[0] - start

            return run

        def client() -> float:
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", CLIENT, str(SERVER)], check=True, capture_output=True)
            return time.perf_counter() - start

        medians = interleaved(
            {"mcp": query("mcp"), "plain": query("plain"), "client": client},
            profile.few(profile.runs),
        )
    extra = medians["mcp"] - medians["plain"]
    results.add(
        Row(
            "mcp: jp q to the request leaving, one MCP server",
            medians["mcp"],
            "the same query, no server",
            medians["plain"],
            "the server's start is the cost",
            "",
            note=(
                f"ratio {medians['mcp'] / medians['plain']:.2f}x; +{extra * 1000:.0f} ms, of which the "
                f"mcp client alone starting the server and listing its tools takes "
                f"{medians['client'] * 1000:.0f} ms (its own process start included)"
            ),
            cpu=medians.cpu["mcp"],
            base_cpu=medians.cpu["plain"],
        )
    )
