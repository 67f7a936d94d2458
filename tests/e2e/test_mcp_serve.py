"""`jp mcp serve` end to end: the official `mcp` client starts it over stdio, lists its
tools, searches imported Claude Code sessions (tests/fixtures/mcp), reads turns and
lists conversations; the store is never written, a new import is seen at once, a
concurrent `git gc` never fails a call, and hostile text comes back inert and bounded."""

from __future__ import annotations

import json
import re
import subprocess
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.e2e.harness import JP, User

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "mcp" / "claude-code"
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")

Body = Callable[[ClientSession], Awaitable[None]]


def serving(user: User, body: Body, *args: str) -> None:
    """Run ``body`` against `jp mcp serve` started by the official client."""

    async def main() -> None:
        params = StdioServerParameters(command=str(JP), args=["mcp", "serve", *args], env=user.env)
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            with anyio.fail_after(60):
                await session.initialize()
            await body(session)

    anyio.run(main)


async def call(session: ClientSession, name: str, **arguments: Any) -> tuple[str, bool]:
    with anyio.fail_after(60):
        result = await session.call_tool(name, arguments)
    (block,) = result.content
    assert block.type == "text"
    return block.text, bool(result.is_error)


async def answer(session: ClientSession, name: str, **arguments: Any) -> Any:
    text, failed = await call(session, name, **arguments)
    assert not failed, text
    return json.loads(text) if text.startswith("{") else text


def imported(user: User, *projects: str) -> dict[str, str]:
    """Import the fixtures' sessions of ``projects``; their ids by project."""
    for project in projects:
        user.ok("conversation", "import", "--from", "claude-code", str(FIXTURES / project))
    return {
        row["imported_from"]["path"].split("/")[0]: row["id"]
        for row in user.ls("--all")
        if row.get("imported_from")
    }


def refs(user: User) -> str:
    return user.git("for-each-ref", "--format=%(refname) %(objectname)")


def test_an_agent_lists_the_tools_searches_reads_and_lists(user: User) -> None:
    ids = imported(user, "-home-me-shop", "-home-me-blog", "-home-me-garden")
    before = refs(user)
    seen: dict[str, Any] = {}

    async def body(session: ClientSession) -> None:
        tools = (await session.list_tools()).tools
        seen["tools"] = {t.name: t for t in tools}
        seen["search"] = await answer(session, "search_conversations", query="zanzibar")
        seen["shop only"] = await answer(
            session, "search_conversations", query="zanzibar", project="/home/me/shop"
        )
        seen["codex"] = await answer(
            session, "search_conversations", query="zanzibar", tool="codex"
        )
        seen["later"] = await answer(
            session, "search_conversations", query="zanzibar", since="2026-04-01"
        )
        seen["read"] = await answer(
            session, "read_conversation", conversation=ids["-home-me-shop"], from_turn=2, to_turn=3
        )
        seen["list"] = await answer(session, "list_conversations", limit=2)

    serving(user, body)
    tools = seen["tools"]
    assert set(tools) == {"search_conversations", "read_conversation", "list_conversations"}
    for tool in tools.values():
        assert tool.description and len(tool.description) > 80, tool.name
        assert tool.input_schema["type"] == "object"
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
    assert tools["search_conversations"].input_schema["required"] == ["query"]
    found = seen["search"]["results"]
    assert {r["id"] for r in found} == {ids["-home-me-shop"], ids["-home-me-blog"]}
    shop = next(r for r in found if r["id"] == ids["-home-me-shop"])
    assert shop["tool"] == "claude-code" and shop["project"] == "/home/me/shop"
    assert shop["hits"] == 2 and found[0]["hits"] == 2
    assert found[0]["id"] == ids["-home-me-blog"], "as many hits: the newest activity first"
    assert shop["matches"][0]["turn"] == 1 and "ZANZIBAR-42" in shop["matches"][0]["excerpt"]
    assert [r["id"] for r in seen["shop only"]["results"]] == [ids["-home-me-shop"]]
    assert seen["codex"]["results"] == []
    assert [r["id"] for r in seen["later"]["results"]] == [ids["-home-me-blog"]]
    read = seen["read"]
    assert read.startswith(f"Conversation {ids['-home-me-shop']}")
    assert "[turn 2]" in read and "[turn 3]" in read and "[turn 1]" not in read
    assert "user: And the tests?" in read and "assistant: Run make test; all pass." in read
    rows = seen["list"]["rows"]
    assert [r["id"] for r in rows] == [ids["-home-me-garden"], ids["-home-me-blog"]]
    assert seen["list"]["conversations"] == 3
    assert rows[0]["first_request"] == "How do I center a div?" and rows[0]["turns"] == 1
    assert refs(user) == before, "serving wrote no ref (the op log included)"


TOKEN = "ghp_Q7mZ2pL9xW4vN8kR3tY6uH1jB5cD0eFgA2sK"  # planted in the shop session's turn 2


def test_a_planted_secret_never_leaves(user: User) -> None:
    ids = imported(user, "-home-me-shop")
    got: dict[str, Any] = {}

    async def body(session: ClientSession) -> None:
        got["read"] = await answer(session, "read_conversation", conversation=ids["-home-me-shop"])
        got["model"] = await answer(
            session, "read_conversation", conversation=ids["-home-me-shop"], view="model"
        )
        got["word"] = await answer(session, "search_conversations", query="Push it with")
        got["oracle"] = await answer(session, "search_conversations", query="ghp_Q7m")
        got["regex"] = await answer(
            session, "search_conversations", query="ghp_[A-Za-z0-9]+", regex=True
        )

    serving(user, body)
    everything = json.dumps(got)
    assert TOKEN not in everything and TOKEN[:12] not in everything
    assert (
        "user: It links now. Push it with the token [redacted: github token] for me?" in got["read"]
    )
    assert "[redacted: github token]" in got["model"]
    (hit,) = got["word"]["results"][0]["matches"]
    assert hit["excerpt"].endswith("[redacted: github token] for me?")
    assert got["oracle"]["results"] == [] and got["regex"]["results"] == [], (
        "a search never finds what the mask hides (no oracle of a secret's text)"
    )


def test_an_import_meanwhile_is_seen_by_the_next_call(user: User) -> None:
    imported(user, "-home-me-shop")
    counts: list[int] = []

    async def body(session: ClientSession) -> None:
        counts.append(
            len((await answer(session, "search_conversations", query="zanzibar"))["results"])
        )
        await anyio.to_thread.run_sync(lambda: imported(user, "-home-me-blog"))
        counts.append(
            len((await answer(session, "search_conversations", query="zanzibar"))["results"])
        )

    serving(user, body)
    assert counts == [1, 2]


def test_a_concurrent_gc_fails_no_call(user: User) -> None:
    ids = imported(user, "-home-me-shop", "-home-me-blog", "-home-me-garden")
    stop = threading.Event()
    runs: list[int] = []

    def gc() -> None:
        while not stop.is_set():
            user.git("gc", "--prune=now", "--quiet", check=False)
            runs.append(1)

    failures: list[str] = []

    async def body(session: ClientSession) -> None:
        for n in range(12):
            conv = ids["-home-me-shop"] if n % 2 else ids["-home-me-blog"]
            for tool, args in (
                ("search_conversations", {"query": "zanzibar"}),
                ("read_conversation", {"conversation": conv}),
                ("list_conversations", {}),
            ):
                text, failed = await call(session, tool, **args)
                if failed:
                    failures.append(text)

    worker = threading.Thread(target=gc)
    worker.start()
    try:
        serving(user, body)
    finally:
        stop.set()
        worker.join()
    assert runs and failures == []


def test_bad_requests_are_error_results_and_the_server_goes_on(user: User) -> None:
    imported(user, "-home-me-blog")
    got: list[tuple[str, bool]] = []

    async def body(session: ClientSession) -> None:
        for tool, args in (
            ("read_conversation", {"conversation": "jp-c99999999999"}),
            ("search_conversations", {"query": "(", "regex": True}),
            ("search_conversations", {"query": "x", "since": "last tuesday"}),
            ("list_conversations", {"limit": 0}),
            ("search_conversations", {"query": "x", "shell": "rm -rf /"}),
            ("nonesuch", {}),
            ("search_conversations", {"query": "zanzibar"}),
        ):
            got.append(await call(session, tool, **args))

    serving(user, body)
    *bad, good = got
    assert all(failed for _, failed in bad), bad
    assert all("\n" not in text and len(text) < 300 for text, _ in bad), bad
    assert "not found" in bad[0][0] or "no conversation" in bad[0][0], bad[0]
    assert "regular expression" in bad[1][0] and "since" in bad[2][0] and "limit" in bad[3][0]
    assert not good[1] and "zanzibar" in good[0]


def hostile_session(folder: Path) -> None:
    """A Claude Code session whose text holds terminal control sequences and 300 KB."""
    records = []
    texts = [
        ("user", "Colour \x1b[31mRED\x1b[0m \x1b]0;pwned\x07 and \x9b2J zanzibar"),
        ("assistant", "Fine.\rOVERWRITTEN " + "zanzibar " * 40000),
    ]
    for n, (role, text) in enumerate(texts):
        record: dict[str, Any] = {
            "parentUuid": f"h-{n}" if n else None,
            "isSidechain": False,
            "userType": "external",
            "cwd": "/home/me/\x1b[2Jevil",
            "sessionId": "9d405162-6666-4f80-a192-000000000006",
            "version": "2.1.39",
            "type": role,
            "uuid": f"h-{n + 1}",
            "timestamp": f"2026-06-01T10:00:0{n}.000Z",
        }
        if role == "user":
            record["message"] = {"role": "user", "content": text}
        else:
            record["message"] = {
                "id": "msg_h",
                "type": "message",
                "role": "assistant",
                "model": "claude-opus-4-6",
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 1, "output_tokens": 1},
            }
        records.append(json.dumps(record))
    folder.mkdir(parents=True)
    (folder / "9d405162-6666-4f80-a192-000000000006.jsonl").write_text("\n".join(records) + "\n")


def test_hostile_text_comes_back_inert_and_bounded(user: User, tmp_path: Path) -> None:
    hostile_session(tmp_path / "projects" / "-home-me-evil")
    user.ok("conversation", "import", "--from", "claude-code", str(tmp_path / "projects"))
    user.config("[mcp]\nmax_bytes = 4096\n")
    (cid,) = [row["id"] for row in user.ls()]
    got: dict[str, tuple[str, bool]] = {}

    async def body(session: ClientSession) -> None:
        got["search"] = await call(session, "search_conversations", query="zanzibar")
        got["read"] = await call(session, "read_conversation", conversation=cid)
        got["list"] = await call(session, "list_conversations")

    serving(user, body)
    for name, (text, failed) in got.items():
        assert not failed, text
        assert not CONTROL.search(text), (name, CONTROL.search(text))
        assert len(text.encode()) <= 4096 + 200, (name, len(text.encode()))
    read = got["read"][0]
    assert "\\x1b[31mRED" in read and "\\x1b]0;pwned\\x07" in read and "\\x9b2J" in read
    assert "Fine.\\rOVERWRITTEN" in read
    assert read.rstrip().endswith("ask for fewer turns for the rest]"), read[-300:]
    assert "\\x1b[2Jevil" in got["list"][0]


def test_a_server_killed_mid_call_leaves_the_store_whole(user: User) -> None:
    ids = imported(user, "-home-me-shop", "-home-me-blog")
    before = refs(user)
    proc = subprocess.Popen(
        [str(JP), "mcp", "serve"], env=user.env, stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    hello = {"protocolVersion": "2025-06-18", "capabilities": {},
             "clientInfo": {"name": "t", "version": "1"}}  # fmt: skip
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "search_conversations", "arguments": {"query": "zanzibar"}}},
    ]  # fmt: skip
    proc.stdin.write(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    proc.stdin.flush()
    assert b'"id":1' in proc.stdout.readline().replace(b" ", b"")
    proc.kill()  # during or just after the search
    proc.wait(timeout=30)
    assert refs(user) == before
    user.git("fsck", "--no-progress")
    assert set(user.ok("conversation", "grep", "-l", "zanzibar").split()) == set(ids.values())


def test_a_store_that_is_not_there_is_a_clear_error(user: User, tmp_path: Path) -> None:
    proc = user.fail("mcp", "serve", "--store", str(tmp_path / "nowhere.git"))
    assert proc.stderr.startswith("error: no store at"), proc.stderr
    assert not (tmp_path / "nowhere.git").exists()


@pytest.mark.parametrize("limit", ["0", "big"])
def test_the_answer_limit_is_checked_like_any_key(user: User, limit: str) -> None:
    user.config(f"[mcp]\nmax_bytes = {json.dumps(limit) if limit == 'big' else limit}\n")
    proc = user.fail("mcp", "serve", input="")
    assert "mcp.max_bytes" in proc.stderr


def test_help_says_what_it_serves(user: User) -> None:
    shown = user.ok("mcp", "--help")
    assert "serve" in shown and "install" in shown
    assert "read-only" in user.ok("mcp", "serve", "--help")
