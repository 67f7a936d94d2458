"""Other tools' sessions under faults: `jp conversation import --from ...` killed at each
write, beside a looping `git gc`, and fed hostile lines and records.

After a kill, every conversation is either absent or holds exactly the records of a
file (nothing half-imported, nothing lost), and the next import completes the rest.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.harness import Conversation, Sandbox

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sessions"
PROJECT = "-home-me-demo"
SESSION = "5b9f0c1e-1111-4a2b-9c3d-000000000001"
MAIN = f"{PROJECT}/{SESSION}.jsonl"
AGENT = f"{PROJECT}/{SESSION}/subagents/agent-a1b2c3.jsonl"


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def kept(conv: Conversation) -> list[dict[str, Any]]:
    """The source records a conversation holds, read with git alone."""
    out = []
    for event in conv.events:
        record = event.get("record") if event.get("type") == "source_record" else None
        record = record or (event.get("metadata") or {}).get("source_record")
        if isinstance(record, dict):
            out.append(record)
    return out


def origin(conv: Conversation) -> dict[str, Any] | None:
    starts = [e for e in conv.events if e.get("type") == "conversation_start"]
    return starts[-1].get("imported") if starts else None


def by_path(box: Sandbox) -> dict[str, Conversation]:
    out: dict[str, Conversation] = {}
    for conv in box.conversations().values():
        found = origin(conv)
        if found and found.get("path"):
            assert found["path"] not in out, f"{found['path']} imported twice"
            out[found["path"]] = conv
    return out


def big_session(root: Path, count: int) -> Path:
    """A Claude Code session of ``count`` prompts and answers (a packed write)."""
    path = root / PROJECT / "big.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        for n in range(count):
            at = f"2026-03-01T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}.000Z"
            role = "user" if n % 2 == 0 else "assistant"
            message: dict[str, Any] = {"role": role, "content": f"line {n} of a long session"}
            if role == "assistant":
                message = {
                    **message,
                    "id": f"msg_{n}",
                    "content": [{"type": "text", "text": f"answer {n}"}],
                }
            handle.write(
                json.dumps(
                    {
                        "type": role,
                        "sessionId": "big",
                        "uuid": f"u{n}",
                        "timestamp": at,
                        "message": message,
                    }
                )
                + "\n"
            )
    return path


@pytest.fixture
def box(tmp_path: Path) -> Sandbox:
    sandbox = Sandbox(tmp_path / "box")
    sandbox.ok("init")
    return sandbox


@pytest.mark.parametrize(
    # one import writes its new sessions as one batch: its packs, then every ref, then
    # the operation's record (a kill there leaves the refs, recorded by the next command)
    "fault", ["pack:chunk-written@1", "create:objects-written@1", "oplog:objects-written@1"]
)
def test_an_import_killed_at_each_write_leaves_whole_sessions(
    box: Sandbox, tmp_path: Path, fault: str
) -> None:
    root = tmp_path / "projects"
    shutil.copytree(FIXTURES / "claude-code", root)
    big_session(root, 1200)
    files = {
        MAIN: root / MAIN,
        AGENT: root / AGENT,
        f"{PROJECT}/big.jsonl": root / PROJECT / "big.jsonl",
    }
    box.kill(fault, "conversation", "import", "--from", "claude-code", str(root))
    box.fsck()
    for rel, conv in by_path(box).items():
        assert kept(conv) == lines_of(files[rel]), f"{rel} is half-imported"
    box.ok("conversation", "import", "--from", "claude-code", str(root))
    box.fsck()
    done = by_path(box)
    assert set(done) == set(files)
    for rel, conv in done.items():
        assert kept(conv) == lines_of(files[rel])
    assert not list((box.store / "jp" / "packing").glob("*")), "a killed bulk writer's packs remain"


def test_an_update_killed_before_its_ref_moves_is_done_by_the_next_import(
    box: Sandbox, tmp_path: Path
) -> None:
    root = tmp_path / "projects"
    (root / PROJECT).mkdir(parents=True)
    whole = (FIXTURES / "claude-code" / MAIN).read_text(encoding="utf-8").splitlines(keepends=True)
    (root / MAIN).write_text("".join(whole[:8]), encoding="utf-8")
    box.ok("conversation", "import", "--from", "claude-code", str(root))
    before = by_path(box)[MAIN]
    (root / MAIN).write_text("".join(whole), encoding="utf-8")
    box.kill("append:objects-written", "conversation", "import", "--from", "claude-code", str(root))
    box.fsck()
    assert by_path(box)[MAIN].tip == before.tip
    box.ok("conversation", "import", "--from", "claude-code", str(root))
    after = by_path(box)[MAIN]
    assert after.events[: len(before.events)] == before.events, "history was rewritten"
    assert kept(after) == lines_of(root / MAIN)


def test_git_gc_looping_beside_an_import_breaks_nothing(box: Sandbox, tmp_path: Path) -> None:
    root = tmp_path / "projects"
    path = big_session(root, 1500)
    stop = threading.Event()
    rounds = [0]

    def maintain() -> None:
        while not stop.is_set():
            # git's own gc as its auto gc runs it (`--prune=now` is unsafe beside any writer)
            subprocess.run(
                ["git", "--git-dir", str(box.store), "gc", "--quiet"],
                env=box.env,
                capture_output=True,
            )
            rounds[0] += 1

    gc = threading.Thread(target=maintain, daemon=True)
    gc.start()
    try:
        box.ok("conversation", "import", "--from", "claude-code", str(root))
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(
                json.dumps({"type": "summary", "summary": "more", "leafUuid": "u1"}) + "\n"
            )
        box.ok("conversation", "import", "--from", "claude-code", str(root))
    finally:
        stop.set()
        gc.join(timeout=120)
    assert rounds[0] > 0
    box.fsck()
    assert kept(by_path(box)[f"{PROJECT}/big.jsonl"]) == lines_of(path)


# -- hostile lines and records ------------------------------------------------------------


def test_hostile_lines_are_named_and_skipped(box: Sandbox, tmp_path: Path) -> None:
    root = tmp_path / "projects"
    (root / PROJECT).mkdir(parents=True)
    good = lines_of(FIXTURES / "claude-code" / MAIN)
    deep = "[" * 300 + "]" * 300
    bad = [
        b"{not json",
        b"[1, 2, 3]",
        b'{"type": "user", "n": NaN}',
        b'{"type": "user", "s": "\\ud800"}',
        b"\xff\xfe{}",
        deep.encode(),
        b'{"type": "user", "big": "' + b"x" * (4 << 20) + b'"}',
    ]
    lines = [json.dumps(good[0]).encode(), *bad, *(json.dumps(r).encode() for r in good[1:])]
    (root / MAIN).write_bytes(b"\n".join(lines) + b"\n")
    proc = box.run("conversation", "import", "--from", "claude-code", str(root))
    assert proc.returncode == 0, proc.stderr
    named = [ln for ln in proc.stderr.splitlines() if f"{MAIN}:" in ln]
    assert [ln.split(f"{MAIN}:")[1].split(":")[0] for ln in named] == [str(n) for n in range(2, 9)]
    assert "7 lines skipped" in proc.stdout
    assert kept(by_path(box)[MAIN]) == good
    box.fsck()


def test_records_that_name_hooks_settings_and_paths_configure_nothing(
    box: Sandbox, tmp_path: Path
) -> None:
    root = tmp_path / "projects"
    (root / PROJECT).mkdir(parents=True)
    planted = tmp_path / "PWNED"
    hostile = [
        {
            "type": "user",
            "sessionId": "evil",
            "timestamp": "2026-01-01T00:00:00Z",
            "cwd": str(tmp_path),
            "message": {"role": "user", "content": "\x1b]0;title\x07\x1b[31mred words"},
            "hooks": {"Stop": [{"hooks": [{"type": "command", "command": f"touch {planted}"}]}]},
        },
        {
            "type": "system",
            "subtype": "settings",
            "timestamp": "2026-01-01T00:00:01Z",
            "sessionId": "evil",
            "settings": {
                "env": {"ANTHROPIC_BASE_URL": "http://attacker.invalid"},
                "model": "evil/model",
            },
            "apiKeyHelper": f"touch {planted}",
        },
        {
            "type": "assistant",
            "sessionId": "evil",
            "timestamp": "2026-01-01T00:00:02Z",
            "message": {
                "id": "m1",
                "role": "assistant",
                "model": "attacker/model",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_../../x",
                        "name": "\x1b[2Jrm -rf /",
                        "input": {"c": "x"},
                    }
                ],
            },
        },
    ]
    (root / MAIN).write_text("".join(json.dumps(r) + "\n" for r in hostile), encoding="utf-8")
    config = box.ok("config", "show")
    box.ok("conversation", "import", "--from", "claude-code", str(root))
    assert not planted.exists()
    assert box.ok("config", "show") == config
    conv = by_path(box)[MAIN]
    deltas = [e for e in conv.events if e.get("type") == "config_delta"]
    assert not deltas, "a record became configuration"
    listing = box.ok("conversation", "ls", "--all") + box.ok("conversation", "show", conv.cid)
    assert "\x1b" not in listing
    assert kept(conv) == hostile


def test_an_export_never_writes_outside_its_folder(box: Sandbox, tmp_path: Path) -> None:
    """A conversation whose recorded path climbs out (say, pulled from a remote)."""
    root = tmp_path / "projects"
    shutil.copytree(FIXTURES / "claude-code", root)
    box.ok("conversation", "import", "--from", "claude-code", str(root / MAIN))
    conv = by_path(box)[MAIN]
    start = next(e for e in conv.events if e.get("type") == "conversation_start")
    start["imported"]["path"] = "../../escaped.jsonl"
    blob = box.git(
        "hash-object", "-w", "--stdin", input=json.dumps(start, sort_keys=True) + "\n"
    ).strip()
    tree = box.git("mktree", input=f"100644 blob {blob}\tevent.json\n").strip()
    commit = box.git("commit-tree", tree, "-m", "start: tampered").strip()
    box.git("update-ref", conv.ref, commit)
    out = tmp_path / "deep" / "out"
    proc = box.fail("conversation", "export", "--to", "claude-code", conv.cid, "-o", str(out))
    assert "cannot be written" in proc.stderr
    assert (
        not (tmp_path / "escaped.jsonl").exists()
        and not (tmp_path / "deep" / "escaped.jsonl").exists()
    )


def test_two_imports_at_once_make_each_session_once(box: Sandbox, tmp_path: Path) -> None:
    """Claude Code's Stop and SessionEnd hooks may both fire: the second import waits."""
    root = tmp_path / "projects"
    shutil.copytree(FIXTURES / "claude-code", root)
    big_session(root, 1200)
    procs = [
        box.popen("conversation", "import", "--from", "claude-code", str(root)) for _ in range(2)
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    done = by_path(box)  # asserts that no file was imported twice
    assert set(done) == {MAIN, AGENT, f"{PROJECT}/big.jsonl"}
    box.fsck()


# -- an import that both appends and forks ------------------------------------------------


def _session_copy(text: str, session: str) -> str:
    return text.replace(SESSION, session)


@pytest.mark.parametrize("fault", ["append:objects-written", "create:objects-written"])
def test_an_import_that_appends_and_forks_killed_is_completed_by_the_next(
    box: Sandbox, tmp_path: Path, fault: str
) -> None:
    """One file grew (an append); another grew beside a jp turn (a fork, the tool's
    branch): killed at either write, nothing is half-written, and the next import
    completes both without moving the conversation that holds the jp turn."""
    root = tmp_path / "projects"
    (root / PROJECT).mkdir(parents=True)
    whole = (FIXTURES / "claude-code" / MAIN).read_text(encoding="utf-8").splitlines(keepends=True)
    grows, beside = root / MAIN, root / PROJECT / "zz.jsonl"
    grows.write_text("".join(whole[:8]), encoding="utf-8")
    beside.write_text(_session_copy("".join(whole[:8]), "other"), encoding="utf-8")
    box.ok("conversation", "import", "--from", "claude-code", str(root))
    first = {origin(c)["path"]: c for c in box.conversations().values() if origin(c)}
    jp_side = first[f"{PROJECT}/zz.jsonl"].cid
    box.ok("q", "-i", jp_side, "a jp turn")
    jp_tip = box.conversations()[jp_side].tip
    grows.write_text("".join(whole), encoding="utf-8")
    beside.write_text(_session_copy("".join(whole), "other"), encoding="utf-8")
    box.kill(fault, "conversation", "import", "--from", "claude-code", str(root))
    box.fsck()
    for conv in box.conversations().values():
        found = origin(conv)
        if found and found.get("replaces"):  # the tool's branch: whole or absent
            assert kept(conv) == lines_of(beside)
        elif found and found["path"] == MAIN:
            assert kept(conv) in (kept(first[MAIN]), lines_of(grows))
    assert box.conversations()[jp_side].tip == jp_tip
    box.ok("conversation", "import", "--from", "claude-code", str(root))
    box.fsck()
    convs = box.conversations()
    assert convs[jp_side].tip == jp_tip, "the conversation with the jp turn moved"
    (branch,) = [c for c in convs.values() if (origin(c) or {}).get("replaces") == jp_side]
    assert kept(branch) == lines_of(beside)
    assert origin(branch)["because"] == "continues"
    (main,) = [c for c in convs.values() if (origin(c) or {}).get("path") == MAIN]
    assert kept(main) == lines_of(grows)
