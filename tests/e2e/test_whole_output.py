"""Whole outputs of the main flows, on the seeded clock of the testing hook
(porcelain/clock.py; `pinned` users of tests/e2e/harness.py): ids, times and
commit ids are those the clock gives, so each output is compared whole."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.e2e.harness import User, write_conversation

HINT = (
    'To talk to a real model, set assistant.model.id = "anthropic/claude-sonnet-4-5" (or '
    "another anthropic/claude-... id) in $XDG_CONFIG_HOME/jp/config.toml or with --cfg, "
    "and export ANTHROPIC_API_KEY."
)
NOTE = "note: no model configured and no ANTHROPIC_API_KEY; using offline/jp, jp's built-in offline model\n"


def offline(text: str) -> str:
    """The offline model's answer to ``text``: short, as it is stored."""
    return "This is jp's offline model, built into jp. It is not a language model, so it cannot answer."


def explained(text: str) -> str:
    """What the offline model tells the person on stderr, never stored."""
    return f"You wrote: “{text}”.\n{HINT}\n"


def test_query_ls_show_and_print(pinned: User) -> None:
    proc = pinned.run("q", "--new", "tabs or spaces?")
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        0,
        offline("tabs or spaces?") + "\n",
        NOTE + explained("tabs or spaces?"),
    )
    assert pinned.ok("q", "and two plus two?") == offline("and two plus two?") + "\n"
    assert pinned.json("q", "--new", "a second one") == {
        "id": "jp-c17676037800",
        "model": "offline/jp",
        "events": [
            {"type": "turn_start", "timestamp": "2026-01-05T09:03:02.000000Z"},
            {
                "type": "chat_request",
                "timestamp": "2026-01-05T09:03:02.000000Z",
                "content": "a second one",
            },
            {
                "type": "chat_response",
                "timestamp": "2026-01-05T09:03:03.000000Z",
                "message": offline("a second one"),
            },
        ],
        "usage": {},
        "context": None,  # the context meter: the window is far from full
    }
    assert pinned.ok("conversation", "ls") == (
        "ID               AGE       TURNS  TITLE\n"
        "jp-c17676036600  1m ago        2  tabs or spaces?\n"
        "jp-c17676037800* just now      1  a second one\n"
    )
    row = {
        "title": None,
        "archived": False,
        "pinned": False,
        "source_id": None,
        "unreadable": None,
        "forked_from": None,
        "diverged_from": None,
        "labels": {},
        "imported_from": None,
        "tool_title": None,
        "project": None,
        "handle": None,
    }
    assert pinned.ls() == [
        row
        | {
            "id": "jp-c17676036600",
            "turns": 2,
            "events": 6,
            "active": False,
            "created_at": "2026-01-05T09:01:00Z",
            "last_event_at": "2026-01-05T09:02:01.000000Z",
            "preview": "tabs or spaces?",
            "short_id": "jp-c17676036",
        },
        row
        | {
            "id": "jp-c17676037800",
            "turns": 1,
            "events": 3,
            "active": True,
            "created_at": "2026-01-05T09:03:00Z",
            "last_event_at": "2026-01-05T09:03:03.000000Z",
            "preview": "a second one",
            "short_id": "jp-c17676037",
        },
    ]
    assert pinned.ok("conversation", "show", "jp-c17676036600") == (
        "ID:           jp-c17676036600\n"
        "Title:        tabs or spaces?\n"
        "Turns:        2\n"
        "Events:       6\n"
        "Latest event: 2026-01-05T09:02:01.000000Z\n"
        "State:        live\n"
        "Active:       no\n"
        "Pinned:       no\n"
        "Model:        offline/jp, from default: no model configured\n"
        "Recorded:     nothing\n"
        "Tokens:       ~53 (estimated)\n"
    )
    assert pinned.show() == {
        "id": "jp-c17676037800",
        "title": None,
        "shown_title": "a second one",
        "project": None,
        "turns": 1,
        "events": 3,
        "archived": False,
        "active": True,
        "pinned": False,
        "labels": {},
        "source_id": None,
        "created_at": "2026-01-05T09:03:00Z",
        "last_event_at": "2026-01-05T09:03:03.000000Z",
        "tip": "ed98664794bcc9ab3baaa3f9b4acfb845c358c03",
        "compactions": [],
        "model": {"id": "offline/jp", "source": "default: no model configured"},
        "conversation_sets": {},
        "usage": [],
        "usage_total": None,
        "forked_from": None,
        "fork_commit": None,
        "diverged_from": None,
        "divergence": None,
        "imported_from": None,
        "tokens": {"tokens": 25, "counted_by": None, "estimated": True},
    }
    assert pinned.ok("conversation", "print", "jp-c17676036600") == (
        "--- turn 1 (2026-01-05 09:01) ---\n"
        "> tabs or spaces?\n"
        f"{offline('tabs or spaces?').replace(chr(10), chr(10) + '  ')}\n\n"
        "--- turn 2 (2026-01-05 09:02) ---\n"
        "> and two plus two?\n"
        f"{offline('and two plus two?').replace(chr(10), chr(10) + '  ')}\n\n"
    )


def test_the_same_commands_on_the_same_clock_write_the_same_store(tmp_path: Path) -> None:
    """Same clock, same commands: the same output and the same commits (notes hold the
    store's own machine id, so they differ); a later clock gives other ids."""

    def session(name: str, skip: int = 0) -> tuple[list[str], dict[str, str]]:
        person = User(tmp_path, name, pinned=True)
        person.runs += skip
        person.ok("init", str(person.store))
        outputs = [person.ok("q", "--new", "one"), person.ok("q", "two")]
        outputs += [person.ok("conversation", "fork"), person.ok("--format", "json", "c", "ls")]
        return outputs, person.refs("refs/conversations")

    first, again, later = session("first"), session("again"), session("later", skip=1)
    assert first == again
    assert sorted(first[1]) == [
        "refs/conversations/jp-c17676036600",
        "refs/conversations/jp-c17676037800",
    ]
    assert sorted(later[1]) == [
        "refs/conversations/jp-c17676037200",
        "refs/conversations/jp-c17676038400",
    ]
    assert first[0][2] == "jp-c17676037800\n" and later[0][2] == "jp-c17676038400\n"


def test_a_review_offline_from_start_to_continue(pinned: User, tmp_path: Path) -> None:
    folder = write_conversation(tmp_path / "17800000401-six-turns", 6)
    assert pinned.ok("conversation", "import", "--activate", str(folder)) == "jp-c17800000401\n"
    source, review = "jp-c17800000401", "jp-c17676037240"
    later = "Goal: Q02 <<Q02>>\nLater requests:\n- Q03 <<Q03>>\n- Q04 <<Q04>>\n"
    opening = (
        "Extractive summary by jp's offline model (not a language model) of 4 requests and "
        f"4 answers.\n{later}- Q05 <<Q05>>\nFiles: src/f02.rs, src/f04.rs\n"
        "Tools used: fs_read_file ×2\nLast request: Q05 <<Q05>>\nLast answer: A05 <<A05>>"
    )
    # turns 2-4: the summary is written again for the new range
    rewritten = (
        "Extractive summary by jp's offline model (not a language model) of 3 requests and "
        f"3 answers.\n{later}Files: src/f02.rs, src/f04.rs\n"
        "Tools used: fs_read_file ×2\nLast request: Q04 <<Q04>>\nLast answer: A04 <<A04>>"
    )
    kept_all = "Coverage: the text keeps every path, command, number and request found.\n"
    gaps = (
        "Coverage: 5 facts of the range not in the text (3 requests, 2 paths).\n"
        "Most important:\n"
        "- turn 2, request: Q02 <<Q02>>\n- turn 3, request: Q03 <<Q03>>\n"
        "- turn 4, request: Q04 <<Q04>>\n"
        "Paths (2): src/f02.rs (turn 2), src/f04.rs (turn 4)\n"
        "Nothing is deleted: the raw turns stay in the conversation, and the model can read "
        "them back with its recall tool (docs/tools.md).\n"
        "Model-visible size: about 95 tokens before, 54 after.\n"
    )
    proc = pinned.run("conversation", "compact", "--interactive")
    assert (proc.returncode, proc.stderr) == (
        0,
        f"Drafting the opening summary of {source}, turns 2-5...\n",
    )
    assert proc.stdout == (
        f"Started review {review} of {source} (now active).\n\n"
        f"Proposed: compact turns 2-5 of 6 (summarize)\n\n{opening}\n\n{kept_all}"
        "Model-visible size: about 95 tokens before, 109 after.\n"
        "Warning: this proposal makes the model's context larger (95 -> 109 tokens).\n\n"
        "Each turn of this review (`jp q`) sends the review model about 95 tokens of the "
        "source (estimated), with the discussion so far.\n\n"
        "Next:\n"
        '  jp q "..."                          discuss it; the model records each revision\n'
        "  jp conversation show                the current proposal\n"
        "  jp conversation compact --continue  apply it to the source\n"
        "  jp conversation compact --abort     end the review, source untouched\n"
    )
    recorded = (
        "Recorded. Proposed: compact turns 2-4 of 6 (summarize). "
        "Apply it with `jp conversation compact --continue`.\n"
    )
    grown = "Warning: this proposal makes the model's context larger (95 -> 115 tokens)."
    proc = pinned.run("q", "turns 2-4")
    assert proc.stdout == (
        "Understood: turns 2-4.\nNote: wrote the summary again for the new range.\n"
        "Proposing turns 2-4, summary (42 words).\n"
        f"Recorded. Proposed: compact turns 2-4 of 6 (summarize). {grown}\n"
    )
    assert proc.stderr.endswith(
        f"[recorded] Proposed: compact turns 2-4 of 6 (summarize)\n\n{rewritten}\n\n{kept_all}"
        f"Model-visible size: about 95 tokens before, 115 after.\n{grown}\n"
    )
    out = pinned.ok("q", "summary: the SETUP, in short")
    assert (
        out
        == "Understood: replace the summary.\nProposing turns 2-4, summary (4 words).\n" + recorded
    )
    shown = pinned.show()["proposal"]
    assert shown == {
        "from_turn": 2,
        "to_turn": 4,
        "summary": "the SETUP, in short",
        "reasoning": None,
        "tool_calls": None,
        "coverage": shown["coverage"],
    }
    assert shown["coverage"]["tokens"] == {"before": 95, "after": 54}
    assert [(m["turn"], m["text"]) for m in shown["coverage"]["missing"]][-2:] == [
        (2, "src/f02.rs"),
        (4, "src/f04.rs"),
    ]
    assert pinned.ok("conversation", "compact", "--continue", "--yes") == (
        "Proposed: compact turns 2-4 of 6 (summarize)\n"
        "The conversation now has 6 turns; 3 turns stay uncompacted.\n\n"
        f"the SETUP, in short\n\n{gaps}\n"
        f"Applied to {source}: compacted turns 2-4.\n"
        f"Review {review} archived.\n"
        f"Active conversation: {source}\n"
    )
    assert pinned.ok("conversation", "show") == (
        f"ID:           {source}\n"
        "Title:        synthetic\n"
        "Turns:        6\n"
        "Events:       30\n"
        "Latest event: 2026-01-05T09:06:00.000000Z\n"
        "State:        live\n"
        "Active:       yes\n"
        "Pinned:       no\n"
        "Model:        offline/jp, from default: no model configured\n"
        "Recorded:     nothing\n"
        "Tokens:       ~54 (estimated)\n"
        "Compactions:\n"
        "  1. turns 2-4 (summary)\n"
    )
    assert pinned.ok("conversation", "print", "--compacted") == (
        "--- turn 1 (2026-02-01 10:00) ---\n"
        "> Q01 <<Q01>>\n[reasoning] thinking <<R01>>\nA01 <<A01>>\n\n"
        "--- turns 2-4 (2026-02-01 10:00) ---\n"
        "> [Summary of previous conversation]\nthe SETUP, in short\n\n"
        "--- turn 5 (2026-02-01 10:01) ---\n"
        "> Q05 <<Q05>>\n[reasoning] thinking <<R05>>\nA05 <<A05>>\n\n"
        "--- turn 6 (2026-02-01 10:01) ---\n"
        "> Q06 <<Q06>>\n[reasoning] thinking <<R06>>\n"
        '[tool] fs_read_file {"path": "src/f06.rs"}\n'
        "[result] fs_read_file: contents <<T06>>\nA06 <<A06>>\n\n"
    )
    assert pinned.ok("conversation", "ls", "--archived") == (
        "ID               AGE     TURNS  TITLE\n"
        f"{review}  4m ago      8  [review of {source}] synthetic\n"
    )


def test_a_pull_that_diverges_and_its_operation(tmp_path: Path) -> None:
    """A pull's fork id, the metadata it copies and the operation it records come from
    the seeded clock the porcelain hands the store: the whole output is pinned."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    laptop, desktop = User(tmp_path, "laptop", pinned=True), User(tmp_path, "desktop", pinned=True)
    desktop.runs = 30  # the desktop's clock half an hour on
    for person in (laptop, desktop):
        person.ok("init", str(person.store))
        person.ok("remote", "add", "origin", str(remote))
    laptop.ok("q", "--new", "shared start")
    laptop.ok("push")
    assert desktop.ok("pull") == "jp-c17676037200: new from origin\n"
    desktop.ok("conversation", "use", "jp-c17676037200")
    laptop.ok("q", "from the laptop")
    desktop.ok("q", "from the desktop")
    laptop.ok("push")
    assert desktop.ok("pull") == (
        "jp-c17676037200: diverged; your local continuation is now jp-c17676057000\n"
    )
    assert desktop.ok("op", "log", "-n", "4") == (
        "2d7f93498d8a  2026-01-05 09:35:00  jp pull\n"
        "    refs/notes/meta: absent -> 53043d545433\n"
        "    refs/conversations/jp-c17676057000: absent -> d2a41725d55f\n"
        "    refs/conversations/jp-c17676037200: d2a41725d55f -> 6fbb99c80a81\n"
        "    JP_HEAD: refs/conversations/jp-c17676037200 -> refs/conversations/jp-c17676057000\n"
        "346fa35b5189  2026-01-05 09:34:02  jp q 'from the desktop'\n"
        "    refs/conversations/jp-c17676037200: 1b4bf2c214d9 -> d2a41725d55f\n"
        "7d3d869026de  2026-01-05 09:33:00  jp conversation use jp-c17676037200\n"
        "    JP_HEAD: absent -> refs/conversations/jp-c17676037200\n"
        "d1d57f61d842  2026-01-05 09:32:00  jp pull\n"
        "    refs/conversations/jp-c17676037200: absent -> 1b4bf2c214d9\n"
    )
    assert desktop.ok("conversation", "ls") == (
        "ID               AGE      TURNS  TITLE\n"
        "jp-c17676037200  32m ago      2  shared start\n"
        "jp-c17676057000* 2m ago       2  [diverged from jp-c17676037200] shared start\n"
    )


def test_an_undo_and_the_operation_log(pinned: User) -> None:
    """Operation ids and times, and the metadata commit an archive writes, come from the
    seeded clock: an undo and the log it leaves are pinned whole."""
    pinned.ok("q", "--new", "keep this")
    pinned.ok("conversation", "archive", "--yes")
    moves = (
        "    refs/notes/meta: 3d0522a8164c -> absent\n"
        "    refs/archive/conversations/jp-c17676036600: 49b0fb82982e -> absent\n"
        "    refs/conversations/jp-c17676036600: absent -> 49b0fb82982e\n"
    )
    assert pinned.ok("undo") == (
        f"Undid operation b417d7826638: jp conversation archive --yes\n{moves}"
    )
    assert pinned.ok("op", "log") == (
        f"503f159f11d4  2026-01-05 09:03:00  jp undo  (undoes b417d7826638)\n{moves}"
        "b417d7826638  2026-01-05 09:02:01  jp conversation archive --yes\n"
        "    refs/conversations/jp-c17676036600: 49b0fb82982e -> absent\n"
        "    refs/archive/conversations/jp-c17676036600: absent -> 49b0fb82982e\n"
        "    refs/notes/meta: absent -> 3d0522a8164c\n"
        "a175ddf58f2d  2026-01-05 09:01:04  jp q --new 'keep this'\n"
        "    refs/conversations/jp-c17676036600: absent -> 49b0fb82982e\n"
        "    JP_HEAD: absent -> refs/conversations/jp-c17676036600\n"
    )
    assert pinned.ok("conversation", "ls") == (
        "ID               AGE     TURNS  TITLE\njp-c17676036600* 3m ago      1  keep this\n"
    )


def test_undo_after_config_set_says_what_it_undid_and_when(pinned: User) -> None:
    """`jp config set` is not an operation: an undo after it says which older
    operation it undid, when it ran, and that configuration is not undone."""
    pinned.ok("q", "--new", "keep this")
    pinned.ok("config", "set", "assistant.instructions", "be brief")
    proc = pinned.run("undo")
    assert proc.returncode == 0 and "Undid operation" in proc.stdout and "jp q --new" in proc.stdout
    assert "that operation ran at 2026-01-05 09:01:04" in proc.stderr, proc.stderr
    assert "`jp config set`" in proc.stderr and "is not one" in proc.stderr
