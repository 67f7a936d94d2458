"""Remotes a fetch beside the store cannot serve, and the fetch in the store that
takes over, with the same result:

- a server that offers no shallow capability (the copies beside the store are
  offered as shallow): git refuses the fetch there, saying so;
- a remote served as plain files over HTTP (git's dumb HTTP: no ``upload-pack``,
  no negotiation): git's walker writes what it fetches as loose objects.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitstore.sync.pull import Syncer
from gitstore.sync.push import push
from tests.support.servers.fixtures import Servers
from tests.support.servers.http import HttpServer
from tests.unit.sync.test_sync_processes import GIT, calls, counting_git, machine, start

pytestmark = pytest.mark.skipif(GIT is None, reason="these run git")


def served(tmp_path: Path) -> Path:
    """A bare remote that refreshes ``info/refs`` after every push (as a dumb
    HTTP server's repositories must)."""
    assert GIT is not None
    remote = tmp_path / "remote.git"
    subprocess.run([GIT, "init", "--bare", "-q", str(remote)], check=True)
    hook = remote / "hooks" / "post-update"
    hook.write_text("#!/bin/sh\nexec git update-server-info\n")
    hook.chmod(0o755)
    return remote


def pair(tmp_path: Path) -> tuple[Syncer, Path, dict[str, str]]:
    """A laptop that pushed one conversation to a served remote; the remote, and
    the environment its gits run in."""
    assert GIT is not None
    remote = served(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    laptop = machine(tmp_path, "laptop", str(remote), GIT, env)
    laptop.here.log.create("jp-c1", [start("jp-c1")], None, "test")
    push(laptop)
    return laptop, remote, env


def pulled_twice(laptop: Syncer, desktop: Syncer, log: Path) -> list[str]:
    """The desktop pulls the conversation, the laptop adds to it, the desktop pulls
    that: the gits that fetched in the second pull, in order."""
    assert {o.id for o in desktop.pull() if o.action == "created"} == {"jp-c1"}
    tip = laptop.here.refs.require("jp-c1").tip
    event = {"type": "chat_request", "timestamp": "2026-01-05T09:30:00Z", "content": "more"}
    new = laptop.here.log.append("jp-c1", [event], tip, "test")
    push(laptop)
    log.unlink()
    assert [o.id for o in desktop.pull() if o.kind == "conversation"] == ["jp-c1"]
    assert desktop.here.refs.require("jp-c1").tip == new
    assert not list((desktop.here.place.gitdir / "jp").glob("fetch-*"))
    return [c for c in calls(log) if " fetch " in c]


def test_a_pull_over_dumb_http_falls_back_to_the_store(
    tmp_path: Path, git_servers: Servers
) -> None:
    assert GIT is not None
    server = git_servers.get("http")
    assert isinstance(server, HttpServer)
    laptop, remote, env = pair(tmp_path)
    counting, log = counting_git(tmp_path)
    desktop = machine(tmp_path, "desktop", server.dumb_url(remote), counting, env)
    fetches = pulled_twice(laptop, desktop, log)
    beside = [c for c in fetches if "/jp/fetch-" in c]
    assert beside and len(fetches) > len(beside), fetches  # tried beside, then in the store
    # every object of the conversation is here (git's dumb walker stores no empty
    # tree, which git counts as had: the journal's commits name it)
    new = desktop.here.refs.require("jp-c1").tip
    walked = subprocess.run(
        [GIT, "--git-dir", str(desktop.here.place.gitdir), "rev-list", "--objects", new],
        capture_output=True, text=True,
    )  # fmt: skip
    assert walked.returncode == 0, walked.stderr


# git-upload-pack, with the shallow capability taken out of its advertisement
# (protocol v0, which the client is set to; the rest passed through as it comes)
NO_SHALLOW = """\
import os, subprocess, sys, threading
env = {k: v for k, v in os.environ.items() if k != "GIT_PROTOCOL"}
child = subprocess.Popen(["git-upload-pack", *sys.argv[1:]], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, env=env)
def feed():
    while True:
        data = os.read(0, 65536)
        if not data:
            break
        try:
            os.write(child.stdin.fileno(), data)
        except BrokenPipeError:
            break
    child.stdin.close()
threading.Thread(target=feed, daemon=True).start()
src = child.stdout.fileno()
def exactly(n):
    buf = b""
    while len(buf) < n:
        part = os.read(src, n - len(buf))
        if not part:
            break
        buf += part
    return buf
first = exactly(int(exactly(4), 16) - 4).replace(b" shallow", b"")
os.write(1, b"%04x" % (len(first) + 4) + first)
while True:
    data = os.read(src, 65536)
    if not data:
        break
    os.write(1, data)
os._exit(child.wait())
"""


def test_a_server_without_shallow_clients_is_fetched_from_the_store(tmp_path: Path) -> None:
    laptop, remote, env = pair(tmp_path)
    wrapper = tmp_path / "no-shallow-upload-pack"
    wrapper.write_text(f"#!{sys.executable}\n{NO_SHALLOW}")
    wrapper.chmod(0o755)
    counting, log = counting_git(tmp_path)
    desktop = machine(tmp_path, "desktop", str(remote), counting, env)
    config = desktop.here.place.gitdir / "config"
    config.write_text(
        config.read_text() + f"[protocol]\n\tversion = 0\n[remote \"origin\"]\n\tuploadpack = {wrapper}\n"
    )
    fetches = pulled_twice(laptop, desktop, log)
    assert [("/jp/fetch-" in c) for c in fetches] == [True, False, True, False], fetches
