"""Hostile input through the real `jp`: a remote written with plain git, a store
damaged by plain git, JP folders that are not files, a tool that prints too much.
Each time: one clear line naming what was refused, and every other conversation
still lists, shows, greps and takes queries."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.e2e.harness import User, blocks, tool_use, write_conversation
from tests.support.fake_messages import FakeMessages
from tests.support.servers.fixtures import Remote, bare_repo, every_remote
from tests.unit.sync.hostile import Hostile


def pushed(user: User, tmp_path: Path, remote: Remote | None = None) -> tuple[str, Hostile]:
    """A local conversation, pushed to a bare remote that an attacker can write (a path,
    or ``remote`` as a server serves it)."""
    cid = user.import_(write_conversation(tmp_path / "17800000201-local", 2, title="local one"))
    if remote is None:
        path = bare_repo(tmp_path / "remote.git")
        remote = Remote("path", path, str(path))
    user.env.update(remote.env)
    user.ok("remote", "add", "origin", remote.url)
    user.ok("push", "origin")
    return cid, Hostile(remote.path)


def still_works(user: User, cid: str) -> None:
    assert cid in [row["id"] for row in user.ls()]
    assert user.show(cid)["title"] == "local one"
    assert cid in user.ok("conversation", "grep", "Q01")
    user.ok("conversation", "use", cid)
    user.ok("q", "still answering?")  # the offline model
    user.fsck()


@every_remote
def test_pull_names_each_refused_ref_and_nothing_else_breaks(
    user: User, tmp_path: Path, bare_remote: Remote
) -> None:
    cid, bad = pushed(user, tmp_path, bare_remote)
    tip = user.tip(cid)
    bad.ref("refs/conversations/jp-c1", bad.blob("not a commit\n"))
    bad.ref("refs/conversations/jp-c2", bad.event(b'{"type": "turn_start", "timestamp": \n'))
    bad.ref("refs/conversations/" + "/".join(["d"] * 100), bad.tip(f"refs/conversations/{cid}"))
    bad.add_note_lines(user.anchor(cid), b'{"k": "title", "m": "x", "t": 1e400, "v": "evil"}\n')
    proc = user.fail("pull", "origin", code=1)
    lines = proc.stderr.splitlines()
    assert "refused refs/conversations/jp-c1 from origin: points at a blob, not a commit" in lines
    assert any(
        line.startswith("refused refs/conversations/jp-c2 from origin: commit ")
        and "invalid JSON" in line
        and line.endswith("kept as refs/jp/quarantine/origin/conversations/jp-c2")
        for line in lines
    ), proc.stderr
    assert any("not a conversation id" in line for line in lines)
    assert any(line.startswith("warning: origin's refs/notes/meta: the note on") for line in lines)
    assert user.tip(cid) == tip
    assert user.ref("refs/jp/quarantine/origin/conversations/jp-c2")
    rows = json.loads(user.run("-F", "json", "pull", "origin").stdout)
    mine = {r["id"]: r for r in rows if r["action"] == "refused"}
    assert mine["refs/conversations/jp-c2"]["quarantine"].endswith("conversations/jp-c2")
    still_works(user, cid)


def test_a_chain_broken_in_the_store_is_named_by_ls(user: User, tmp_path: Path) -> None:
    cid = user.import_(write_conversation(tmp_path / "17800000202-local", 2, title="local one"))
    blob = user.git("hash-object", "-w", "--stdin", input="plain git wrote this\n").strip()
    user.git("update-ref", "refs/conversations/jp-c5", blob)
    event = user.git("hash-object", "-w", "--stdin", input='{"type": "turn_start"').strip()
    tree = user.git("mktree", input=f"100644 blob {event}\tevent.json\n").strip()
    commit = user.git("commit-tree", tree, "-m", "broken").strip()
    user.git("update-ref", "refs/conversations/jp-c6", commit)
    proc = user.run("conversation", "ls")
    assert proc.returncode == 0, proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        "warning: jp-c5 cannot be read: it is a blob, not a commit",
        "warning: jp-c6 cannot be read: event.json is not JSON (Expecting ',' delimiter: line 1"
        " column 22 (char 21))",
    ]
    rows = {r["id"]: r for r in user.ls()}
    assert rows["jp-c5"]["unreadable"] and rows["jp-c6"]["unreadable"]
    assert rows[cid]["unreadable"] is None
    assert "it is a blob, not a commit" in user.fail("conversation", "show", "jp-c5").stderr
    still_works(user, cid)


def test_import_refuses_what_is_not_a_regular_file(user: User, tmp_path: Path) -> None:
    before = user.snapshot()
    fifo = tmp_path / "17800000203-fifo"
    fifo.mkdir()
    os.mkfifo(fifo / "events.json")
    zero = tmp_path / "17800000204-zero"
    zero.mkdir()
    (zero / "events.json").symlink_to("/dev/zero")
    huge = tmp_path / "17800000205-huge"
    huge.mkdir()
    with (huge / "events.json").open("wb") as f:
        f.truncate(300 * 1024 * 1024)  # sparse: neither disk nor memory
    for folder, reason in (
        (fifo, "a FIFO (named pipe)"),
        (zero, "a device"),
        (huge, "over the limit"),
    ):
        proc = user.fail("conversation", "import", str(folder), code=1)
        assert proc.stderr.splitlines() == [
            f"error: {folder / 'events.json'}: is {reason}, not a regular file"
            if reason != "over the limit"
            else f"error: {folder / 'events.json'}: is 300.0 MiB, over the limit of 256.0 MiB"
        ]
    assert user.snapshot() == before
    user.fsck()


def test_a_tool_result_over_the_limit_is_kept_cut(
    online: User, fake: FakeMessages, tmp_path: Path
) -> None:
    online.config(
        '[assistant.model]\nid = "anthropic/claude-test"\n'
        "[store]\nmax_event_bytes = 20000\n"
        "[conversation.tools.flood]\n"
        'command = ["python3", "-c", "print(\'F\' * 100000)"]\n'
        "confirm = false\n"
    )
    fake.reply_blocks([tool_use("flood")], when={"last_user_contains": "flood me"})
    fake.reply_text("Read it.", when={"last_user_contains": "were kept]"})
    online.ok("q", "--new", "flood me")
    result = next(e for e in online.events(online.active()) if e["type"] == "tool_call_response")
    kept, marker = result["content"].split("\n[jp: ")
    # the output is read bounded: kept up to half the event limit here, the rest counted
    assert set(kept) == {"F"} and 5_000 <= len(kept) < 20_000
    assert marker == f"the output was 100001 bytes; only the first {len(kept)} were kept]"
    sent = blocks(fake.requests[-1], "tool_result")[0]["content"]
    assert "only the first" in json.dumps(sent), (
        "the model saw another text"
    )
