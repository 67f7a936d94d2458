"""Commands that call no model never import the anthropic SDK (design section 8).

The probe runs the installed `jp` entry point itself in a subprocess and
reports, after the command finished, whether `anthropic` was imported, and
which of the view, compaction and review modules were (`show` and `print` of a
plain conversation need none of them, and must start fast).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.harness import JP, RUST, TRACEBACK, WITH_COMPACTION, User
from tests.support.fake_messages import FakeMessages

PROBE = """
import runpy, sys
sys.argv = [sys.argv[1], *sys.argv[2:]]
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
except SystemExit as exc:
    code = exc.code
else:
    code = 0
heavy = sorted(m for m in sys.modules if m.startswith(HEAVY)) or ["-"]
sys.stderr.write(
    f"\\nPROBE code={code} anthropic={'anthropic' in sys.modules} heavy={','.join(heavy)}\\n"
)
"""
HEAVY = (
    "porcelain.domain.view",
    "porcelain.domain.compaction",
    "porcelain.domain.review",
    "porcelain.app.compaction",
    "porcelain.app.review",
    "pygit2._pygit2",
    "mcp",
)
MCP_SERVER = Path(__file__).resolve().parents[1] / "support" / "mcp_server.py"
LIBGIT2 = "pygit2._pygit2"  # the compiled module: bound lazily, it is loaded on first use


def probe(user: User, *args: str) -> tuple[int, bool]:
    code, fields = run_probe(user, *args)
    return code, fields["anthropic"] == "True"


def heavy_modules(user: User, *args: str) -> set[str]:
    """The view, compaction, review and libgit2 modules that `jp ARGS` imported."""
    code, fields = run_probe(user, *args)
    assert code == 0, args
    return set(fields["heavy"].split(",")) - {"-"}


def run_probe(user: User, *args: str) -> tuple[int, dict[str, str]]:
    proc = subprocess.run(
        [sys.executable, "-c", f"HEAVY = {HEAVY!r}\n{PROBE}", str(JP), *args],
        env=user.env,
        cwd=user.root,
        capture_output=True,
        text=True,
        timeout=120,
        input="",
    )
    assert TRACEBACK not in proc.stderr, proc.stderr
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith("PROBE "), proc.stderr
    fields = dict(item.split("=") for item in line.split()[1:])
    code = 0 if fields["code"] == "None" else int(fields["code"])
    return code, fields


@pytest.fixture
def keyed(user: User) -> User:
    """A user whose environment has a key and an anthropic model configured."""
    user.env["ANTHROPIC_API_KEY"] = "test-key"
    user.env["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:9"
    user.config('[assistant.model]\nid = "anthropic/claude-test"\n')
    return user


def test_commands_without_a_model_do_not_import_the_sdk(keyed: User) -> None:
    cid = keyed.import_(RUST)
    keyed.ok("conversation", "use", cid)
    for args in (
        ["--help"],
        ["conversation", "--help"],
        ["conversation", "ls"],
        ["conversation", "show"],
        ["conversation", "print", cid],
        ["conversation", "print", "--compacted", cid],
        ["conversation", "compact", "--dry-run"],
        ["conversation", "grep", "clippy"],
        ["init"],
    ):
        code, imported = probe(keyed, *args)
        assert code == 0, args
        assert not imported, f"`jp {' '.join(args)}` imported anthropic"


def test_a_configured_mcp_server_is_loaded_only_by_a_query(user: User, fake: FakeMessages) -> None:
    """`jp --help` and `ls` with an MCP server configured import no `mcp`; a query does."""
    user.connect(fake.env())
    server = json.dumps([str(MCP_SERVER)])
    user.config(
        '[assistant.model]\nid = "anthropic/claude-test"\n'
        f"[providers.mcp.t]\ncommand = {json.dumps(sys.executable)}\nargs = {server}\n"
    )
    for args in (["--help"], ["conversation", "ls"], ["config", "show"]):
        assert not {m for m in heavy_modules(user, *args) if m.startswith("mcp")}, args
    fake.reply_text("hello back")
    code, fields = run_probe(user, "q", "--new", "hello")
    assert code == 0 and "mcp" in fields["heavy"].split(","), "the probe must notice mcp"


def test_the_probe_sees_an_sdk_import(user: User, fake: FakeMessages) -> None:
    user.connect(fake.env())
    fake.reply_text("hello back")
    code, imported = probe(user, "q", "--new", "hello")
    assert code == 0 and imported, "the probe must notice the SDK when a query uses it"


def test_show_and_print_of_a_plain_conversation_load_no_compaction_or_review_module(
    user: User,
) -> None:
    plain = user.import_(RUST)
    user.ok("conversation", "use", plain)
    for args in (
        ["conversation", "show"],
        ["conversation", "print"],
        ["conversation", "print", "--style", "full", plain],
    ):
        loaded = heavy_modules(user, *args) - {LIBGIT2}
        assert not loaded, f"`jp {' '.join(args)}` imported {sorted(loaded)}"
    compacted = user.import_(WITH_COMPACTION)
    shown = heavy_modules(user, "conversation", "show", compacted)
    assert "porcelain.domain.compaction.overlays" in shown
    printed = heavy_modules(user, "conversation", "print", "--compacted", plain)
    assert "porcelain.domain.view" in printed


def test_reading_commands_on_a_warm_cache_do_not_load_libgit2(user: User) -> None:
    """Refs are read as files and events, notes and summaries from the cache."""
    plain = user.import_(RUST)
    user.ok("conversation", "use", plain)
    user.ok("conversation", "edit", plain, "--title", "warm")
    reads = (
        ["conversation", "show"],
        ["conversation", "print"],
        ["conversation", "ls"],
        ["conversation", "ls", "--archived"],
    )
    for args in reads:  # the first run may fill the cache from git
        heavy_modules(user, *args)
    for args in reads:
        assert LIBGIT2 not in heavy_modules(user, *args), f"`jp {' '.join(args)}` loaded libgit2"
    assert "warm" in user.ok("conversation", "show")
    # a change made with plain git is seen: the cache is keyed by the tips
    user.git("update-ref", "-d", f"refs/conversations/{plain}")
    assert plain not in user.ok("conversation", "ls")
    # and a write loads libgit2, as it must
    assert LIBGIT2 in heavy_modules(user, "q", "--new", "hello")
