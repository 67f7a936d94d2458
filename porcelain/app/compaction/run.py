"""Running a compaction on a stored conversation: plan, summarize, append.

Every overlay of one invocation is built before anything is written (a
summarizer failure appends nothing), then all are appended in one
compare-and-swap while the conversation is held.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gitstore import Conversation, Event, Store
from porcelain import clock
from porcelain.app.compaction.summarize import SummaryJob, summarize_counted
from porcelain.app.recorded import conversation_deltas
from porcelain.app.review.start import refuse_if_open, refuse_if_review
from porcelain.config import Config
from porcelain.domain import defaults
from porcelain.domain.compaction.dsl import parse_spec
from porcelain.domain.compaction.plan import PlannedOverlay, plan_compaction, planned_to_event
from porcelain.domain.compaction.projection import Projection, project
from porcelain.domain.compaction.proposal import span
from porcelain.domain.compaction.ranges import RangeOverrides
from porcelain.domain.compaction.rules import (
    Rule,
    effective_rules,
    redirect_summary_model,
    rules_from_config,
)
from porcelain.domain.compaction.timeline import timeline
from porcelain.domain.stream import Stream
from porcelain.models.catalog import Catalog

if TYPE_CHECKING:
    from porcelain.app.session import Session


@dataclass
class Outcome:
    planned: list[PlannedOverlay]
    lines: list[str]
    events: list[Event] = field(default_factory=list)
    summaries: list[str | None] = field(default_factory=list)


def default_model(app: Session) -> str:
    return defaults.default_model(app.has_api_key())


def compact(
    store: Store,
    source: str | Conversation,
    config: Config,
    rules: Sequence[Rule],
    overrides: RangeOverrides,
    *,
    dry_run: bool,
    model_override: str | None,
    fallback_model: str,
    progress: Callable[[str], None] = lambda _: None,
) -> Outcome:
    """Plan and (unless ``dry_run``) append the overlays ``rules`` make.

    ``source``: the conversation's id, or the conversation as the caller
    already read it (spares reading it again); the append is a
    compare-and-swap on its tip all the same.
    """
    conv = store.log.load(source) if isinstance(source, str) else source
    stream = Stream(conv.events)  # each walk over the whole stream made once
    if model_override:
        rules = redirect_summary_model(rules, model_override)
    planned = plan_compaction(stream, rules, overrides, clock.now())
    existing, count = stream.overlays, stream.count
    if dry_run or not planned:
        labels = [(p.from_turn, p.to_turn, p.label) for p in planned]
        return Outcome(planned, timeline(existing, labels, count, dry_run) if planned else [])
    assistant = model_override or config.model_id() or fallback_model
    used: list[dict[str, Any]] = []  # what each summary's call used, for `jp usage`
    texts = _summaries(planned, stream, config, assistant, progress, used)
    stamp = clock.now_text()
    new = [planned_to_event(p, t, stamp) for p, t in zip(planned, texts, strict=True)]
    new = [{**e, "metadata": u} if u else e for e, u in zip(new, used, strict=True)]
    store.log.append(conv.cid, new, conv.tip, f"jp conversation compact {conv.cid}")
    labels = [(p.from_turn, p.to_turn, p.label) for p in planned]
    return Outcome(planned, timeline(existing, labels, count, False), new, texts)


def _summaries(
    planned: Sequence[PlannedOverlay],
    stream: Stream,
    config: Config,
    assistant: str,
    progress: Callable[[str], None],
    used: list[dict[str, Any]],
) -> list[str | None]:
    """Each planned overlay's summary text (None for a mechanical one), in order; what
    each call used is appended to ``used`` ({} for a mechanical one)."""
    texts: list[str | None] = []
    made: list[Projection] = []
    catalog = Catalog.of(config.data)  # the configured providers, read once

    def projection() -> Projection:
        """Made once, and only if a summary's raw range does not fit its model."""
        if not made:
            made.append(project(stream))
        return made[0]

    for p in planned:
        if p.summary_spec is None:
            texts.append(None)
            used.append({})
            continue
        progress(f"Generating summary of {span(p.from_turn + 1, p.to_turn + 1)}...")
        model_id = p.summary_spec.model_id or assistant
        job = SummaryJob(
            model_id=model_id,
            instructions=p.summary_spec.instructions,
            context=p.summary_spec.context,
            max_retries=config.max_retries(),
            window=config.context_window() if model_id == assistant else None,
            catalog=catalog,
        )
        text, usage = summarize_counted(job, stream, projection, p.from_turn, p.to_turn)
        texts.append(text)
        used.append(usage)
    return texts


def compact_silently(
    app: Session,
    cid: str,
    specs: Sequence[str],
    config: Config | None = None,
    rules: Sequence[Rule] | None = None,
    model_id: str | None = None,
) -> None:
    """`q -k` and `fork -k`: compact before the turn, printing nothing.

    A query passes its plan's configuration, rules and model (``QueryPlan``);
    without them they come from the conversation as recorded."""
    store = app.store()
    refuse_if_review(store, cid)
    refuse_if_open(store, cid, starting=False)
    conv = store.log.load(cid)  # read once, for the configuration and the compaction
    if config is None:
        config = app.config(deltas=conversation_deltas(store, conv))
    if rules is None:
        inline = [parse_spec(s) for s in specs if s]
        rules = effective_rules(rules_from_config(config.rules()), inline, bare_k="" in specs)
    compact(
        store,
        conv,
        config,
        rules,
        RangeOverrides(),
        dry_run=False,
        model_override=None,
        fallback_model=model_id or default_model(app),
    )
