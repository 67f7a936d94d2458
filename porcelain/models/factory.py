"""The model for a ``provider/name`` id (or an alias): the one place that knows
every implementation.

It sits on top of ``porcelain.models`` (nothing in the package imports it),
and it imports the chosen provider's modules only when that provider is asked
for, so a command that never calls a model never pays for an SDK import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from porcelain.models.base import Model

if TYPE_CHECKING:
    from porcelain.models.catalog import Catalog


def get_model(model_id: str, *, max_retries: int = 2, catalog: Catalog | None = None) -> Model:
    """The model for ``provider/name`` (or an alias) among ``catalog``'s providers
    (the built-in ones without it); unknown providers are a ``UserError``."""
    # lazy: only the chosen provider's modules load
    from porcelain.models.catalog import Catalog

    catalog = catalog or Catalog()
    provider, name = catalog.provider(model_id)
    if provider.kind == "offline":
        # lazy: only the chosen provider's modules load
        from porcelain.models.offline import OfflineModel

        return OfflineModel(name)
    # lazy: only the chosen provider's modules load
    from porcelain.models.warm_client import runner

    run = runner(catalog.warm)
    if provider.kind == "anthropic":
        # lazy: only the chosen provider's modules load
        from porcelain.models.anthropic_model import AnthropicModel

        return AnthropicModel(name, max_retries=max_retries, provider=provider, runner=run)
    # lazy: only the chosen provider's modules load
    from porcelain.models.openai_model import OpenAIModel

    return OpenAIModel(name, max_retries=max_retries, provider=provider, runner=run)
