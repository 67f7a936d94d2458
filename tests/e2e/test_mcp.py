"""MCP servers as the model's tools, end to end: a real MCP stdio server
(tests/support/mcp_server.py, the `mcp` package's server side) started by `jp q`,
its tools offered to the real SDKs pointed at the loopback fakes, confirmed,
called and recorded; each fault a server can have ends the call, never the query."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import JP, User, tool_use
from tests.support.fake_chat import FakeChat
from tests.support.fake_messages import FakeMessages
from tests.support.terminal import Terminal, raw_controls, without_styles

SERVER = Path(__file__).resolve().parents[1] / "support" / "mcp_server.py"
MODEL = '[assistant]\nmax_retries = 0\n[assistant.model]\nid = "anthropic/claude-test"\n'


def server(mode: str = "ok", extra: str = "", model: str = MODEL) -> str:
    args = json.dumps([str(SERVER), mode])
    return (
        f"{model}\n[providers.mcp.t]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = {args}\nstartup_timeout_secs = 60\n{extra}"
    )


UNATTENDED = '[providers.mcp.t.tools."*"]\nrun = "unattended"\n'


def ask(user: User, fake: FakeMessages, tool: str, **arguments: Any) -> tuple[str, dict[str, Any]]:
    """A query whose model calls ``mcp__t__TOOL`` once, then answers; its stderr and
    the recorded result."""
    fake.reply_blocks([tool_use(f"mcp__t__{tool}", **arguments)], {"last_user_contains": "go"})
    fake.reply_text("Done.")
    proc = user.run("q", "--new", "go")
    assert proc.returncode == 0, proc.stderr
    assert "Done." in proc.stdout, "the query survived the tool"
    cid = user.active()
    (result,) = [e for e in user.events(cid) if e["type"] == "tool_call_response"]
    return proc.stderr, result


def offered(fake: FakeMessages) -> list[str]:
    return [t["name"] for t in fake.requests[0].get("tools", [])]


def test_a_tool_is_offered_confirmed_called_and_recorded(online: User, fake: FakeMessages) -> None:
    online.config(server())
    fake.reply_blocks([tool_use("mcp__t__echo", text="HELLO-MCP")], {"last_user_contains": "go"})
    fake.reply_text("It said hello.")
    term = Terminal([str(JP), "q", "--new", "go"], online.env, online.root)
    shown = term.expect(b"[y/N] ")
    assert b"Run tool mcp.t.echo (MCP server `" in shown and b'{"text": "HELLO-MCP"}' in shown
    term.send("y\r")
    code, shown = term.finish()
    assert code == 0, shown
    assert b"It said hello." in shown
    assert "mcp__t__echo" in offered(fake) and "mcp__t__pid" in offered(fake)
    (result,) = [e for e in online.events(online.active()) if e["type"] == "tool_call_response"]
    assert result["content"] == "HELLO-MCP" and result.get("is_error") is not True
    assert "HELLO-MCP" in json.dumps(fake.requests[-1]), "the model read the result"
    printed = online.ok("conversation", "print")
    assert "HELLO-MCP" in printed


def test_ask_without_a_terminal_runs_nothing(online: User, fake: FakeMessages) -> None:
    online.config(server())
    _, result = ask(online, fake, "echo", text="NOT-RUN")
    assert result["is_error"] is True and "not asked to approve" in result["content"]
    said = result["content"]  # the key that lets it run, and -y
    assert 'run = "unattended" under [providers.mcp.t.tools.echo]' in said and "jp -y q" in said


def test_unattended_runs_and_skip_answers_without_running(online: User, fake: FakeMessages) -> None:
    online.config(server(extra=UNATTENDED + '[providers.mcp.t.tools.failing]\nrun = "skip"\n'))
    _, result = ask(online, fake, "echo", text="RAN-ALONE")
    assert result["content"] == "RAN-ALONE"
    _, result = ask(online, fake, "failing")
    assert result["is_error"] is True and "run = skip" in result["content"]


def test_a_disabled_tool_is_not_offered_and_a_conversation_may_only_choose(
    online: User, fake: FakeMessages
) -> None:
    online.config(server(extra=UNATTENDED + "[providers.mcp.t.tools.huge]\nenable = false\n"))
    fake.reply_text("Fine.")
    online.ok("q", "--new", "hello")
    names = offered(fake)
    assert "mcp__t__echo" in names and "mcp__t__huge" not in names
    rows = {r["name"]: r for r in online.json("tools", "ls")}
    assert rows["mcp.t.huge"]["offered"] is False and "enable = false" in rows["mcp.t.huge"]["why"]
    assert rows["mcp.t.echo"]["offered"] is True and rows["mcp.t.echo"]["why"] == "run = unattended"


def test_the_server_sees_only_its_allow_list_and_never_a_provider_key(
    online: User, fake: FakeMessages
) -> None:
    extra = UNATTENDED
    text = server(extra=extra).replace("startup_timeout_secs", 'env = ["MCP_ALLOWED"]\nstartup_timeout_secs')
    online.config(text)
    online.env.update({"MCP_ALLOWED": "yes-1", "MCP_SECRET": "no-2"})
    _, result = ask(online, fake, "env")
    env = json.loads(result["content"])
    assert env.get("MCP_ALLOWED") == "yes-1"
    assert "MCP_SECRET" not in env and "ANTHROPIC_API_KEY" not in env
    assert "test-key" not in result["content"]


def test_an_allow_list_naming_a_provider_key_is_refused(online: User) -> None:
    text = server().replace("startup_timeout_secs", 'env = ["ANTHROPIC_API_KEY"]\nstartup_timeout_secs')
    online.config(text)
    proc = online.run("q", "--new", "hello")
    assert proc.returncode != 0
    assert "providers.mcp.t.env names ANTHROPIC_API_KEY" in proc.stderr


def test_the_server_is_stopped_when_the_query_ends(online: User, fake: FakeMessages) -> None:
    online.config(server(extra=UNATTENDED))
    _, result = ask(online, fake, "pid")
    pid = int(result["content"])
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


@pytest.mark.parametrize(
    ("mode", "wait", "said"),
    [
        ("die", 60, "its last words: cannot open the database: permission denied"),
        ("slow", 1, "did not start within 1 s"),
    ],
)
def test_a_server_that_does_not_start_costs_one_line(
    online: User, fake: FakeMessages, mode: str, wait: int, said: str
) -> None:
    online.config(server(mode).replace("startup_timeout_secs = 60", f"startup_timeout_secs = {wait}"))
    fake.reply_text("Answered anyway.")
    proc = online.run("q", "--new", "hello")
    assert proc.returncode == 0, proc.stderr
    assert "Answered anyway." in proc.stdout
    warnings = [ln for ln in proc.stderr.splitlines() if "MCP server t" in ln]
    assert len(warnings) == 1 and said in warnings[0], proc.stderr
    assert "mcp__t__echo" not in offered(fake)


def test_a_missing_command_costs_one_line(online: User, fake: FakeMessages) -> None:
    online.config(MODEL + '[providers.mcp.t]\ncommand = "/nonexistent/mcp-server"\n')
    fake.reply_text("Answered anyway.")
    proc = online.run("q", "--new", "hello")
    assert proc.returncode == 0 and "Answered anyway." in proc.stdout
    assert "MCP server t did not start: command not found: /nonexistent/mcp-server" in proc.stderr


def test_a_server_speaking_junk_costs_one_line(online: User, fake: FakeMessages) -> None:
    junk = "print('\\x1b[2J this is not JSON-RPC', flush=True); import sys; sys.stdin.read()"
    online.config(
        MODEL + f'[providers.mcp.t]\ncommand = {json.dumps(sys.executable)}\n'
        f'args = ["-c", {json.dumps(junk)}]\nstartup_timeout_secs = 2\n'
    )
    fake.reply_text("Answered anyway.")
    proc = online.run("q", "--new", "hello")
    assert proc.returncode == 0 and "Answered anyway." in proc.stdout
    assert "MCP server t did not start" in proc.stderr
    assert "\x1b" not in proc.stderr


def test_a_crash_mid_call_is_an_error_result(online: User, fake: FakeMessages) -> None:
    online.config(server(extra=UNATTENDED))
    _, result = ask(online, fake, "crash")
    assert result["is_error"] is True and result["content"].startswith("tool mcp.t.crash: ")


def test_a_hung_call_times_out(online: User, fake: FakeMessages) -> None:
    online.config(server(extra=UNATTENDED).replace("startup_timeout_secs", "timeout = 1\nstartup_timeout_secs"))
    _, result = ask(online, fake, "hang")
    assert result["is_error"] is True and "no answer within 1 s" in result["content"]


def test_a_failing_result_is_an_error_result(online: User, fake: FakeMessages) -> None:
    online.config(server(extra=UNATTENDED))
    _, result = ask(online, fake, "failing")
    assert result["is_error"] is True and "the disk is on fire" in result["content"]


def test_hostile_tools_are_refused_and_output_escaped_and_bounded(
    online: User, fake: FakeMessages
) -> None:
    online.config(server("hostile", extra=UNATTENDED) + "[store]\nmax_event_bytes = 1000000\n")
    fake.reply_blocks([tool_use("mcp__t__loud")], {"last_user_contains": "go"})
    fake.reply_text("Done.")
    code, shown = Terminal([str(JP), "q", "--new", "go"], online.env, online.root).finish()
    assert code == 0, shown
    assert b"[tool] mcp.t.loud {}" in shown and b"[result] mcp.t.loud: red " in shown
    assert raw_controls(without_styles(shown).replace(b"\r", b"")) == [], "shown escaped"
    (result,) = [e for e in online.events(online.active()) if e["type"] == "tool_call_response"]
    assert "\x1b[31malert" in result["content"], "recorded as the server said it"
    names = offered(fake)
    assert not {"mcp__t__badschema", "mcp__t__bigschema", "mcp__t__" + "n" * 80} & set(names)
    assert all(n.isascii() and "\x1b" not in n for n in names)
    rows = {r["name"]: r["why"] for r in online.json("tools", "ls") if not r["offered"]}
    assert "not valid" in rows["mcp.t.badschema"] and "over 64 KB" in rows["mcp.t.bigschema"]
    assert "too long" in rows["mcp.t." + "n" * 80]
    assert any("characters" in why for why in rows.values())
    shown = online.ok("tools", "ls")
    assert "\x1b" not in shown
    _, result = ask(online, fake, "huge")
    assert re.search(r"\[jp: the output was 3000000 bytes; only the first \d+ were kept\]$", result["content"])


def test_the_openai_fake_is_offered_and_calls_a_tool(user: User) -> None:
    with FakeChat() as chat:
        user.env.update(chat.env())
        openai = '[assistant]\nmax_retries = 0\n[assistant.model]\nid = "openai/gpt-test"\n'
        user.config(server(model=openai, extra=UNATTENDED))
        chat.reply_calls([{"name": "mcp__t__echo", "arguments": {"text": "VIA-OPENAI"}}],
                         when={"last_user_contains": "go"})
        chat.reply_text("Echoed.")
        proc = user.run("q", "--new", "go")
        assert proc.returncode == 0, proc.stderr
        assert "Echoed." in proc.stdout
        names = [t["function"]["name"] for t in chat.requests[0]["tools"]]
        assert "mcp__t__echo" in names
        assert "VIA-OPENAI" in json.dumps(chat.requests[-1]["messages"][-1])


def test_tools_ls_lists_every_kind_and_a_server_that_died(user: User) -> None:
    user.config(
        server("die")
        + '[conversation.tools.date]\ncommand = "date -u"\nconfirm = false\n'
    )
    proc = user.run("tools", "ls")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert any(ln.startswith("date ") and "command" in ln and "confirm = false" in ln for ln in lines)
    assert any(ln.startswith("mcp.t ") and "not offered" in ln and "did not start" in ln for ln in lines)
    assert proc.stderr.count("MCP server t did not start") == 1


def test_a_pulled_delta_turns_off_but_never_on_what_the_users_file_turned_off(
    online: User, fake: FakeMessages, tmp_path: Path
) -> None:
    """The user's file turns `echo` off under `"*".run = "unattended"`; a pulled
    config_delta switches it on (and `pid` off): `echo` stays off, named in one
    warning, and `pid` is off."""
    from tests.e2e.test_trust_config import append_with_git, delta_event

    off = '[providers.mcp.t.tools.echo]\nenable = false\n'
    online.config(server(extra=UNATTENDED + off))
    fake.reply_text("Hello.")
    online.ok("q", "--new", "hello")
    cid = online.active()
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
    online.ok("remote", "add", "origin", str(remote))
    online.ok("push", "origin")
    chosen = {"mcp.t.echo": {"enable": True}, "mcp.t.pid": {"enable": False}}
    delta = delta_event({"conversation": {"tools": chosen}})
    hostile = append_with_git(remote, online.env, f"refs/conversations/{cid}", delta)
    online.ok("pull", "origin")
    assert online.tip(cid) == hostile
    fake.reply_blocks([tool_use("mcp__t__echo", text="RAN")], {"last_user_contains": "go"})
    fake.reply_text("Done.")
    proc = online.run("q", "go")
    assert proc.returncode == 0, proc.stderr
    names = [t["name"] for t in fake.requests[-2].get("tools", [])]
    assert "mcp__t__echo" not in names and "mcp__t__pid" not in names
    (result,) = [e for e in online.events(cid) if e["type"] == "tool_call_response"]
    assert result["is_error"] is True and "RAN" not in result["content"]
    warned = [line for line in proc.stderr.splitlines() if '"mcp.t.echo".enable' in line]
    assert len(warned) == 1 and "ignored" in warned[0], proc.stderr
    shown = online.json("config", "show", "--conversation", cid)["ignored"]
    [why] = [i["reason"] for i in shown if "mcp.t.echo" in i["key"]]
    assert "turns this tool off" in why


def _alive(pid: int) -> bool:
    """``pid`` runs (a zombie waiting for its parent to reap it is gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_the_helpers_a_server_started_are_gone_when_the_query_ends(
    online: User, fake: FakeMessages
) -> None:
    """A server that exits when its stdin closes (as MCP servers do) leaves the
    helpers it started; jp kills the server's whole process group."""
    online.config(server("spawner", extra=UNATTENDED))
    _, result = ask(online, fake, "helper")
    helper = int(result["content"])
    try:
        assert not _alive(helper), "the server's helper outlived the query"
    finally:
        with contextlib.suppress(OSError):
            os.kill(helper, 9)


def _peak_kib(user: User, *args: str) -> tuple[int, subprocess.CompletedProcess[str]]:
    """Run ``jp ARGS`` and the largest resident size (KiB) of it or its servers."""
    probe = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "sys.stderr.write(done.stderr); sys.stdout.write(done.stdout)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        "sys.exit(done.returncode)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe, str(JP), *args],
        env=user.env, cwd=user.root, capture_output=True, text=True, timeout=600,
    )
    return int(proc.stdout.strip().splitlines()[-1]), proc


def test_a_flood_result_is_cut_as_it_is_read(online: User, fake: FakeMessages) -> None:
    """A result line of 160 MB costs jp a bounded amount (its 4 MiB cap and the
    copies of it on the way to the model: about 60 MB more than a small result,
    measured), not the whole line (read whole it did not even finish in the
    call's 60 s); the model reads a cut, marked result."""
    online.config(server("flood", extra=UNATTENDED))
    fake.reply_blocks([tool_use("mcp__t__echo", text="small")], {"last_user_contains": "calm"})
    fake.reply_text("Done.")
    calm, proc = _peak_kib(online, "q", "--new", "calm")
    assert proc.returncode == 0, proc.stderr
    fake.reply_blocks([tool_use("mcp__t__flood")], {"last_user_contains": "flood"})
    fake.reply_text("Done.")
    flood, proc = _peak_kib(online, "q", "--new", "flood")
    assert proc.returncode == 0 and "Done." in proc.stdout, proc.stderr
    (result,) = [e for e in online.events(online.active()) if e["type"] == "tool_call_response"]
    assert result["content"].startswith("flood flood") and "cut as it was read" in json.dumps(
        fake.requests[-1]
    )
    assert flood - calm < 128 * 1024, (flood, calm)  # 160 MB read whole: several hundred MB


def test_every_tool_off_in_the_users_file_takes_the_mcp_tools_too(
    online: User, fake: FakeMessages
) -> None:
    """`conversation.tools."*".enable = false` in the user's file: no MCP tool is
    offered (the server is not even started); `--cfg` naming one turns it on for
    that command, and what that command recorded never turns it on later."""
    all_off = '[conversation.tools."*"]\nenable = false\n'
    online.config(server(extra=UNATTENDED) + all_off)
    fake.reply_text("Fine.")
    online.ok("q", "--new", "hello")
    assert not [n for n in offered(fake) if n.startswith("mcp__")]
    rows = {r["name"]: r for r in online.json("tools", "ls")}
    assert rows["mcp.t"]["offered"] is False and '"*".enable = false' in rows["mcp.t"]["why"]
    fake.reply_text("Echo is on.")
    online.ok("q", "--cfg", 'conversation.tools."mcp.t.echo".enable=true', "only echo")
    names = [t["name"] for t in fake.requests[-1].get("tools", [])]
    assert "mcp__t__echo" in names and "mcp__t__pid" not in names
    fake.reply_text("And now?")
    online.ok("q", "and later")
    assert not [t for t in fake.requests[-1].get("tools", []) if t["name"].startswith("mcp__")]
