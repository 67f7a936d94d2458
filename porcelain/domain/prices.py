"""What a model's tokens cost: the price table jp ships, and the user's own prices.

Prices are US dollars per million tokens: input, output, cache write (the
5-minute cache's), cache read.  ``TABLE`` is dated and its source named in
docs/usage.md; the user's configuration (``[usage.prices."MODEL"]``, read from
the user's file only) adds models or replaces a price.  A model found in
neither has no price: its tokens are shown and its cost is None, never guessed.

A model is looked up by its name as recorded, then by the name without a
provider's prefix (``anthropic/``, ``openai/``, Bedrock's ``anthropic.`` and
region prefixes, ``converse/``), a version suffix (``-v1:0``, ``@...``), a
``-fast`` mode and a release date (``-20250929``).  Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

TABLE_DATE = "2026-12-07"
KINDS = ("input", "output", "cache_write", "cache_read")


TIER = 200_000  # a request's tokens of one kind above this cost ``above`` (where there is one)


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    cache_write: float
    cache_read: float
    above: Price | None = None  # the long-context rates, as ccusage applies them

    def rates(self) -> tuple[float, float, float, float]:
        return (self.input, self.output, self.cache_write, self.cache_read)

    def cost(self, counts: Sequence[int], excess: Sequence[int] = (0, 0, 0, 0)) -> float:
        """USD for ``counts`` (input, output, cache creation, cache read tokens), of
        which ``excess`` were a request's tokens of that kind beyond ``TIER``."""
        base = sum(n * rate for n, rate in zip(counts, self.rates(), strict=True))
        if self.above is not None:
            extra = zip(excess, self.above.rates(), self.rates(), strict=True)
            base += sum(n * (high - low) for n, high, low in extra)
        return base / 1e6


def _p(i: float, o: float, w: float, r: float, above: Price | None = None) -> Price:
    return Price(i, o, w, r, above)


_LONG = Price(6, 22.5, 7.5, 0.6)  # Sonnet 4 and 4.5 beyond 200,000 tokens


# Anthropic: docs.claude.com "Pricing"; OpenAI: platform.openai.com "Pricing" (read TABLE_DATE).
TABLE: dict[str, Price] = {
    "claude-opus-4-7": _p(5, 25, 6.25, 0.5),
    "claude-opus-4-6": _p(5, 25, 6.25, 0.5),
    "claude-opus-4-5": _p(5, 25, 6.25, 0.5),
    "claude-opus-4-1": _p(15, 75, 18.75, 1.5),
    "claude-opus-4": _p(15, 75, 18.75, 1.5),
    "claude-sonnet-4-6": _p(3, 15, 3.75, 0.3),
    "claude-sonnet-4-5": _p(3, 15, 3.75, 0.3, _LONG),
    "claude-sonnet-4": _p(3, 15, 3.75, 0.3, _LONG),
    "claude-3-7-sonnet": _p(3, 15, 3.75, 0.3),
    "claude-3-5-sonnet": _p(3, 15, 3.75, 0.3),
    "claude-haiku-4-5": _p(1, 5, 1.25, 0.1),
    "claude-3-5-haiku": _p(0.8, 4, 1, 0.08),
    "claude-3-opus": _p(15, 75, 18.75, 1.5),
    "claude-3-haiku": _p(0.25, 1.25, 0.3, 0.03),
    "gpt-5": _p(1.25, 10, 0, 0.125),
    "gpt-5-codex": _p(1.25, 10, 0, 0.125),
    "gpt-5.1": _p(1.25, 10, 0, 0.125),
    "gpt-5.1-codex": _p(1.25, 10, 0, 0.125),
    "gpt-5-mini": _p(0.25, 2, 0, 0.025),
    "gpt-5-nano": _p(0.05, 0.4, 0, 0.005),
    "gpt-4.1": _p(2, 8, 0, 0.5),
    "gpt-4.1-mini": _p(0.4, 1.6, 0, 0.1),
    "gpt-4o": _p(2.5, 10, 0, 1.25),
    "gpt-4o-mini": _p(0.15, 0.6, 0, 0.075),
    "o3": _p(2, 8, 0, 0.5),
    "o4-mini": _p(1.1, 4.4, 0, 0.275),
}

_PREFIX = re.compile(r"^(?:[a-z0-9-]+/)*(?:(?:[a-z]{2,4}|global)\.)?(?:anthropic\.|openai\.)?")
_SUFFIX = re.compile(r"(?:-v\d+(?::\d+)?|@[\w.-]*)$")
_DATE = re.compile(r"-(?:20\d{6}|\d{4}-\d{2}-\d{2})$")
_FAST = "-fast"
MAX_PRICE = 1e6  # USD per million tokens: above any real price


def candidates(model: str) -> list[str]:
    """The names ``model`` is looked up by, most exact first."""
    out = [model]
    bare = _SUFFIX.sub("", _PREFIX.sub("", model.lower()))
    if bare.endswith(_FAST):
        bare = bare[: -len(_FAST)]
    out += [bare, _DATE.sub("", bare)]
    return list(dict.fromkeys(out))


def user_prices(layer: Mapping[str, Any]) -> dict[str, Price]:
    """``[usage.prices."MODEL"]`` of the user's file (validated by the schema): each a
    table of the four prices; a price left out is the shipped one's, else 0."""
    usage = layer.get("usage")
    prices = usage.get("prices") if isinstance(usage, dict) else None
    out: dict[str, Price] = {}
    for model, given in (prices or {}).items():
        if not isinstance(given, dict):
            continue
        base = lookup(model, {})
        i, o, w, r = (
            float(given[k]) if k in given else (getattr(base, k) if base else 0.0) for k in KINDS
        )
        out[model] = Price(i, o, w, r, base.above if base else None)
    return out


def lookup(model: str | None, user: Mapping[str, Price]) -> Price | None:
    """The price of ``model``: the user's, else the table's, else None."""
    if not model:
        return None
    names = candidates(model)
    for table in (user, TABLE):
        for name in names:
            if name in table:
                return table[name]
    return None


def fast(model: str | None) -> bool:
    """Whether ``model`` names Anthropic's fast mode (priced six times the standard)."""
    return bool(model) and str(model).endswith(_FAST)
