"""A Claude Code session written the way Claude Code writes one (records modelled on
the real files in ../shared/fixtures/claude-code, made here so the suite is
self-contained): tool calls (Bash, Read, an MCP tool, a Task that starts a
subagent), a screenshot in a tool result, bytes that claim to be an image and
are not, a prompt with an image, Claude Code's summary record, and hostile text
in the tool inputs, the project folder and the image's alt."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from pathlib import Path
from typing import Any

SCRIPT = "<script>document.title='pwned';window.jpPwned=1</script>"
PROJECT = f"/home/dev/shop-{SCRIPT}"  # the folder the session ran in (cwd)
SESSION = "5e551011-0000-4000-8000-000000000001"
AGENT = "a7e1b2c"
SUMMARY = "Checkout page screenshot review"


def png(width: int, height: int) -> bytes:
    """A real PNG of one colour."""
    rows = b"".join(b"\x00" + b"\x30\x70\xb0" * width for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    head = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    body = chunk(b"IHDR", head) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
    return b"\x89PNG\r\n\x1a\n" + body


def _image(raw: bytes, media_type: str = "image/png") -> dict[str, Any]:
    data = base64.b64encode(raw).decode()
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


class _Writer:
    def __init__(self, session: str, agent: str | None = None) -> None:
        self.records: list[dict[str, Any]] = []
        self.session, self.agent = session, agent
        self.n = 0

    def add(self, kind: str, content: Any, **extra: Any) -> str:
        self.n += 1
        uuid = f"{self.session[:8]}-{self.agent or 'main'}-{self.n:04d}"
        record = {
            "parentUuid": self.records[-1]["uuid"] if self.records else None,
            "isSidechain": self.agent is not None,
            "userType": "external",
            "cwd": PROJECT,
            "sessionId": self.session,
            "version": "2.1.39",
            "type": kind,
            "message": {"role": kind, "content": content},
            "uuid": uuid,
            "timestamp": f"2026-03-01T10:{self.n // 60:02d}:{self.n % 60:02d}.000Z",
            **extra,
        }
        if self.agent:
            record["agentId"] = self.agent
        if kind == "assistant":
            record["message"]["id"] = f"msg_{self.n}"
        self.records.append(record)
        return uuid

    def call(self, tool_id: str, name: str, given: dict[str, Any]) -> None:
        self.add("assistant", [{"type": "tool_use", "id": tool_id, "name": name, "input": given}])

    def result(self, tool_id: str, content: Any, **extra: Any) -> None:
        block = {"type": "tool_result", "tool_use_id": tool_id, "content": content}
        self.add("user", [block], **extra)

    def write(self, path: Path, *tail: dict[str, Any]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [json.dumps(r) for r in [*self.records, *tail]]
        path.write_text("\n".join(lines) + "\n")


def write_session(root: Path) -> Path:
    """``root/-home-dev-shop/SESSION.jsonl`` and its subagent's stream; returns the
    project folder (what `jp conversation import --from claude-code` takes)."""
    folder = root / "-home-dev-shop"
    main = _Writer(SESSION)
    main.add(
        "user", [{"type": "text", "text": "why is the checkout page blank?"}, _image(png(6, 4))]
    )
    main.add(
        "assistant", [{"type": "thinking", "thinking": "Look at the page first.", "signature": "s"}]
    )
    main.call(
        "toolu_b1",
        "Bash",
        {"command": f"curl -s localhost:8000/checkout {SCRIPT}", "description": "fetch"},
    )
    main.result("toolu_b1", "<html><body></body></html>\n" + "line of output\n" * 300)
    main.call("toolu_r1", "Read", {"file_path": "/home/dev/shop/shot.png"})
    main.result(
        "toolu_r1",
        [
            {"type": "text", "text": "the screenshot"},
            _image(png(40, 24)),
            _image(b"<svg onload=x>", "image/png"),
        ],
    )
    main.call(
        "toolu_m1", "mcp__github__search_issues", {"query": "checkout blank", "repo": "dev/shop"}
    )
    main.result("toolu_m1", "2 issues found")
    main.call(
        "toolu_t1",
        "Task",
        {"subagent_type": "Explore", "description": "find the template", "prompt": "look"},
    )
    main.result(
        "toolu_t1",
        [{"type": "text", "text": "templates/checkout.html"}],
        toolUseResult={"agentId": AGENT, "status": "completed"},
    )
    last = main.add(
        "assistant", [{"type": "text", "text": "The template is **empty**: see `checkout.html`."}]
    )
    main.write(
        folder / f"{SESSION}.jsonl", {"type": "summary", "summary": SUMMARY, "leafUuid": last}
    )
    sub = _Writer(SESSION, AGENT)
    sub.add("user", "look for the checkout template")
    sub.call("toolu_g1", "Grep", {"pattern": "checkout", "path": "templates"})
    sub.result("toolu_g1", "templates/checkout.html")
    sub.add("assistant", [{"type": "text", "text": "templates/checkout.html"}])
    sub.write(folder / SESSION / "subagents" / f"agent-{AGENT}.jsonl")
    return folder


def build_sessions(user: Any, root: Path) -> dict[str, str]:
    """Into ``user``'s store: the session above and its subagent, and a conversation
    of ten turns compacted twice (turns 2-8, then 2-10).  Their ids by role."""
    from tests.e2e.harness import ids_in

    user.ok("conversation", "import", "--from", "claude-code", str(write_session(root)))
    rows = user.ls("--all")
    session = next(
        r["id"]
        for r in rows
        if (r.get("imported_from") or {}).get("session") == SESSION
        and not r["imported_from"].get("agent")
    )
    agent = next(r["id"] for r in rows if (r.get("imported_from") or {}).get("agent"))
    offline = "--cfg=assistant.model.id=offline/echo"
    user.ok(offline, "q", "--new", "turn 1 of the compacted one")
    for n in range(2, 11):
        user.ok(offline, "q", f"turn {n} says {n * 11}")
    twice = user.active()
    user.ok(offline, "c", "compact", "--turn", "2..8", "--summarize")
    user.ok(offline, "c", "compact", "--turn", "2..10", "--summarize")
    assert ids_in(twice)
    return {"session": session, "agent": agent, "twice": twice}
