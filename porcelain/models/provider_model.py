"""What every SDK-backed model shares: its provider entry, key lookup and call runner."""

from __future__ import annotations

import os
from collections.abc import Mapping

from porcelain.models.calls import Runner, in_process
from porcelain.models.catalog import BUILTIN, Endpoint, Provider, endpoint


class ProviderModel:
    """``PROVIDER/<name>``: ``<name>`` is what the provider is sent as the model.

    ``runner`` makes the call (in this process, or through the warm model
    process); ``environ`` is where the key is read, at each call.
    """

    DEFAULT_PROVIDER = ""  # the built-in provider of the subclass's kind

    def __init__(
        self,
        name: str,
        *,
        max_retries: int = 2,
        provider: Provider | None = None,
        runner: Runner = in_process,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.name = name
        self.max_retries = max_retries
        self.provider = provider or BUILTIN[self.DEFAULT_PROVIDER]
        self.runner = runner
        self.environ = os.environ if environ is None else environ

    @property
    def model_id(self) -> str:
        return f"{self.provider.name}/{self.name}"

    def _endpoint(self) -> Endpoint:
        return endpoint(self.provider, self.environ)
