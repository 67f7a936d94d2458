"""Nothing `jp serve` needs is imported by the other commands (design section 8:
their start-up is unchanged): no server, page or Markdown module."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.e2e.harness import JP, RUST, User

pytestmark = pytest.mark.e2e
SERVED = ("porcelain.serve", "markdown_it", "http.server", "socketserver")
PROBE = """
import runpy, sys
sys.argv = sys.argv[1:]
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
except SystemExit:
    pass
sys.stderr.write("\\nLOADED " + ",".join(sorted(m for m in sys.modules if m.startswith(SERVED))) + "\\n")
"""


def loaded(user: User, *args: str) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-c", f"SERVED = {SERVED!r}\n{PROBE}", str(JP), *args],
        env=user.env,
        cwd=user.root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    line = proc.stderr.rsplit("LOADED ", 1)[1].strip()
    return set(line.split(",")) - {""}


def test_other_commands_load_nothing_of_serve(user: User) -> None:
    cid = user.import_(RUST)
    for args in (
        ["--help"],
        ["conversation", "ls"],
        ["conversation", "print", cid],
        ["serve", "--help"],
    ):
        assert not loaded(user, *args), args


def test_the_probe_sees_what_serve_loads(user: User) -> None:
    """`serve` on a port already taken fails after loading the server: the probe sees it."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        found = loaded(user, "serve", "--port", str(taken.getsockname()[1]))
    assert "porcelain.serve.server" in found
