"""A review's proposals as revisions: numbered, with who wrote them and what they drop.

Every valid ``propose_compaction`` call of a review is one revision (its
commit is the call's).  `show` reads the latest, `compact --log` lists them
all and `compact --diff` compares two.  Plain functions over event lists.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gitstore import Event
from porcelain.domain.compaction.coverage import Coverage, coverage
from porcelain.domain.compaction.proposal import Proposal, span
from porcelain.domain.review.state import proposal_calls, proposal_from_args
from porcelain.domain.stream import Stream
from porcelain.errors import UserError


@dataclass(frozen=True)
class Revision:
    number: int  # 1-based, in the order they were made
    position: int  # of the call in the review's events
    proposal: Proposal
    author: str  # "jp" (the opening draft) or "model"
    coverage: Coverage | None = None

    def to_json(self) -> dict[str, Any]:
        out = {"number": self.number, **self.proposal.to_json(), "author": self.author}
        out["summary_words"] = len((self.proposal.summary or "").split())
        if self.coverage is not None:
            out["coverage"] = self.coverage.to_json()
        return out


def revisions(
    events: Sequence[Event], source: Sequence[Event] | Stream | None
) -> list[Revision]:
    """The valid proposals of a review, oldest first (with coverage when ``source`` is given)."""
    out: list[Revision] = []
    stream = None if source is None else Stream.of(source)  # its facts found once for all
    for pos, request, response in proposal_calls(events):
        if response is None or response.get("is_error"):
            continue
        recorded = (response.get("metadata") or {}).get("proposal")
        args = recorded if isinstance(recorded, dict) else request.get("arguments") or {}
        proposal = proposal_from_args(dict(args))
        if proposal is None:
            continue
        jp = (request.get("metadata") or {}).get("written_by") == "jp"
        report = None if stream is None else coverage(stream, proposal)
        out.append(Revision(len(out) + 1, pos, proposal, "jp" if jp else "model", report))
    return out


def latest_json(
    events: Sequence[Event], source: Sequence[Event] | Stream | None
) -> dict[str, Any] | None:
    """`show`'s ``proposal``: the latest revision, with its ``coverage``."""
    found = revisions(events, None)
    if not found:
        return None
    latest = found[-1]
    out = latest.proposal.to_json()
    if source is not None:
        out["coverage"] = coverage(source, latest.proposal).to_json()
    return out


def policies(p: Proposal) -> str:
    return ", ".join(p.labels())


def log_line(r: Revision) -> str:
    """``2  turns 2-5  summary, 12 words  3 gaps  by model``."""
    words = len((r.proposal.summary or "").split())
    what = policies(r.proposal) + (f", {words} word{'' if words == 1 else 's'}" if words else "")
    gaps = "" if r.coverage is None else f"{len(r.coverage.missing)} gaps"
    by = "jp (opening draft)" if r.author == "jp" else "the model"
    return f"{r.number:>3}  {span(r.proposal.from_turn, r.proposal.to_turn):<12} {what:<26} {gaps:<9} by {by}"


def pick(found: Sequence[Revision], numbers: Sequence[str]) -> tuple[Revision, Revision]:
    """The two revisions ``--diff`` compares (default: the last two)."""
    if not found:
        raise UserError("the review holds no proposal yet", "discuss it with `jp q ...`")
    chosen: list[Revision] = []
    for raw in numbers:
        if not raw.isdigit() or not 1 <= int(raw) <= len(found):
            raise UserError(
                f"no proposal {raw}: the review has proposals 1-{len(found)}",
                "list them with `jp conversation compact --log`",
            )
        chosen.append(found[int(raw) - 1])
    if len(chosen) == 2:
        return chosen[0], chosen[1]
    if len(chosen) == 1:
        return chosen[0], found[-1]
    return found[-2] if len(found) > 1 else found[-1], found[-1]


_TOKEN = re.compile(r"\s+|[^\s]+")


def word_diff(old: str, new: str) -> str:
    """Words removed as ``[-...-]`` and added as ``{+...+}``, as `git diff --word-diff` marks them."""
    a, b = _TOKEN.findall(old), _TOKEN.findall(new)
    out: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append("".join(a[i1:i2]))
            continue
        if i2 > i1:
            out.append("[-" + "".join(a[i1:i2]) + "-]")
        if j2 > j1:
            out.append("{+" + "".join(b[j1:j2]) + "+}")
    return "".join(out)


def diff_lines(a: Revision, b: Revision) -> list[str]:
    pa, pb = a.proposal, b.proposal
    out = [f"Proposal {a.number} -> {b.number}"]
    ra, rb = span(pa.from_turn, pa.to_turn), span(pb.from_turn, pb.to_turn)
    out.append(f"Range:    {ra}" + ("" if ra == rb else f" -> {rb}"))
    la, lb = policies(pa), policies(pb)
    out.append(f"Policies: {la}" + ("" if la == lb else f" -> {lb}"))
    if a.coverage is not None and b.coverage is not None:
        out.append(f"Gaps:     {len(a.coverage.missing)} -> {len(b.coverage.missing)}")
    out.append("Summary:")
    if (pa.summary or "") == (pb.summary or ""):
        out.append("  (unchanged)")
    else:
        out += ["  " + line for line in word_diff(pa.summary or "", pb.summary or "").splitlines()]
    return out


def diff_json(a: Revision, b: Revision) -> dict[str, Any]:
    return {
        "from": a.to_json(),
        "to": b.to_json(),
        "summary_diff": word_diff(a.proposal.summary or "", b.proposal.summary or ""),
    }
