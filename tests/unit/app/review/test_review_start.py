"""Review start on a real store with the offline model: what it walks, and what it writes.

Start walks the source once and passes what it learned down; these check
that the review it writes is the one it always wrote (drop, keep and no
earlier compactions), that a caller's already loaded source gives the same
review, and that the projection is made only when the summarizer needs it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gitstore import ids
from gitstore.events import Event
from gitstore.store.core import Store
from gitstore.store.repo import init_bare
from porcelain.app.review import start as review_start
from porcelain.config import Config, load_config
from porcelain.domain.compaction.overlays import ToolCalls
from porcelain.domain.compaction.ranges import RangeOverrides
from porcelain.domain.review.state import latest_proposal
from tests.unit.domain.compaction.builders import comp, turns

SOURCE = ids.from_deciseconds(17_000_000_000)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    init_bare(tmp_path / "store.git")
    return Store(tmp_path / "store.git")


def _config(tmp_path: Path, overrides: list[str]) -> Config:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return load_config(
        environ={"HOME": str(home), "XDG_CONFIG_HOME": str(home / "config")},
        store_config=None,
        files=[],
        overrides=overrides,
    )


@pytest.fixture
def config(tmp_path: Path) -> Config:
    return _config(tmp_path, [])


def _source(store: Store, extra: list[Event]) -> None:
    begin: Event = {
        "type": "conversation_start",
        "timestamp": "2025-12-31T00:00:00.000000Z",
        "conversation_id": SOURCE,
    }
    store.log.create(SOURCE, [begin, *turns(12), *extra], None, "test: source")


def _start(store: Store, config: Config, **kw: Any) -> Any:
    return review_start.start_review(
        store,
        store.refs.require(SOURCE),
        config,
        RangeOverrides(turn=(2, 5)),
        None,
        "offline/jp",
        **kw,
    )


def _review_tail(store: Store, rid: str) -> list[Event]:
    """The review's own events, without what changes from one start to the next."""
    events = store.log.load(rid).events
    own = events[-4:]
    out = []
    for event in own:
        kept = {k: v for k, v in event.items() if k not in ("timestamp", "id", "conversation_id")}
        out.append(kept)
    return out


EARLIER = [comp(2, 3, summary="earlier"), comp(0, 8, reasoning=True, tools=ToolCalls.OMIT)]
SMALL_REVIEW_WINDOW = "conversation.compaction.review.model.context_window=10"


@pytest.mark.parametrize(
    "extra, prior, overrides",
    [([], "none", []), (EARLIER, "drop", []), (EARLIER, "keep", [SMALL_REVIEW_WINDOW])],
)
def test_a_loaded_source_gives_the_same_review(
    store: Store, tmp_path: Path, extra: list[Event], prior: str, overrides: list[str]
) -> None:
    config = _config(tmp_path, overrides)
    _source(store, extra)
    first = _start(store, config)
    assert first.prior == prior
    tail = _review_tail(store, first.review_id)
    store.refs.delete(first.review_id, "test: clean up")
    second = _start(store, config, read=store.log.load(SOURCE))
    assert (second.prior, second.proposal_text) == (first.prior, first.proposal_text)
    assert _review_tail(store, second.review_id) == tail
    # the proposal start returns is the one a reader finds in the review
    assert second.proposal == latest_proposal(store.log.load(second.review_id).events)
    assert second.proposal is not None and second.proposal.from_turn == 2
    store.refs.delete(second.review_id, "test: clean up")
    third = _start(store, config, read=store.log.view_chain(store.refs.require(SOURCE).tip))
    assert (third.prior, third.proposal_text) == (first.prior, first.proposal_text)
    assert _review_tail(store, third.review_id) == tail


def test_a_loaded_conversation_must_be_the_source(store: Store, config: Config) -> None:
    _source(store, [])
    other = ids.from_deciseconds(17_000_000_010)
    store.log.create(other, turns(1), None, "test: other")
    with pytest.raises(ValueError):
        _start(store, config, read=store.log.load(other))


def test_the_summary_range_grows_and_the_review_records_it(store: Store, config: Config) -> None:
    _source(store, [comp(4, 6, summary="earlier")])
    started = _start(store, config)
    assert started.proposal is not None
    assert (started.proposal.from_turn, started.proposal.to_turn) == (2, 7)
    assert started.proposal_text.startswith("Proposed: compact turns 2-7 of 12 (summarize)")


def test_the_projection_is_made_only_when_the_raw_range_does_not_fit(
    store: Store, config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    _source(store, [comp(4, 6, summary="earlier")])
    made: list[int] = []
    from porcelain.domain.compaction.projection import project as real

    def counting(source: Any) -> Any:
        made.append(1)
        return real(source)

    monkeypatch.setattr(review_start, "project", counting)
    _start(store, config)
    assert made == []


def test_fits_tokens_stops_reading_once_over_budget() -> None:
    class Endless:
        def __iter__(self) -> Any:
            while True:
                yield {"type": "chat_request", "content": "x" * 100}

    assert review_start.fits_tokens(Endless(), 1000) is False


def test_compact_with_the_loaded_conversation_appends_the_same(
    store: Store, config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gitstore import Conversation
    from gitstore.git import refs
    from gitstore.git.refs.transaction import RefUpdate
    from porcelain.app.compaction import run
    from porcelain.domain.compaction.projection import project as real
    from porcelain.domain.compaction.rules import Rule, SummarySpec

    made: list[int] = []

    def counting(source: Any) -> Any:
        made.append(1)
        return real(source)

    monkeypatch.setattr(run, "project", counting)
    _source(store, [comp(4, 6, summary="earlier")])
    rules = [Rule(summary=SummarySpec()), Rule(reasoning=True)]

    def once(source: str | Conversation) -> list[Event]:
        outcome = run.compact(
            store,
            source,
            config,
            rules,
            RangeOverrides(),
            dry_run=False,
            model_override=None,
            fallback_model="offline/jp",
        )
        return [{k: v for k, v in e.items() if k != "timestamp"} for e in outcome.events]

    tip = store.refs.require(SOURCE).tip
    plain = once(SOURCE)
    assert made == []  # every raw range fit: no projection
    # back to the tip before the compaction, and again from the loaded source
    store.refs.move([RefUpdate(refs.live(SOURCE), store.refs.require(SOURCE).tip, tip)], "test: rewind")
    assert once(store.log.load(SOURCE)) == plain


def test_the_reviews_own_configuration_entries_are_accepted_and_nothing_else(
    store: Store, config: Config
) -> None:
    from gitstore import activity

    _source(store, [])
    started = _start(store, config)
    conv = store.log.load(started.review_id)
    deltas = {c for e, c in zip(conv.events, conv.commits, strict=True)
              if e.get("type") == "config_delta"}
    assert deltas  # the review writes its configuration as entries of its own
    assert activity.accepted_commits(store) == frozenset(deltas)
