"""The one mapping of a provider call's ``Failure`` to what the user reads.

Every SDK-backed provider says the same things in the same words: what the
provider returned (status, the API's error type, its message), that it could
not be reached (and where to look), that the stream broke off or ended early
(and that what arrived is kept).  Keys never appear: each line is cleaned of
the endpoint's secrets.
"""

from __future__ import annotations

import re

from gitstore import Event
from porcelain.errors import ProviderError
from porcelain.models.base import StreamInterrupted
from porcelain.models.calls import Failure, one_line
from porcelain.models.catalog import Endpoint, Provider

KEPT = "what arrived before the break is kept; ask again to continue"
_USERINFO = re.compile(r"//[^/@]*@")


class ProviderErrors:
    """Failures of calls to ``provider`` at ``point``, as one line each.

    ``place`` is how the provider is named when it cannot be reached (``{name}``
    is replaced); ``default_url`` is the SDK's own URL when the endpoint names none.
    """

    def __init__(
        self, provider: Provider, point: Endpoint, place: str = "{name}", default_url: str = ""
    ) -> None:
        self.provider = provider
        self.secrets = point.secrets()
        self.place = place.format(name=provider.name)
        self.base_url = _USERINFO.sub("//", point.base_url or default_url).rstrip("/")

    def _clean(self, text: str) -> str:
        return one_line(text, self.secrets)

    def failed(self, exc: Failure) -> ProviderError:
        """A call that failed before its stream opened (after the SDK's retries)."""
        name = self.provider.name
        if exc.kind == "status":
            label = f"{exc.status} {exc.error_type}" if exc.error_type else str(exc.status)
            return ProviderError(
                self._clean(f"{name} returned {label}: {exc.message}"), self._hint(exc.status)
            )
        if exc.kind in ("connection", "timeout"):
            where = (
                f"{self.provider.base_url_env} if it is set"
                if self.provider.base_url_env
                else f"providers.{name}.base_url"
            )
            return ProviderError(
                self._clean(f"could not reach {self.place} at {self.base_url}: {exc.detail}"),
                f"check the network, or {where}",
            )
        return ProviderError(self._clean(f"{name} request failed: {exc.detail}"))

    def interrupted(self, exc: Failure, partial: list[Event]) -> StreamInterrupted:
        """A stream that failed part way; ``partial`` is what completed."""
        detail = f"{exc.error_type}: {exc.message}" if exc.error_type else exc.detail or exc.message
        return StreamInterrupted(
            self._clean(f"the {self.provider.name} stream broke off: {detail}"), partial, KEPT
        )

    def ended(self, partial: list[Event]) -> StreamInterrupted:
        """A stream that closed before the answer was complete."""
        return StreamInterrupted(
            f"the {self.provider.name} stream ended before the answer was complete", partial, KEPT
        )

    def _hint(self, status: int) -> str | None:
        if status in (401, 403):
            variable = self.provider.api_key_env
            return f"check {variable}" if variable else f"check providers.{self.provider.name}"
        if status == 404:
            return "check the model id (assistant.model.id)"
        if status in (429, 529) or status >= 500:
            return "the API is busy or failing; try again in a moment"
        return None
