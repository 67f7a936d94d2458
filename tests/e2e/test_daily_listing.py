"""`ls` says where each conversation came from and filters; `show` names the fork
parent and a divergence; pull names a divergence on both machines."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.e2e.harness import NO_MARKERS, RUST, User
from tests.support.sandbox import ID
from tests.support.servers.fixtures import Remote
from tests.support.sync_machine import Machine
from tests.support.terminal import raw_controls, run_on_terminal, without_styles

HOSTILE = "\x1b]0;PWNED\x07evil \x9b2J title\nfake row"


def test_ls_rows_have_times_markers_and_lineage(user: User) -> None:
    source = user.import_(RUST)
    fork = user.json("conversation", "fork", source, "--title", "my fork")["id"]
    user.ok("conversation", "edit", source, "--pin")
    rows = {r["id"]: r for r in user.ls()}
    assert rows[fork]["forked_from"] == source and rows[source]["forked_from"] is None
    for row in rows.values():
        assert row["diverged_from"] is None
        assert row["created_at"].endswith("Z") and row["last_event_at"].endswith("Z")
        assert row["id"].startswith(row["short_id"]) and len(row["short_id"]) > len("jp-c")
    lines = user.ok("conversation", "ls").splitlines()
    assert lines[0].split() == ["ID", "AGE", "TURNS", "TITLE"]
    by_id = {ln.split()[0].rstrip("*"): ln for ln in lines[1:]}
    assert f"[fork of {source}] my fork" in by_id[fork]
    assert "[pinned] Setting up a Rust CLI" in by_id[source]
    assert "ago" in by_id[source] or "-" in by_id[source]


def test_ls_filters_sort_and_limit(user: User) -> None:
    rust = user.import_(RUST)
    plain = user.import_(NO_MARKERS)
    user.ok("conversation", "edit", plain, "--label", "area=cli", "--label", "draft")
    user.ok("conversation", "edit", rust, "--pin", "--label", "area=docs")

    def ids(*flags: str) -> list[str]:
        return [r["id"] for r in user.ls(*flags)]

    assert ids("--pinned") == [rust]
    assert ids("--label", "area") == [rust, plain] or ids("--label", "area") == [plain, rust]
    assert ids("--label", "area=cli") == [plain]
    assert ids("--label", "area=cli", "--label", "draft") == [plain]
    assert ids("--label", "draft=yes") == []
    assert ids("--title", "rust cli") == [rust]
    assert ids("--since", "2000-01-01") != [] and ids("--since", "1s") == []
    assert ids("--sort", "id") == [rust, plain]
    assert ids("--sort", "id", "--reverse") == [plain, rust]
    assert ids("--sort", "turns") == [plain, rust]
    assert ids("--sort", "id", "--limit", "1") == [plain]
    assert user.ok("conversation", "ls", "--pinned", "--title", "nothing like it") == (
        "No conversations match.\n"
    )
    for bad in (["--since", "yesterday-ish"], ["--label", "1bad"]):
        proc = user.fail("conversation", "ls", *bad)
        assert proc.stderr.startswith("error: "), proc.stderr


def test_ls_highlights_the_unique_prefix_only_on_a_colour_terminal(
    user: User, tmp_path: Path
) -> None:
    user.import_(RUST)
    user.import_(NO_MARKERS)
    piped = user.ok("conversation", "ls")
    assert "\x1b" not in piped
    code, out = run_on_terminal(("conversation", "ls"), user.env, user.root)
    assert code == 0, out
    assert b"\x1b[1;35mjp-c17800000101\x1b[0m" in out, out  # unique only when whole
    assert raw_controls(without_styles(out)) == [], out


def note_line(key: str, value: object) -> str:
    return json.dumps({"k": key, "m": "elsewhere", "t": 1, "v": value})


def test_hostile_metadata_is_escaped_in_ls_and_show(user: User) -> None:
    cid = user.import_(RUST)
    other = user.import_(NO_MARKERS)
    lines = [
        note_line("title", HOSTILE),
        note_line("diverged_from", other),
        note_line("diverged_remote", "or\x1b[31migin\nfake"),
        note_line("diverged_at_commit", "\x1b[2J" + "a" * 40),
    ]
    anchor = user.anchor(cid)
    user.git("notes", "--ref=meta", "add", "-f", "-m", "\n".join(lines), anchor)
    rows = {r["id"]: r for r in user.ls()}
    assert rows[cid]["diverged_from"] == other and rows[cid]["title"] == HOSTILE
    for args in (("conversation", "ls"), ("conversation", "show", cid)):
        code, out = run_on_terminal(args, user.env, user.root)
        assert code == 0, out
        assert raw_controls(without_styles(out)) == [], (args, out)
        assert b"PWNED" in out
        text = without_styles(out).decode().replace("\r\n", "\n")
        assert "fake row" not in text.replace("\\nfake row", ""), "a newline faked a row"
    piped = user.ok("conversation", "ls").splitlines()
    assert len(piped) == 3, piped
    user.git(
        "notes", "--ref=meta", "add", "-f", "-m", note_line("diverged_from", "../x\x1b"), anchor
    )
    assert {r["id"]: r for r in user.ls()}[cid]["diverged_from"] is None, "not an id: ignored"


def test_show_names_the_fork_parent(user: User) -> None:
    source = user.import_(RUST)
    fork = user.json("conversation", "fork", source)["id"]
    info = user.show(fork)
    assert info["forked_from"] == source and info["fork_commit"] == user.tip(source)
    assert info["diverged_from"] is None and info["divergence"] is None
    assert f"Fork of:      {source} at {user.tip(source)[:12]}" in user.ok(
        "conversation", "show", fork
    )
    assert user.show(source)["forked_from"] is None


def test_a_divergence_is_named_on_both_machines(pair: tuple[Machine, Machine, Path]) -> None:
    laptop, desktop, _ = pair
    cid = laptop.new("shared start")
    laptop.ok("push")
    desktop.ok("pull")
    desktop.ok("conversation", "use", cid)
    laptop.ok("q", "LAPTOP-ONE")
    desktop.ok("q", "DESKTOP-ONE")
    laptop.ok("push")
    out = desktop.ok("pull")
    (moved,) = [ln for ln in out.splitlines() if ln.startswith(f"{cid}: diverged")]
    new = ID.findall(moved)[-1]
    info = desktop.json("conversation", "show", new)
    assert info["diverged_from"] == cid
    facts = info["divergence"]
    assert facts["remote"] == "origin" and facts["reason"] == "diverged"
    assert facts["commit"] and facts["at"] and facts["at"].endswith("Z")
    assert facts["commit"] in desktop.git("rev-list", desktop.tip(cid)).split()
    text = desktop.ok("conversation", "show", new)
    assert f"Diverged:     from {cid} (continued on origin; shared history up to" in text
    row = [r for r in desktop.json("conversation", "ls") if r["id"] == new][0]
    assert row["diverged_from"] == cid
    desktop.ok("push")
    seen = laptop.ok("pull")
    assert f"{new}: continues {cid} from another machine" in seen, seen
    rows = [r for r in laptop.json("pull") if r.get("continues")]
    assert rows == [], "a second pull has nothing new"
    assert [r for r in laptop.json("conversation", "ls") if r["id"] == new][0][
        "diverged_from"
    ] == cid


def test_pull_json_says_what_a_new_conversation_continues(
    pair: tuple[Machine, Machine, Path], tmp_path: Path, bare_remote: Remote
) -> None:
    laptop, desktop, remote = pair
    cid = laptop.new("start")
    laptop.ok("push")
    desktop.ok("pull")
    desktop.ok("conversation", "use", cid)
    laptop.ok("q", "one")
    desktop.ok("q", "two")
    laptop.ok("push")
    new = [r for r in desktop.json("pull") if r["id"] == cid][0]["new_id"]
    desktop.ok("push")
    rows = [r for r in laptop.json("pull") if r["id"] == new]
    assert rows and rows[0]["action"] == "created" and rows[0]["continues"] == cid
    assert subprocess.run(["git", "--git-dir", str(remote), "fsck"], check=False).returncode == 0
    # a machine's first pull says it too (from the notes it took in, not read again)
    third = Machine(tmp_path / "third", bare_remote.url, bare_remote.env)
    first = {r["id"]: r for r in third.json("pull") if r.get("kind") == "conversation"}
    assert first[new]["continues"] == cid and "continues" not in first[cid]
    assert f"{new}: continues {cid} from another machine" in Machine(
        tmp_path / "fourth", bare_remote.url, bare_remote.env
    ).ok("pull")
