"""`compact`'s flags decoded once into a typed value, for the command and its flows."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from porcelain.domain.compaction.rangecheck import typed_range
from porcelain.domain.compaction.ranges import RangeOverrides, parse_range_overrides

RANGE_FLAGS = ("from_", "to", "keep_first", "keep_last", "first", "last", "turn")


@dataclass(frozen=True)
class CompactOptions:
    """Every flag of `jp conversation compact`, as click decoded it."""

    from_: str | None = None
    to: str | None = None
    keep_first: str | None = None
    keep_last: str | None = None
    first: str | None = None
    last: str | None = None
    turn: str | None = None
    summarize: str | None = None  # "" for a bare --summarize
    reasoning: bool = False
    tools: str | None = None
    specs: tuple[str, ...] = ()
    model: str | None = None
    dry_run: bool = False
    reset: str | None = None
    interactive: bool = False
    continue_: bool = False
    abort: bool = False
    log: bool = False
    diff: bool = False
    yes: bool = False
    confirm: bool = False

    @classmethod
    def of(cls, raw: dict[str, Any]) -> CompactOptions:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in raw.items() if k in known})

    def given(self, names: tuple[str, ...]) -> list[str]:
        """The flags among ``names`` that were given, as typed (``--keep-first``)."""
        return [
            "--" + n.rstrip("_").replace("_", "-")
            for n in names
            if getattr(self, n) not in (None, False, ())
        ]

    def overrides(self) -> RangeOverrides:
        """The range flags, parsed."""
        return parse_range_overrides(
            keep_first=self.keep_first,
            keep_last=self.keep_last,
            from_=self.from_,
            to=self.to,
            first=self.first,
            last=self.last,
            turn=self.turn,
        )

    def typed_range(self) -> dict[str, str | None]:
        """The range flags as the user typed them, by flag name (for the messages)."""
        return typed_range(vars(self))

    def confirmed(self, configured_yes: bool) -> bool:
        """Whether to go on without asking (-y or the configured yes, unless --confirm)."""
        return (self.yes or configured_yes) and not self.confirm
