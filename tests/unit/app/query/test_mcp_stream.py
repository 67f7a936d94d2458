"""A server's stdout read with a bound per line: a long result line is cut as it
is read and answered with what its first part said; other lines pass whole."""

from __future__ import annotations

import json

import anyio

from porcelain.app.query.mcp_stream import CappedLines, cut_response


class Chunks:
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if not self.chunks:
            raise anyio.EndOfStream
        return self.chunks.pop(0)

    async def aclose(self) -> None:
        pass


def read(chunks: list[bytes], limit: int) -> list[bytes]:
    async def run() -> bytes:
        return b"".join([piece async for piece in CappedLines(Chunks(chunks), limit)])

    return [line for line in anyio.run(run).split(b"\n") if line]


def test_a_long_line_is_cut_while_read_and_the_others_pass() -> None:
    text = "caf\u00e9 " * 50 + "x" * 5000
    big = json.dumps({"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": text}]}})
    big_bytes = big.encode() + b"\n"
    lines = read([b'{"a":1}\n', big_bytes[:700], big_bytes[700:], b'{"b":2}\n{"c"', b":3}"], 2000)
    assert [json.loads(line) for line in (lines[0], lines[2], lines[3])] == [{"a": 1}, {"b": 2}, {"c": 3}]
    cut = json.loads(lines[1])
    said = cut["result"]["content"][0]["text"]
    assert cut["id"] == 7 and said.startswith("caf\u00e9 caf\u00e9") and "cut as it was read" in said
    assert len(said) < 2100


def test_a_cut_line_that_names_no_request_ends_the_stream() -> None:
    assert cut_response(b'{"jsonrpc":"2.0","method":"x","params":"' + b"y" * 100) is None
    lines = read([b'{"a":1}\n', b'{"method":"x","params":"' + b"y" * 5000 + b'"}\n', b'{"b":2}\n'], 2000)
    assert lines == [b'{"a":1}']
