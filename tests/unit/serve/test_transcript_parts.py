"""The transcript's parts over plain event lists: a tool call in one line with its
result under it, images checked by their bytes, the compactions in force."""

from __future__ import annotations

import base64
import struct
import zlib

from porcelain.domain.toolinput import one_line
from porcelain.serve.images import image
from porcelain.serve.markdown import render
from porcelain.serve.pages.events import turn_html
from porcelain.serve.pages.transcript import summaries, superseded

SCRIPT = "<script>window.jpPwned=1</script>"


def png(width: int, height: int) -> bytes:
    rows = b"".join(b"\x00" + b"\x10\x20\x30" * width for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    head = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", head)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def test_a_calls_input_in_one_line_by_tool() -> None:
    assert one_line("Bash", {"command": "ls -la\n  /tmp", "description": "x"}) == "ls -la /tmp"
    assert one_line("Read", {"file_path": "/a/b.py", "limit": 5}) == "/a/b.py"
    assert one_line("Grep", {"pattern": "def ", "path": "src"}) == "def · src"
    assert one_line("Task", {"subagent_type": "Explore", "description": "find"}) == "Explore · find"
    assert one_line("mcp__gh__issue", {"n": 5}) == '{"n": 5}'
    assert one_line("shell", {"command": ["bash", "-lc", "make"]}) == "bash -lc make"
    assert len(one_line("Bash", {"command": "x" * 1000})) == 300


def test_a_result_is_folded_under_its_call_and_hostile_input_is_text() -> None:
    call = {
        "type": "tool_call_request",
        "id": "t1",
        "name": "Bash",
        "arguments": {"command": SCRIPT},
    }
    other = {
        "type": "tool_call_request",
        "id": "t2",
        "name": "Read",
        "arguments": {"file_path": "/x"},
    }
    done = {"type": "tool_call_response", "id": "t1", "content": "out " * 1000}
    failed = {"type": "tool_call_response", "id": "t2", "content": "nope", "is_error": True}
    parts = turn_html([(e, "") for e in (call, other, done, failed)], {})
    assert len(parts) == 2  # two calls, each holding its result
    first, second = parts
    assert "&lt;script&gt;window.jpPwned=1&lt;/script&gt;" in first and "<script>" not in first
    assert "4,000 characters" in first and "show all" in first
    assert 'class="tool error"' in second and "error, 4 characters" in second


def test_an_imported_results_image_is_drawn_with_its_size() -> None:
    result_block = {
        "type": "tool_result",
        "tool_use_id": "t1",
        "content": [
            {"type": "image", "source": {"media_type": "image/png", "data": b64(png(4, 3))}}
        ],
    }
    record = {"type": "user", "message": {"content": [result_block]}}
    call = {
        "type": "tool_call_request",
        "id": "t1",
        "name": "Read",
        "arguments": {"file_path": "/s.png"},
    }
    done = {
        "type": "tool_call_response",
        "id": "t1",
        "content": "",
        "metadata": {"source_record": record},
    }
    (html,) = turn_html([(call, ""), (done, "")], {})
    assert '<img src="data:image/png;base64,' in html and 'width="4" height="3"' in html
    assert "image/png, 4×3" in html


def test_an_image_that_is_not_one_is_refused() -> None:
    assert "<img" not in image(b64(b"<svg onload=alert(1)>"), "image/png")
    assert "not an image" in image(b64(b"GIF8 not really"), "image/gif")
    assert "<img" not in image("not base64 at all!", "image/png")
    assert "<img" not in image(b64(b"\x89PNG\r\n\x1a\n" + b"\0" * 10), "image/png")  # no size
    too_big = b"\x89PNG\r\n\x1a\n" + b"\0" * (3 << 20)
    assert "too large" in image(b64(too_big), "image/png")
    shown = image(b64(png(2, 2)), "image/jpeg", alt='"><script>')
    assert 'alt="&quot;&gt;&lt;script&gt;"' in shown and "data:image/png;" in shown


def test_markdown_draws_inline_images_only() -> None:
    data = b64(png(2, 2))
    html = render(
        f"![a](data:image/png;base64,{data}) ![b](https://e.invalid/p.png) [c](data:image/png;base64,{data})"
    )
    assert html.count("<img") == 1
    assert '<a href="https://e.invalid/p.png" rel="noopener noreferrer">image: b</a>' in html
    assert 'href="data:' not in html


def turn(n: int) -> list[dict[str, object]]:
    return [
        {"type": "turn_start", "timestamp": f"2026-01-01T00:00:{n:02d}Z"},
        {"type": "chat_request", "content": f"q{n}"},
        {"type": "chat_response", "message": f"a{n}"},
    ]


def compaction(first: int, last: int, text: str) -> dict[str, object]:
    return {"type": "compaction", "from_turn": first, "to_turn": last, "summary": {"summary": text}}


def test_the_summaries_in_force_follow_the_models_rule() -> None:
    events = [e for n in range(10) for e in turn(n)]
    events.append(compaction(1, 7, "old 2-8"))
    events.append(compaction(1, 9, "new 2-10"))
    standing, gone = summaries(events)
    assert [(s.from_turn, s.to_turn, s.text) for s in standing] == [(1, 9, "new 2-10")]
    assert [(s.from_turn, s.to_turn, s.text) for s in gone] == [(1, 7, "old 2-8")]
    listed = superseded(gone, standing)
    assert "turns 2-8" in listed and "superseded by the compaction of turns 2-10" in listed
    events.append(compaction(4, 5, f"inner {SCRIPT}"))  # a later one wins its own turns only
    standing, gone = summaries(events)
    assert [(s.from_turn, s.to_turn) for s in standing] == [(1, 3), (4, 5), (6, 9)]
    assert standing[0].own == (1, 9) and gone[0].text == "old 2-8"
    assert "<script>" not in superseded(gone, standing)
