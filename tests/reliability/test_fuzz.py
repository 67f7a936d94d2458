"""A bounded, seeded fuzz run through the real `jp`: mutated JP folders, range
flags and compaction specs, config files, and hostile ids on the command line.

Every run must exit 0 or print one `error:` line (never a traceback or an
internal error), and a refused command must leave every ref as it was.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.harness import RUST, RUST_ID, Sandbox

SEED = 8
RUNS = 10


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Sandbox:
    sandbox = Sandbox(tmp_path_factory.mktemp("fuzz") / "box")
    sandbox.ok("init")
    sandbox.ok("conversation", "import", "--activate", str(RUST))
    return sandbox


def attempt(box: Sandbox, *args: str, input: str = "") -> bool:
    """Run jp; it works or fails cleanly, and a failure changes no ref."""
    before = box.refs()
    proc = box.run(*args, input=input)
    if proc.returncode == 0:
        return True
    assert "error:" in proc.stderr.lower(), (args, proc.stderr)  # click says "Error:"
    assert "internal error" not in proc.stderr, (args, proc.stderr)
    after = box.refs()
    assert after == before, (args, "a refused command changed refs")
    return False


def mutate(value: Any, rng: random.Random) -> Any:
    """One random structural change somewhere in a JSON value."""
    if isinstance(value, list) and value:
        i = rng.randrange(len(value))
        choice = rng.randrange(4)
        if choice == 0:
            return value[:i] + value[i + 1 :]
        if choice == 1:
            return [*value[: i + 1], value[i], *value[i + 1 :]]
        return value[:i] + [mutate(value[i], rng)] + value[i + 1 :]
    if isinstance(value, dict) and value:
        key = rng.choice(sorted(value))
        out = dict(value)
        choice = rng.randrange(4)
        if choice == 0:
            del out[key]
        elif choice == 1:
            out[key] = rng.choice([None, 7, -1, "", [], {}, "x" * 3, True, 1e300])
        elif choice == 2:
            out[rng.choice(["type", "extra", "id", "timestamp"])] = mutate(out[key], rng)
        else:
            out[key] = mutate(out[key], rng)
        return out
    return rng.choice([None, 0, -5, "", "🙂", [], {}, "2026-13-01 00:00:00", 10**30])


def test_mutated_jp_folders(box: Sandbox, tmp_path: Path) -> None:
    rng = random.Random(SEED)
    source = json.loads((RUST / "events.json").read_text())
    meta = json.loads((RUST / "metadata.json").read_text())
    imported = 0
    for n in range(RUNS):
        folder = tmp_path / f"{17100000000 + n}-fuzz"
        folder.mkdir()
        events, metadata = source, meta
        for _ in range(rng.randint(1, 3)):
            if rng.random() < 0.7:
                events = mutate(events, rng)
            else:
                metadata = mutate(metadata, rng)
        text = json.dumps(events)
        if rng.random() < 0.2:  # a torn write
            text = text[: rng.randrange(len(text))]
        (folder / "events.json").write_text(text)
        (folder / "metadata.json").write_text(json.dumps(metadata))
        if attempt(box, "conversation", "import", str(folder)):
            imported += 1
            attempt(box, "conversation", "show", f"jp-c{17100000000 + n}")
    assert imported, "no mutation was importable: the run tested only refusals"
    box.fsck()


FLAG_VALUES = ["1", "-1", "0", "@2", "5h", "last", "2..4", "9..2", "x", "", "99999999999999999999"]
FLAGS = ["--from", "--to", "--keep-first", "--keep-last", "--first", "--last", "--turn"]
SPEC_PARTS = ["r", "s", "t", "t=omit", "t=x", "+", ":", "..", "-2", "3", "0", "summarize", "=", " "]


def test_range_flags_and_specs(box: Sandbox) -> None:
    rng = random.Random(SEED + 1)
    for _ in range(RUNS):
        flags: list[str] = []
        for flag in rng.sample(FLAGS, rng.randint(1, 2)):
            flags += [flag, rng.choice(FLAG_VALUES)]
        attempt(box, "conversation", "compact", RUST_ID, "--dry-run", *flags)
    for _ in range(RUNS // 2):
        spec = "".join(rng.choice(SPEC_PARTS) for _ in range(rng.randint(1, 5)))
        attempt(box, "conversation", "fork", RUST_ID, f"--compact={spec}")
    box.fsck()


CONFIG_LINES = [
    '[assistant.model]\nid = "offline/jp"',
    '[assistant.model]\nid = "nonsense"',
    "[assistant]\nmax_tokens = -3",
    "[assistant]\nmax_tokens = 99999999999999999999",
    '[conversation.tools.x]\ncommand = []\ndescription = "x"',
    "[[conversation.compaction.rules]]\nkeep_first = 1\nkeep_last = -2\nreasoning = true",
    '[[conversation.compaction.rules]]\nkeep_last = "soon"',
    "[[conversation.compaction.rules]]\nsummary = { model = { id = 3 } }",
    "[user]\nname = 7",
    "this is = = not toml",
    "[assistant\n",
    "\x00",
    "[conversation.compaction.review.model]\nid = 'anthropic/'",
]


def test_config_files(box: Sandbox) -> None:
    rng = random.Random(SEED + 2)
    try:
        for _ in range(RUNS // 2):
            text = "\n".join(rng.sample(CONFIG_LINES, rng.randint(1, 3)))
            box.config_file.write_text(text + "\n")
            before = box.refs()
            if not attempt(box, "q", "-k", "--", "with a config"):
                assert box.refs() == before
    finally:
        box.config_file.unlink(missing_ok=True)
    box.fsck()


HOSTILE_IDS = [
    "../../etc/passwd",
    "jp-c1/../../x",
    "jp-c1\n",
    "refs/heads/main",
    "JP_HEAD",
    "jp-c1.lock",
    "-jp-c1",
    "jp-c" + "9" * 30,
    "*",
    "jp-c1@{0}",
]


COMMANDS: list[Callable[[str], tuple[str, ...]]] = [
    lambda cid: ("conversation", "show", cid),
    lambda cid: ("q", "-i", cid, "--", "hello"),
    lambda cid: ("conversation", "fork", cid),
    lambda cid: ("conversation", "use", cid),
    lambda cid: ("conversation", "archive", cid, "-y"),
]


def test_hostile_ids_on_the_command_line(box: Sandbox) -> None:
    rng = random.Random(SEED + 3)
    for cid in HOSTILE_IDS:  # every id through q (a write), and one other command each
        for command in [COMMANDS[1], rng.choice([COMMANDS[0], *COMMANDS[2:]])]:
            assert not attempt(box, *command(cid)), cid
    made = [p for p in box.store.rglob("*") if "passwd" in p.name or p.name.startswith("x")]
    assert made == []
