"""`jp mcp serve` starts with the `mcp` package and little of its own: until the
first tool call it loads neither the answers, the cache's search nor the secret
scanner (an agent waits for `initialize` and `tools/list` before its session
begins); the first call loads them.  Measured in docs/performance.md (the
mcp-serve rows and their floor, the bare import of the mcp modules)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.module_probe import PROBE
from tests.support.sandbox import JP, ROOT, TIMEOUT, sealed_env

AT_FIRST_CALL = (
    "porcelain.app.mcpserve.answers",
    "porcelain.app.search",
    "porcelain.domain.secretscan",
    "porcelain.domain.recall",
)
INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}


class Served:
    """`jp mcp serve` in the module probe, spoken to one request at a time."""

    def __init__(self, env: dict[str, str]) -> None:
        code = (
            PROBE.replace("PRELOAD", "")
            .replace("ENTRY", "porcelain.early")
            .replace("WATCHED", repr(AT_FIRST_CALL))
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code, "mcp", "serve"],
            env=env,
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.next = 0

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        self.proc.stdin.flush()

    def ask(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next += 1
        self.send({"id": self.next, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            assert line, "the server ended without an answer"
            answer = json.loads(line)
            if answer.get("id") == self.next:
                assert "result" in answer, answer
                return dict(answer["result"])

    def start(self) -> None:
        self.ask("initialize", INIT)
        self.send({"method": "notifications/initialized"})
        assert len(self.ask("tools/list", {})["tools"]) == 3

    def loaded(self) -> set[str]:
        """Close stdin; the probed modules the server executed."""
        _, err = self.proc.communicate(timeout=TIMEOUT)
        assert self.proc.returncode == 0, err
        last = err.rstrip("\n").rpartition("\n")[2]
        assert last.startswith("PROBE "), err
        fields = dict(item.split("=", 1) for item in last.split()[1:])
        return set(fields["loaded"].split(",")) - {"-"}


def test_start_up_loads_no_answer_until_the_first_call(tmp_path: Path) -> None:
    env = sealed_env(tmp_path, tmp_path / "store.git", tmp_path / "config", "T", "t@e.invalid")
    (tmp_path / "home").mkdir()
    subprocess.run([str(JP), "init"], env=env, cwd=ROOT, check=True, capture_output=True)

    started = Served(env)
    started.start()
    assert started.loaded() == set(), "loaded before any call"

    called = Served(env)
    called.start()
    listed = called.ask("tools/call", {"name": "list_conversations", "arguments": {}})
    assert listed["isError"] is False, listed
    assert called.loaded() == set(AT_FIRST_CALL)
