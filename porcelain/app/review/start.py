"""`compact --interactive`: fork the source into a review that opens on a draft.

The review branches from the source (no copy).  Its creation event records
the source and how many turns it inherited, and whether the source's earlier
compactions are dropped (the raw source fits the review model's window) or
kept.  A configuration entry turns inherited tools off and only
`propose_compaction` on, and sets the review instructions and model.  The
summarizer runs once; its draft is written as the opening proposal (a
`propose_compaction` call and its result, marked as written by jp).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gitstore import (
    PROPOSE_COMPACTION,
    ChainView,
    Conversation,
    Event,
    Kind,
    Located,
    Store,
    activity,
    errors,
    files,
)
from porcelain import clock
from porcelain.app.compaction.summarize import SummaryJob, summarize_counted
from porcelain.app.lifecycle import ID_ATTEMPTS, JP_WRITTEN, config_delta, fork, fresh_id
from porcelain.config import Config
from porcelain.domain.compaction.coverage import coverage
from porcelain.domain.compaction.overlap import grow_summary_range
from porcelain.domain.compaction.projection import project
from porcelain.domain.compaction.proposal import Proposal, validate_proposal
from porcelain.domain.compaction.proposal import span as turn_span
from porcelain.domain.compaction.ranges import RangeOverrides, resolve_rule_range
from porcelain.domain.compaction.rules import DEFAULT_RULE, Rule, rules_from_config
from porcelain.domain.review.instructions import REVIEW_INSTRUCTIONS
from porcelain.domain.review.state import open_reviews, proposal_from_args
from porcelain.domain.stream import Stream
from porcelain.domain.tokens import event_text, visible_chars
from porcelain.domain.view import PROVIDER_VISIBLE
from porcelain.errors import UserError
from porcelain.models.base import context_window
from porcelain.models.catalog import Catalog


@dataclass(frozen=True)
class Started:
    review_id: str
    source_id: str
    proposal_text: str
    prior: str  # "drop", "keep" or "none"
    proposal: Proposal | None = None  # the opening proposal, as recorded
    # what each turn of the review sends the model of the source (tokens, estimated)
    sends: int = 0


def refuse_if_open(store: Store, source_id: str, *, starting: bool) -> None:
    """The RFD's messages when a review of ``source_id`` is open."""
    found = open_reviews(store, source_id)
    if not found:
        return
    rid = found[0]
    if starting:
        raise UserError(
            f"a review of this conversation is already open: {rid}",
            f"switch to it with `jp conversation use {rid}`, then discuss, `--continue`, or `--abort`",
        )
    raise UserError(
        f"a compaction review of this conversation is open: {rid}",
        f"finish it first: `jp conversation use {rid}`, then discuss, `--continue`, or `--abort`",
    )


def refuse_if_review(store: Store, cid: str) -> None:
    """A review is scratch space: compaction writes go to its source, after it ends."""
    source = store.notes.source_of(cid)
    if source is not None:
        raise UserError(
            f"{cid} is a compaction review of {source}; it is not compacted itself",
            f"to compact the source, end the review (`jp conversation compact --continue` "
            f"or `--abort`), then `jp conversation compact {source}`",
        )


def opening_rule(config: Config) -> Rule:
    """The first configured rule with a summary, else the built-in default.

    Range flags, when given, override its bounds (in ``resolve_rule_range``).
    """
    rules = [r for r in rules_from_config(config.rules()) if r.summary is not None]
    return rules[0] if rules else DEFAULT_RULE


def start_review(
    store: Store,
    source: Located,
    config: Config,
    overrides: RangeOverrides,
    model_override: str | None,
    default_model: str,
    on_delta: Any = None,
    *,
    read: Conversation | ChainView | None = None,
    progress: Any = None,
) -> Started:
    """Open a review of ``source`` on the summarizer's draft.

    ``read``: the source as the caller already read it, under the same hold:
    whole (a ``Conversation``) or as a view (``store.log.view_chain`` of its tip);
    it is not changed.  Without it, the start reads a view itself: the
    source's turns and compactions come from the cache's facts, and its
    events are read only where the range and the window check look.
    """
    refuse_if_open(store, source.cid, starting=True)
    stream = _source_stream(store, source, read)
    rule = opening_rule(config)
    from0, to0 = _opening_range(stream, rule, overrides)

    assistant_model = config.model_id() or default_model
    review_model, window, prior = _review_side(config, model_override, assistant_model, stream)
    job = _summary_job(config, rule, model_override, assistant_model)
    if progress is not None:  # said only once the range is known to be good
        progress(
            f"Drafting the opening summary of {source.cid}, {turn_span(from0 + 1, to0 + 1)}..."
        )
    # dropped compactions: the draft reads the raw turns, as the review's model will
    drafted = stream.without_compactions() if prior == "drop" else stream
    draft, used = summarize_counted(
        job, drafted, lambda: project(drafted), from0, to0, on_delta or _quiet
    )

    inherited = stream.count
    args = {"from_turn": from0 + 1, "to_turn": to0 + 1, "summary": draft}
    proposal = validate_proposal(args, stream)
    review = {"source_id": source.cid, "source_commit": source.tip, "inherited_turns": inherited}
    review.update({"prior_compactions": prior, "model": review_model})
    report = coverage(stream, proposal)
    rendered = "\n".join([proposal.render(inherited), "", *report.lines()])
    # the review's model reads the source as the model does now, or every raw turn
    sends = visible_chars(stream.events) // 4 if prior == "drop" else report.before
    extra = [
        config_delta(_review_config(config, review_model, window)),
        *_opening_proposal(proposal.to_args(), rendered, used),
    ]
    started = _publish(store, source, review, extra, rendered, prior)
    # as `latest_proposal` reads it back from the review's opening result
    return replace(started, proposal=proposal_from_args(proposal.to_args()), sends=sends)


def _review_side(
    config: Config, model_override: str | None, assistant_model: str, source: Stream
) -> tuple[str, int, str]:
    """The review's model, its window, and what it sees of the source's compactions:
    none, or all raw turns (``drop``) when they fit, else the compactions (``keep``)."""
    review_model = model_override or config.review_model_id() or assistant_model
    window = context_window(
        review_model, None if model_override else config.review_context_window()
    )
    prior = "none"
    if source.overlays:
        catalog = Catalog.of(config.data)
        fitting = source_fits(source.events, window * 3 // 4, review_model, catalog)
        prior = "drop" if fitting else "keep"
    return review_model, window, prior


def _source_stream(store: Store, source: Located, read: Conversation | ChainView | None) -> Stream:
    """The source as the caller read it (whole, or as a view), else a view read now."""
    if isinstance(read, Conversation):
        if read.cid != source.cid:
            raise ValueError(f"the conversation read is {read.cid}, not the source {source.cid}")
        return Stream(read.events)
    return Stream.of_view(store.log.view_chain(source.tip) if read is None else read)


def _opening_range(stream: Stream, rule: Any, overrides: RangeOverrides) -> tuple[int, int]:
    """The opening proposal's turns (0-based), grown over standing summaries it overlaps."""
    span = resolve_rule_range(stream, rule.keep_first, rule.keep_last, overrides, clock.now())
    if span is None:
        raise UserError(
            "nothing to compact: the range is empty",
            "choose one with --from/--to, or --keep-first/--keep-last",
        )
    return grow_summary_range(stream.overlays, span[0], span[1])


def _summary_job(
    config: Config, rule: Any, model_override: str | None, assistant_model: str
) -> SummaryJob:
    """How the opening summary is drafted: the rule's model and instructions, or the review's."""
    summary_model = (
        model_override or (rule.summary.model_id if rule.summary else None) or assistant_model
    )
    return SummaryJob(
        model_id=summary_model,
        instructions=rule.summary.instructions if rule.summary else None,
        context=rule.summary.context if rule.summary else None,
        window=config.context_window() if summary_model == assistant_model else None,
        max_retries=config.max_retries(),
        catalog=Catalog.of(config.data),
    )


def _publish(
    store: Store, source: Located, review: dict[str, Any], extra: list[Event], text: str, prior: str
) -> Started:
    # the note goes first: a note on an anchor no ref names is harmless

    for _ in range(ID_ATTEMPTS):
        rid = fresh_id(store)
        store.notes.set_note(
            store.notes.refs.source, rid, source.cid + "\n", f"jp: review {rid} of {source.cid}"
        )
        try:
            made, tip = fork(store, source, extra=extra, review=review, cid=rid)
            break
        except errors.ConversationExists:  # another process took the id in the same decisecond
            _restore_source_note(store, rid)
    else:
        raise errors.ConversationExists(rid)
    store.refs.set_active(made)
    activity.record_activation(store, made)
    _accept_own_delta(store, tip, extra)
    return Started(made, source.cid, text, prior)


def _accept_own_delta(store: Store, tip: str, extra: Sequence[Event]) -> None:
    """The review's delta is this user's own: listed, it is neither named nor
    checked as one from elsewhere (``app/recorded.py``).  The commits are the
    ``extra`` events as written, counted down from the tip this write made (not
    the ref's tip now, which a writer beside may have moved), so none is read
    back."""
    if not extra:
        return
    commits = store.log.ids_down(tip, len(extra))
    activity.accept_commits(
        store,
        [c for e, c in zip(extra, commits, strict=True) if e.get("type") == Kind.CONFIG_DELTA],
    )


def _restore_source_note(store: Store, cid: str) -> None:
    """Give a conversation whose id we raced for the source note its own chain implies."""
    for _ in files.retry_until(0.5, 0.01):  # its creator may be renaming the ref's lock file now
        if store.refs.exists(cid):
            break
    else:
        return
    events = store.log.load(cid).events
    own = next((e for e in reversed(events) if e.get("type") == Kind.CONVERSATION_START), {})
    record = own.get("review")
    source = record.get("source_id") if isinstance(record, dict) else None
    text = f"{source}\n" if isinstance(source, str) else None
    store.notes.set_note(
        store.notes.refs.source, cid, text, f"jp: restore the source note of {cid}"
    )


def _review_config(config: Config, model_id: str, window: int) -> dict[str, Any]:
    tools: dict[str, Any] = {name: {"enable": False} for name in config.tools()}
    tools["*"] = {"enable": False}
    tools[PROPOSE_COMPACTION] = {"enable": True}
    instructions = config.review_instructions() or REVIEW_INSTRUCTIONS
    return {
        "assistant": {
            "model": {"id": model_id, "context_window": window},
            "instructions": instructions,
        },
        "conversation": {"tools": tools},
    }


def _opening_proposal(args: dict[str, Any], rendered: str, used: dict[str, Any]) -> list[Event]:
    """The draft as the review's first proposal; ``used``: what drafting it used
    (``summary_usage``, counted by `jp usage`) on the request."""
    stamp = clock.now_text()
    call_id = "jp_opening_" + stamp.replace(":", "").replace("-", "").replace(".", "")[:21]
    return [
        {
            "type": "tool_call_request",
            "timestamp": stamp,
            "id": call_id,
            "name": PROPOSE_COMPACTION,
            "arguments": args,
            "metadata": {**JP_WRITTEN, **used},
        },
        {
            "type": "tool_call_response",
            "timestamp": stamp,
            "id": call_id,
            "content": rendered,
            "is_error": False,
            "metadata": {**JP_WRITTEN, "proposal": args},
        },
    ]


def source_fits(events: Sequence[Event], budget: int, model_id: str, catalog: Catalog) -> bool:
    """The review's size rule: the raw source fits ``budget`` tokens of the review
    model.  The estimate decides when it is far from the budget (reading no
    further than it must); in between, the provider counts where it can."""
    # lazy: the provider count loads only when the review model may not take the source
    from porcelain.models.tokens import CLEAR_ABOVE, CLEAR_BELOW, count

    if fits_tokens(events, int(budget * CLEAR_BELOW)):
        return True
    if not fits_tokens(events, int(budget * CLEAR_ABOVE)):
        return False
    visible = [e for e in events if e.get("type") in PROVIDER_VISIBLE]
    return count(model_id, visible, catalog=catalog).tokens <= budget


def fits_tokens(events: Iterable[Event], budget: int) -> bool:
    """``estimate_tokens`` of the provider-visible events is at most ``budget``.

    Stops reading as soon as the answer is known: a long source that does
    not fit is not measured to its end.
    """
    limit = budget * 4 + 3  # estimate_tokens is the characters // 4
    if limit < 0:
        return False
    total = 0
    for event in events:
        if event.get("type") in PROVIDER_VISIBLE:
            total += len(event_text(event))
            if total > limit:
                return False
    return True


def _quiet(kind: str, text: str) -> None:
    return None
