"""How many tokens events hold: the provider's count where it offers one
(Anthropic's count-tokens endpoint), else the estimate (characters / 4).

Counting costs a request (and the SDK's import), so it is done only when a
decision hangs on it: ``fits`` settles with the estimate alone whenever the
estimate is far from the budget, and asks the provider only in between.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gitstore import Event
from porcelain.domain.token_count import TokenCount, estimate
from porcelain.domain.tokens import estimate_tokens
from porcelain.errors import JpError
from porcelain.models.base import ModelRequest
from porcelain.models.factory import get_model

if TYPE_CHECKING:
    from porcelain.models.catalog import Catalog

__all__ = ["CLEAR_ABOVE", "CLEAR_BELOW", "TokenCount", "count", "estimate", "fits"]

# the estimate decides alone below CLEAR_BELOW x budget and above CLEAR_ABOVE x budget
CLEAR_BELOW = 0.25
CLEAR_ABOVE = 2.0


def count(
    model_id: str,
    events: Sequence[Event],
    *,
    catalog: Catalog | None = None,
    max_retries: int = 2,
) -> TokenCount:
    """The provider's count of ``events`` as one request (no tools: calls and
    results as text), else the estimate.  A count that fails falls back to the
    estimate: counting never stops the work it informs."""
    model = get_model(model_id, max_retries=max_retries, catalog=catalog)
    request = ModelRequest(model_id, "", list(events), task="summary", cache=False)
    try:
        found = model.count_tokens(request)
    except JpError:
        found = None
    if found is None:
        return estimate(events)
    return TokenCount(found, model_id.partition("/")[0])


def fits(
    events: Sequence[Event],
    budget: int,
    model_id: str,
    *,
    catalog: Catalog | None = None,
    max_retries: int = 2,
) -> bool:
    """``events`` hold at most ``budget`` tokens; the provider counts only when
    the estimate is too close to the budget to tell."""
    guess = estimate_tokens(events)
    if guess <= budget * CLEAR_BELOW:
        return True
    if guess >= budget * CLEAR_ABOVE:
        return False
    return count(model_id, events, catalog=catalog, max_retries=max_retries).tokens <= budget
