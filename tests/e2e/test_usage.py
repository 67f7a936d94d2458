"""`jp usage` through the real jp on the project's own small session files
(tests/fixtures/usage), every figure worked out by hand; two machines; a hostile
pulled conversation; jp's own turns priced from the user's configuration."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import User
from tests.support.fake_messages import FakeMessages
from tests.support.sync_machine import Machine

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "usage"
CLAUDE = FIXTURES / "claude" / "projects"
CODEX = FIXTURES / "codex"
COUNTS = ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens")

# By hand, from the files (prices per million tokens, porcelain/domain/prices.py):
# 03-01: sonnet's message split over two records, its first counted: in 10, out 1,
#        write 100, read 1000 = 30 + 15 + 375 + 300 = 720; the subagent's haiku:
#        in 7, out 3 = 7 + 15 = 22; opus at 23:30 UTC: in 5, out 20, read 2000 =
#        25 + 500 + 1000 = 1525.  2,267 per million.
# 03-02: mystery-model-1, in 1000, out 1000: no price.
# 03-03: Codex, gpt-5-codex: totals 1050 (1000 in of which 400 cached, 50 out), again
#        1050, then 3080 (3000 in, 2400 cached, 80 out): in 600, out 80, read 2400 =
#        750 + 800 + 300 = 1850.
BY_DAY_UTC = [
    ("2026-03-01", (22, 24, 100, 3000), 0.002267),
    ("2026-03-02", (1000, 1000, 0, 0), None),
    ("2026-03-03", (600, 80, 0, 2400), 0.00185),
]


def rows_of(out: str) -> list[tuple[str, tuple[int, ...], Any]]:
    return [(r["period"], tuple(r[k] for k in COUNTS), r["cost_usd"]) for r in json.loads(out)]


def same(got: list[Any], want: list[Any]) -> None:
    assert [(p, c) for p, c, _ in got] == [(p, c) for p, c, _ in want]
    for (_, _, cost), (_, _, expected) in zip(got, want, strict=True):
        assert cost == (pytest.approx(expected) if expected is not None else None)


def bare(tmp_path: Path) -> Path:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
    return remote


def imported(user: User | Machine) -> None:
    user.ok("conversation", "import", "--from", "claude-code", str(CLAUDE))
    user.ok("conversation", "import", "--from", "codex", str(CODEX))


def test_usage_by_day_is_the_hand_count(user: User) -> None:
    imported(user)
    same(rows_of(user.ok("-F", "json", "usage", "--by", "day", env={"TZ": "UTC"})), BY_DAY_UTC)
    # in Tokyo, the 23:30 UTC answer (opus) is on the 2nd
    tokyo = rows_of(user.ok("-F", "json", "usage", env={"TZ": "Asia/Tokyo"}))
    assert [(p, c) for p, c, _ in tokyo][:2] == [
        ("2026-03-01", (17, 4, 100, 1000)),
        ("2026-03-02", (1005, 1020, 0, 2000)),
    ]
    since = rows_of(user.ok("-F", "json", "usage", "--since", "2026-03-02", "--until", "20260302"))
    assert [p for p, _, _ in since] == ["2026-03-02"]
    codex = json.loads(user.ok("-F", "json", "usage", "--by", "model", "--tool", "codex"))
    assert [(r["model"], r["cost_usd"]) for r in codex] == [("gpt-5-codex", pytest.approx(0.00185))]
    text = user.ok("usage")
    assert "TOTAL" in text and "$0.0023" in text and "no price for mystery-model-1" in text
    user.fail("usage", "--since", "March", code=2)


def test_two_machines_count_a_session_once(tmp_path: Path) -> None:
    """Both import the same session, one the Codex rollout too; after both sync
    through a bare remote, each counts what one machine would."""
    remote = bare(tmp_path)
    laptop, desktop = Machine(tmp_path / "laptop", remote), Machine(tmp_path / "desktop", remote)
    laptop.ok("conversation", "import", "--from", "claude-code", str(CLAUDE))
    imported(desktop)
    laptop.ok("sync")
    desktop.ok("sync")
    laptop.ok("pull")
    sessions = laptop.json("conversation", "ls", "--all", "--imported", "claude-code")
    # one conversation per session and subagent, whichever machine imported it (the
    # ids and commits come from the records: docs/sessions.md)
    assert len(sessions) == 2, "the session and its subagent, once each on both machines"
    for machine in (laptop, desktop):
        machine.env["TZ"] = "UTC"
        same(rows_of(machine.ok("-F", "json", "usage")), BY_DAY_UTC)


RED = "\x1b[31mred\x1b[0m"


def hostile_folder(root: Path) -> Path:
    """A JP conversation whose events claim absurd counts and set prices."""
    events = [
        {"type": "turn_start", "timestamp": "2026-03-04 10:00:00.0"},
        {"type": "chat_request", "timestamp": "2026-03-04 10:00:01.0", "content": "hi"},
        {
            "type": "config_delta",
            "timestamp": "2026-03-04 10:00:01.5",
            "delta": {
                "assistant": {"model": {"id": "anthropic/claude-opus-4-6"}},
                "usage": {"prices": {"anthropic/claude-opus-4-6": {"input": 999999}}},
            },
        },
    ]
    for n, counts in enumerate(
        [
            {"input_tokens": -5, "output_tokens": 1},
            {"input_tokens": 10**30, "output_tokens": 1},
            {"input_tokens": "12", "output_tokens": 1},
            {"input_tokens": True, "output_tokens": 1},
            {"input_tokens": 100, "output_tokens": 10},
        ]
    ):
        events.append(
            {
                "type": "chat_response",
                "timestamp": f"2026-03-04 10:00:0{n + 2}.0",
                "message": f"answer {n}",
                "metadata": {"usage": counts},
            }
        )
    events.append(
        {
            "type": "chat_response",
            "timestamp": "2026-03-05 10:00:00.0",
            "message": "a model named to repaint the terminal",
            "metadata": {"usage": {"input_tokens": 1, "output_tokens": 1}, "model": RED},
        }
    )
    folder = root / "hostile"
    folder.mkdir()
    (folder / "events.json").write_text(json.dumps(events))
    (folder / "metadata.json").write_text(json.dumps({"title": "hostile"}))
    return folder


def test_a_pulled_conversation_sets_no_price_and_no_absurd_count(tmp_path: Path) -> None:
    remote = bare(tmp_path)
    mallory, me = Machine(tmp_path / "mallory", remote), Machine(tmp_path / "me", remote)
    mallory.ok("conversation", "import", str(hostile_folder(tmp_path)))
    mallory.ok("push")
    me.ok("pull")
    me.env["TZ"] = "UTC"
    rows = json.loads(me.ok("-F", "json", "usage"))
    # only the sane answer counts, at the shipped opus price: 100 * 5 + 10 * 25 = 750
    assert [(r["period"], r["input_tokens"], r["output_tokens"]) for r in rows] == [
        ("2026-03-04", 100, 10),
        ("2026-03-05", 1, 1),
    ]
    assert rows[0]["cost_usd"] == pytest.approx(0.00075)
    assert rows[1]["cost_usd"] is None and rows[1]["models"] == [RED]  # JSON escapes it
    assert "\x1b" not in me.ok("usage", "--by", "model")


def test_jp_turns_are_priced_from_the_users_file(online: User, fake: FakeMessages) -> None:
    fake.reply_blocks(
        [{"type": "text", "text": "counted"}], usage={"input_tokens": 1200, "output_tokens": 70}
    )
    online.ok("q", "--new", "count me")
    online.config(
        '[assistant.model]\nid = "anthropic/claude-test"\n'
        '[usage.prices."anthropic/claude-test"]\ninput = 2\noutput = 10\n'
    )
    rows = json.loads(online.ok("-F", "json", "usage", "--by", "model", "--tool", "jp"))
    # 1200 * 2 + 70 * 10 = 3100 per million
    assert [(r["model"], r["input_tokens"], r["cost_usd"]) for r in rows] == [
        ("anthropic/claude-test", 1200, pytest.approx(0.0031))
    ]
    shown = online.show()
    assert shown["usage_total"]["input_tokens"] == 1200
    assert shown["usage_total"]["cost_usd"] == pytest.approx(0.0031)
    online.config('[usage.prices."anthropic/claude-test"]\ninput = -1\n')
    online.fail("usage", code=3)


def test_a_compactions_summary_counts_as_jps_own(online: User, fake: FakeMessages) -> None:
    for text in ("one", "two"):
        fake.reply_blocks(
            [{"type": "text", "text": f"answer {text}"}],
            usage={"input_tokens": 1000, "output_tokens": 10},
        )
        online.ok("q", *(["--new"] if text == "one" else []), text)
        online.ok("usage")  # a row kept for this tip
    fake.reply_blocks(
        [{"type": "text", "text": "SUMMARY"}],
        usage={"input_tokens": 5000, "output_tokens": 300},
    )
    online.ok("conversation", "compact", "--from", "1", "--to", "1", "--summarize")
    event = online.event(online.tip(online.active()))
    used = event["metadata"]["summary_usage"]
    assert (used["input_tokens"], used["output_tokens"]) == (5000, 300)
    assert event["metadata"]["model"] == "anthropic/claude-test"
    rows = json.loads(online.ok("-F", "json", "usage", "--by", "model"))
    assert [(r["model"], r["input_tokens"], r["output_tokens"]) for r in rows] == [
        ("anthropic/claude-test", 7000, 320)
    ]
    with sqlite3.connect(online.store / "jp" / "cache.sqlite") as db:
        kept = db.execute("SELECT name FROM derived WHERE name LIKE 'usage/%'").fetchall()
    assert kept == [(f"usage/{online.tip(online.active())}",)], "old tips' rows are dropped"
    # the context meter reads the last answer's counts, never the summary's
    assert online.show()["usage"][-1]["input_tokens"] == 1000
