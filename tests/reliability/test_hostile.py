"""Hostile input: every input works or gets a clear error; none crashes or
half-writes (property tests with hypothesis, in process).

"A clear error" is one of jp's typed errors (``JpError`` and its kinds, or
the store's ``GitStoreError``), which `cli.main` prints as one `error:` line;
anything else would surface as an internal error.  The fuzz run through the
real `jp` command is in test_fuzz.py.
"""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from gitstore import ids
from gitstore.errors import GitStoreError
from gitstore.events import KNOWN_TYPES, Event, validate
from gitstore.events.turns import turn_count
from gitstore.store.core import Store
from gitstore.store.repo import init_bare
from porcelain.app.transfer import store_imported
from porcelain.config import load_config, read_layer
from porcelain.domain.compaction.dsl import parse_spec
from porcelain.domain.compaction.proposal import ProposalError, validate_proposal
from porcelain.domain.compaction.ranges import parse_range_overrides, resolve_rule_range
from porcelain.domain.view import model_events
from porcelain.errors import JpError
from porcelain.jpformat import read_conversation
from porcelain.models.messages import to_messages

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
CLEAR = (JpError, GitStoreError)

# -- strategies -----------------------------------------------------------------------

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
timestamps = st.one_of(
    st.sampled_from(
        [
            "2026-01-05 09:00:07.123456",
            "2026-01-05T09:00:07Z",
            "0001-01-01T00:00:00+01:00",
            "9999-12-31T23:59:59-01:00",
            "2026-02-30 10:00:00",
            "",
            "yesterday",
        ]
    ),
    st.datetimes(timezones=st.just(None)).map(str),
    st.text(max_size=25),
    st.integers(),
)
FIELDS = [
    "content", "message", "reasoning", "data", "id", "name", "arguments", "is_error",
    "from_turn", "to_turn", "summary", "tool_calls", "withdraw", "delta", "metadata",
    "author", "schema", "source", "question", "answer", "conversation_id", "review",
]  # fmt: skip


@st.composite
def events(draw: st.DrawFn) -> Any:
    """Near-valid JP entries: known and unknown types, fields of any JSON shape."""
    if draw(st.integers(0, 9)) == 0:
        return draw(json_values)
    entry: dict[str, Any] = {
        "type": draw(st.sampled_from([*sorted(KNOWN_TYPES), "future_event", ""])),
        "timestamp": draw(timestamps),
    }
    good = {
        "content": st.text(max_size=30),
        "message": st.text(max_size=30),
        "id": st.text(alphabet=string.ascii_letters + "_", min_size=1, max_size=8),
        "name": st.sampled_from(["fs_read_file", "", "a b", "../x"]),
        "arguments": st.dictionaries(st.text(max_size=5), json_values, max_size=3),
        "from_turn": st.integers(-3, 40),
        "to_turn": st.integers(-3, 40),
        "summary": st.fixed_dictionaries({"summary": st.text(max_size=20)}),
    }
    for key in draw(st.lists(st.sampled_from(FIELDS), max_size=5, unique=True)):
        entry[key] = draw(good[key] if key in good and draw(st.booleans()) else json_values)
    return entry


# -- the JP importer -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    path = tmp_path_factory.mktemp("hostile") / "s.git"
    init_bare(path)
    return Store(path)


def snapshot(store: Store) -> dict[str, str]:
    return {name: str(store.repo.references[name].target) for name in store.repo.references}


def write_folder(folder: Path, events_text: str | bytes, metadata: str | bytes | None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in (("events.json", events_text), ("metadata.json", metadata)):
        path = folder / name
        if data is None:
            path.unlink(missing_ok=True)
        elif isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data)


def import_checked(store: Store, folder: Path) -> None:
    """Read then store a folder: a clear error and nothing written, or a whole conversation."""
    before = snapshot(store)
    try:
        conv = read_conversation(folder)
        cid = store_imported(store, conv)
    except CLEAR:
        assert snapshot(store) == before, "a refused import changed refs"
        return
    stored = store.log.load(cid).events
    assert stored[0]["type"] == "conversation_start"
    assert stored[1:] == conv.events
    # what an imported conversation shows a model is well-formed
    to_messages(model_events(stored), thinking=True)
    turn_count(stored)


@SETTINGS
@given(entries=st.lists(events(), max_size=8), metadata=json_values)
def test_import_of_near_valid_events(
    store: Store, tmp_path_factory: pytest.TempPathFactory, entries: list[Any], metadata: Any
) -> None:
    folder = tmp_path_factory.mktemp("imp") / "17000000001-fuzz"
    write_folder(folder, json.dumps(entries), json.dumps(metadata))
    import_checked(store, folder)


@SETTINGS
@given(events_bytes=st.binary(max_size=120), metadata=st.one_of(st.none(), st.binary(max_size=60)))
def test_import_of_arbitrary_bytes(
    store: Store,
    tmp_path_factory: pytest.TempPathFactory,
    events_bytes: bytes,
    metadata: bytes | None,
) -> None:
    folder = tmp_path_factory.mktemp("imp") / "x-fuzz"
    write_folder(folder, events_bytes, metadata)
    import_checked(store, folder)


@SETTINGS
@given(entry=events())
def test_events_that_validate_store_and_read_back(store: Store, entry: Any) -> None:
    try:
        event = validate(entry)
    except GitStoreError:
        return
    cid = ids.from_deciseconds(17000000000 + abs(hash(json.dumps(entry, sort_keys=True))) % 10**9)
    assume(not store.refs.exists(cid))
    start: Event = {"type": "conversation_start", "timestamp": "2026-01-01T00:00:00.000000Z",
                    "conversation_id": cid}  # fmt: skip
    store.log.create(cid, [start, event], None, "test")
    assert store.log.load(cid).events[-1] == event


# -- the compaction DSL and the range flags -----------------------------------------------

dsl_text = st.one_of(
    st.text(max_size=20),
    st.lists(
        st.sampled_from(["r", "s", "t", "t=omit", "t=bogus", "tools=strip", "+", ":", "..", "-",
                         "3", "-2", "0", "x", "=", " ", "99999999999999999999"]),
        max_size=7,
    ).map("".join),
)  # fmt: skip


@SETTINGS
@given(text=dsl_text)
def test_compaction_dsl(text: str) -> None:
    try:
        parse_spec(text)
    except CLEAR:
        pass


bounds = st.one_of(
    st.none(),
    st.text(max_size=10),
    st.sampled_from(["1", "-1", "0", "@3", "@0", "5h", "1h30m", "last-compaction", "last",
                     "2..4", "4..2", "..", "-0", "+3", "99999999999999999999", "1e3"]),
)  # fmt: skip


def conversation(turns: int) -> list[Event]:
    out: list[Event] = []
    for n in range(turns):
        stamp = f"2026-01-01T00:{n:02d}:00.000000Z"
        out += [
            {"type": "turn_start", "timestamp": stamp},
            {"type": "chat_request", "timestamp": stamp, "content": f"q{n}"},
            {"type": "chat_response", "timestamp": stamp, "message": f"a{n}"},
        ]
    return out


@SETTINGS
@given(
    keep_first=bounds, keep_last=bounds, from_=bounds, to=bounds,
    first=bounds, last=bounds, turn=bounds, turns=st.integers(0, 12),
)  # fmt: skip
def test_range_flags(
    keep_first: str | None, keep_last: str | None, from_: str | None, to: str | None,
    first: str | None, last: str | None, turn: str | None, turns: int,
) -> None:  # fmt: skip
    from datetime import UTC, datetime

    try:
        overrides = parse_range_overrides(
            keep_first=keep_first, keep_last=keep_last, from_=from_, to=to,
            first=first, last=last, turn=turn,
        )  # fmt: skip
        found = resolve_rule_range(
            conversation(turns), None, None, overrides, datetime(2026, 1, 2, tzinfo=UTC)
        )
    except CLEAR:
        return
    if found is not None:
        lo, hi = found
        assert 0 <= lo <= hi < turns, (found, turns)


# -- propose_compaction arguments -------------------------------------------------------

proposal_args = st.one_of(
    json_values,
    st.dictionaries(
        st.sampled_from(["from_turn", "to_turn", "summary", "reasoning", "tool_calls", "extra"]),
        st.one_of(json_values, st.integers(-2, 14),
                  st.sampled_from(["strip", "omit", "strip-requests", "", "  "])),
        max_size=5,
    ),
)  # fmt: skip


@SETTINGS
@given(args=proposal_args, turns=st.integers(0, 10))
def test_propose_compaction_arguments(args: Any, turns: int) -> None:
    events = conversation(turns)
    try:
        proposal = validate_proposal(args, events)
    except ProposalError as exc:
        assert exc.message, "an error the model cannot read"
        return
    assert 1 <= proposal.from_turn <= proposal.to_turn <= turns
    validate(proposal.to_compaction_event("2026-01-01T00:00:00Z"))  # storable as it stands


# -- configuration files ------------------------------------------------------------------

CONFIG_KEYS = [
    "assistant.model.id", "assistant.model.context_window", "assistant.max_tokens",
    "assistant.instructions", "assistant.thinking_budget", "assistant.max_retries",
    "conversation.compaction.review.model.id", "user.name", "conversation.tools.x.command",
    "conversation.tools.x.confirm", "conversation.tools.*.enable", "nonsense.key",
]  # fmt: skip


@st.composite
def config_text(draw: st.DrawFn) -> str:
    if draw(st.booleans()):
        return draw(st.text(max_size=60))
    lines = []
    for key in draw(st.lists(st.sampled_from(CONFIG_KEYS), max_size=5, unique=True)):
        value = draw(st.one_of(
            st.integers(-5, 10**12).map(str), st.booleans().map(lambda b: str(b).lower()),
            st.text(max_size=10).map(json.dumps), st.just('"anthropic/claude-x"'),
            st.just("[]"), st.just('["sleep", "1"]'), st.just("{}"),
        ))  # fmt: skip
        lines.append(f"{key} = {value}")
    if draw(st.booleans()):
        lines.append(
            "[[conversation.compaction.rules]]\n"
            + "\n".join(draw(st.lists(st.sampled_from(
                ["keep_first = 1", "keep_last = -2", 'keep_last = "5h"', "reasoning = true",
                 'tool_calls = "omit"', 'tool_calls = "x"', "summary = {}", "keep_first = @"]),
                max_size=3)))
        )  # fmt: skip
    return "\n".join(lines) + "\n"


@SETTINGS
@given(text=config_text())
def test_config_files(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    folder = tmp_path_factory.mktemp("cfg")
    path = folder / "config.toml"
    path.write_text(text)
    try:
        read_layer(path, missing_ok=False)
        config = load_config(
            environ={"HOME": str(folder), "XDG_CONFIG_HOME": str(folder / "none")},
            store_config=None,
            files=[path],
            overrides=[],
        )
        for accessor in (
            config.model_id, config.context_window, config.max_tokens, config.thinking_budget,
            config.instructions, config.max_retries, config.user_name, config.review_model_id,
            config.review_context_window, config.review_instructions, config.rules, config.tools,
        ):  # fmt: skip
            accessor()
    except CLEAR:
        pass
