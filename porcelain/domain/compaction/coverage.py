"""What a proposal drops: its coverage report, computed without a model.

The facts of the proposal's range (``facts.py``, from the source's raw
events) that the text the model would read in its place no longer holds:
the summary for a summary proposal, the stripped turns for a mechanical one.
Each gap names the turn it came from.  The report also gives the
model-visible size of the whole conversation before and after (tokens,
estimated).  Nothing is refused for a gap: the report is there to be read.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gitstore import Event, Kind
from porcelain.domain.compaction.facts import KINDS, Fact, clip, facts_of, range_turns
from porcelain.domain.compaction.overlays import Overlay, overlay_from_event
from porcelain.domain.compaction.projection import project, project_part
from porcelain.domain.compaction.proposal import Proposal, span
from porcelain.domain.stream import Stream
from porcelain.domain.tokens import event_text, visible_chars

PROSE_KINDS = frozenset({"request", "decision", "question"})
IMPORTANT_KINDS = (*sorted(PROSE_KINDS, key=KINDS.index), "approval")  # listed first, each
_WORD = re.compile(r"[\w./:-]{4,}")
_SHOWN = 8  # the most important gaps listed one a line
_PER_KIND = 5  # the first few of each other kind, on its line
_PLURAL = {"approval": "approvals", "identifier": "identifiers"}
WARNING = "Warning: this proposal "
RECALLABLE = (
    "Nothing is deleted: the raw turns stay in the conversation, and the model can read "
    "them back with its recall tool (docs/tools.md)."
)


@dataclass(frozen=True)
class Coverage:
    missing: tuple[Fact, ...]
    before: int  # model-visible tokens of the conversation now (estimated)
    after: int  # ... with the proposal applied
    # runs of turns (1-based, inclusive) an earlier summary stands for, which this
    # proposal replaces: their facts are checked against that summary's text
    earlier: tuple[tuple[int, int], ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "missing": [{"kind": f.kind, "text": f.text, "turn": f.turn} for f in self.missing],
            "tokens": {"before": self.before, "after": self.after},
        }
        if self.earlier:
            out["earlier_summaries"] = [{"from_turn": a, "to_turn": b} for a, b in self.earlier]
        return out

    @staticmethod
    def from_json(value: dict[str, Any]) -> Coverage:
        missing = tuple(
            Fact(str(m["kind"]), str(m["text"]), int(m["turn"])) for m in value.get("missing", [])
        )
        tokens = value.get("tokens") or {}
        earlier = tuple(
            (int(r["from_turn"]), int(r["to_turn"])) for r in value.get("earlier_summaries", [])
        )
        return Coverage(missing, int(tokens.get("before", 0)), int(tokens.get("after", 0)), earlier)

    def lines(self, limit: int = _SHOWN) -> list[str]:
        """The report as the user and the model read it: a count by kind, the most
        important gaps (requests, decisions, questions, approvals) one a line, then
        each other kind on one line with its first few."""
        size = f"Model-visible size: about {self.before:,} tokens before, {self.after:,} after."
        out = [*self._earlier_lines()]
        if not self.missing:
            out.append("Coverage: the text keeps every path, command, number and request found.")
            return [*out, size, *self.saving_lines()]
        groups: dict[str, list[Fact]] = {}
        for fact in self.missing:  # in KINDS order, then by turn
            groups.setdefault(fact.kind, []).append(fact)
        counts = ", ".join(_counted(len(facts), kind) for kind, facts in groups.items())
        gaps = len(self.missing)
        out.append(
            f"Coverage: {gaps} fact{'' if gaps == 1 else 's'} of the range not in the text "
            f"({counts})."
        )
        top = [f for f in self.missing if f.kind in IMPORTANT_KINDS][:limit]
        if top:
            out.append("Most important:")
            out += [f"- turn {f.turn}, {f.kind}: {f.text}" for f in top]
        for kind, facts in groups.items():
            rest = [f for f in facts if f not in top]
            if rest:
                out.append(_group_line(kind, rest))
        out.append(RECALLABLE)
        return [*out, size, *self.saving_lines()]

    def _earlier_lines(self) -> list[str]:
        if not self.earlier:
            return []
        runs = ", ".join(span(a, b) for a, b in self.earlier)
        return [
            f"{runs[0].upper()}{runs[1:]}: summarized earlier; this proposal replaces that "
            "summary, so their facts are checked against it (what it had already left out "
            "is not listed)."
        ]

    def saving_lines(self) -> list[str]:
        """A warning when the proposal saves nothing or makes the model's context larger."""
        if self.after > self.before:
            return [
                f"{WARNING}makes the model's context larger "
                f"({self.before:,} -> {self.after:,} tokens)."
            ]
        if self.after == self.before:
            return [f"{WARNING}saves nothing ({self.before:,} tokens either way)."]
        return []


def _counted(n: int, kind: str) -> str:
    return f"{n} {kind if n == 1 else _PLURAL.get(kind, kind + 's')}"


def _group_line(kind: str, facts: Sequence[Fact]) -> str:
    shown = ", ".join(f"{clip(f.text, 80)} (turn {f.turn})" for f in facts[:_PER_KIND])
    more = f", and {len(facts) - _PER_KIND} more" if len(facts) > _PER_KIND else ""
    return f"{_PLURAL.get(kind, kind + 's').capitalize()} ({len(facts)}): {shown}{more}"


def same_file(a: str, b: str) -> bool:
    """Two paths of one file as a session writes them: ``app.js``, ``assets/js/app.js``
    and ``/home/me/site/assets/js/app.js`` (one ends with the other, at a ``/``)."""
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def one_path_a_file(missing: Sequence[Fact], found: Sequence[Fact], text: str) -> list[Fact]:
    """``missing`` with each file's paths counted once: a path is not missing when
    the text holds another spelling of its file, and of the spellings that are
    missing only the shortest with a folder in it is listed (at its first turn)."""
    paths = [f for f in found if f.kind == "path"]
    by_name: dict[str, list[Fact]] = {}
    for fact in paths:
        by_name.setdefault(fact.text.rpartition("/")[2], []).append(fact)
    out: list[Fact] = []
    listed: list[Fact] = []
    for fact in missing:
        if fact.kind != "path":
            out.append(fact)
            continue
        kin = [f for f in by_name.get(fact.text.rpartition("/")[2], []) if same_file(f.text, fact.text)]
        if any(kept(f, text) for f in kin) or any(same_file(f.text, fact.text) for f in listed):
            continue
        gaps = [f for f in kin if not kept(f, text)]
        best = min(gaps, key=lambda f: ("/" not in f.text, len(f.text), f.turn))
        first = min(f.turn for f in gaps)
        listed.append(Fact("path", best.text, first))
        out.append(listed[-1])
    return out


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def kept(fact: Fact, text: str) -> bool:
    """Whether ``text`` (already normalized) holds the fact.

    Exact facts must appear verbatim (whitespace and case aside); a request,
    decision or question also counts as kept when most of its words do.
    """
    wanted = _norm(fact.text)
    if wanted in text:
        return True
    if fact.kind not in PROSE_KINDS:
        return False
    words = {w.casefold() for w in _WORD.findall(fact.text)}
    if not words:
        return False
    present = sum(1 for w in words if w in text)
    return present >= 0.8 * len(words)


def _replacement_text(applied: Stream, proposal: Proposal) -> str:
    """What the model reads in the range's place, ``applied``: the source with the proposal."""
    if proposal.summary is not None:
        return proposal.summary
    view = project(applied)
    picked = range_turns(view.events, proposal.from_turn - 1, proposal.to_turn - 1)
    return "\n".join(_visible_text(e) for _, e in picked)


def _visible_text(event: Event) -> str:
    return event_text(event)


def _covered(overlays: Sequence[Overlay], count: int) -> list[tuple[int, int]]:
    """The runs of turns some overlay covers (0-based, inclusive), merged, in order."""
    spans = sorted((o.from_turn, min(o.to_turn, count - 1)) for o in overlays)
    merged: list[tuple[int, int]] = []
    for lo, hi in spans:
        if lo > hi:
            continue
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    return merged


def _visible_size(stream: Stream, raw: int) -> int:
    """``estimate_tokens`` of the projection's provider-visible events, from the raw
    stream's ``raw`` characters: only the turns an overlay covers are read and projected
    (the others are the model's as they are)."""
    chars = raw
    events, indices = stream.events, stream.indices
    for lo, hi in _covered(stream.overlays, stream.count):
        part = range(bisect_left(indices, lo), bisect_right(indices, hi))
        chars -= visible_chars([events[i] for i in part])
        chars += visible_chars(project_part(stream, part))
    return chars // 4


def coverage(source: Sequence[Event] | Stream, proposal: Proposal) -> Coverage:
    """The report for ``proposal`` (1-based turns) over the source's raw events.

    A stream of a view (``ChainView``) is read only where the range and the
    standing compactions are: its turns and compactions come from its facts.
    """
    stream = Stream.of(source)
    events, standing = stream.events, stream.overlays
    overlay = overlay_from_event(proposal.to_compaction_event(""), len(events))
    applied = stream.with_overlays([*standing, overlay])
    pairs = range_turns(stream, proposal.from_turn - 1, proposal.to_turn - 1)
    text = _norm(_replacement_text(applied, proposal))
    found = facts_of(_still_visible(pairs, standing))
    missing = one_path_a_file([f for f in found if not kept(f, text)], found, text)
    replaced = _replaced_summaries(standing, proposal) if proposal.summary is not None else {}
    for earlier in {id(o): o for o in replaced.values()}.values():
        turns = {t for t, o in replaced.items() if o is earlier}
        held = _norm(earlier.summary or "")
        facts = facts_of([(t, e) for t, e in pairs if t in turns])
        missing += [f for f in facts if kept(f, held) and not kept(f, text)]
    first = {(f.kind, f.text): f for f in sorted(missing, key=lambda f: -f.turn)}
    missing = sorted(first.values(), key=lambda f: (KINDS.index(f.kind), f.turn))
    raw = visible_chars(events)
    before, after = _visible_size(stream, raw), _visible_size(applied, raw)
    return Coverage(tuple(missing), before, after, _runs_of(sorted(replaced)))


def _replaced_summaries(standing: Sequence[Overlay], proposal: Proposal) -> dict[int, Overlay]:
    """1-based turn -> the standing summary the model reads for it now, for the turns of
    the proposal's range: a summary proposal takes their place, so what that earlier
    summary still told the model is this proposal's to keep or drop."""
    winner: dict[int, Overlay] = {}
    for o in standing:  # stream order: a later overlay wins
        for turn in range(o.from_turn + 1, o.to_turn + 2):
            if o.has_summary and proposal.from_turn <= turn <= proposal.to_turn:
                winner[turn] = o
    return winner


def _runs_of(turns: Sequence[int]) -> tuple[tuple[int, int], ...]:
    runs: list[tuple[int, int]] = []
    for turn in turns:
        if runs and turn == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], turn)
        else:
            runs.append((turn, turn))
    return tuple(runs)


def _still_visible(
    pairs: list[tuple[int, Event]], standing: list[Overlay]
) -> list[tuple[int, Event]]:
    """The pairs the model still reads: what a standing compaction already took away
    (a summarized turn, an omitted or stripped tool call) is not this proposal's to drop,
    and listing it would put hidden text back in front of the model."""
    summarized: set[int] = set()
    tools_gone: set[int] = set()
    for o in standing:
        turns = range(o.from_turn + 1, o.to_turn + 2)  # 1-based, as the pairs
        (summarized if o.has_summary else tools_gone if o.tool_calls else set()).update(turns)
    tool_kinds = (Kind.TOOL_CALL_REQUEST, Kind.TOOL_CALL_RESPONSE)
    return [
        (turn, e)
        for turn, e in pairs
        if turn not in summarized and not (turn in tools_gone and e.get("type") in tool_kinds)
    ]


def coverage_json(source: Sequence[Event] | Stream, proposal: Proposal) -> dict[str, Any]:
    return coverage(source, proposal).to_json()
