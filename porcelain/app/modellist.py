"""What `jp model ls` lists and `-m` completes: providers, aliases, model ids.

Read from the configuration and the environment only: whether a key is set,
never its value; no SDK is imported and nothing is called.  Aliases are
resolved through the catalog's own resolver, so the list says what `-m`
would do; a bad alias is listed with its error instead of breaking the rest.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from porcelain.config import Config
from porcelain.domain.defaults import DEFAULT_MODEL, OFFLINE_MODEL
from porcelain.errors import JpError
from porcelain.models.base import context_window
from porcelain.models.catalog import Catalog, Provider

# Model ids jp knows by name (more work: any `provider/name` the provider serves).
KNOWN_MODELS = (
    OFFLINE_MODEL,
    DEFAULT_MODEL,
    "anthropic/claude-opus-4-1",
    "anthropic/claude-haiku-4-5",
    "openai/gpt-5",
    "openai/gpt-5-mini",
    "openai/gpt-4.1",
    "openai/gpt-4o",
    "openai/o3",
    "openai/o4-mini",
)


@dataclass(frozen=True)
class ProviderRow:
    name: str
    kind: str
    builtin: bool
    base_url: str | None
    key: str | None  # the environment variable its key is read from; None: no key needed
    key_set: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "builtin": self.builtin,
            "base_url": self.base_url,
            "key_env": self.key,
            "key_set": self.key_set,
        }


@dataclass(frozen=True)
class ModelRow:
    id: str
    window: int
    provider: str
    key: str | None
    key_set: bool
    why: str  # "known", "configured: assistant.model.id", "alias fast"...

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "context_window": self.window,
            "provider": self.provider,
            "key_env": self.key,
            "key_set": self.key_set,
            "source": self.why,
        }


@dataclass(frozen=True)
class AliasRow:
    name: str
    target: str
    resolved: str | None
    error: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "target": self.target,
            "resolves_to": self.resolved,
            "error": self.error,
        }


@dataclass(frozen=True)
class ModelList:
    providers: list[ProviderRow]
    aliases: list[AliasRow]
    models: list[ModelRow]
    default: str

    def to_json(self) -> dict[str, Any]:
        return {
            "default": self.default,
            "providers": [p.to_json() for p in self.providers],
            "aliases": [a.to_json() for a in self.aliases],
            "models": [m.to_json() for m in self.models],
        }


def _key_set(provider: Provider, environ: Mapping[str, str]) -> bool:
    if provider.api_key_env is None:
        return True
    if environ.get(provider.api_key_env):
        return True
    return provider.name == "anthropic" and bool(environ.get("ANTHROPIC_AUTH_TOKEN"))


def _resolve(catalog: Catalog, ref: str) -> tuple[str | None, str | None]:
    try:
        return catalog.resolve(ref), None
    except JpError as exc:
        return None, exc.message


def _configured(config: Config) -> list[tuple[str, str]]:
    found = [
        (config.model_id(), "configured: assistant.model.id"),
        (config.review_model_id(), "configured: conversation.compaction.review.model.id"),
    ]
    return [(ref, why) for ref, why in found if ref]


def model_list(config: Config, environ: Mapping[str, str], default: str) -> ModelList:
    """Everything `-m` can name under ``config``, with what each needs to run."""
    catalog = Catalog.of(config.data)
    providers = [
        ProviderRow(p.name, p.kind, p.builtin, p.base_url, p.api_key_env, _key_set(p, environ))
        for p in sorted(catalog.providers.values(), key=lambda p: (not p.builtin, p.name))
    ]
    aliases = [
        AliasRow(name, target, *_resolve(catalog, name))
        for name, target in sorted(catalog.aliases.items())
    ]
    wanted: dict[str, str] = {}
    for ref, why in [*_configured(config), *((m, "known") for m in KNOWN_MODELS)]:
        resolved, _ = _resolve(catalog, ref)
        if resolved is not None:
            wanted.setdefault(resolved, why if resolved == ref else f"{why} (as {ref})")
    for alias in aliases:
        if alias.resolved is not None:
            wanted.setdefault(alias.resolved, f"alias {alias.name}")
    by_name = {p.name: p for p in providers}
    models = []
    for model_id, why in wanted.items():
        row = by_name.get(model_id.partition("/")[0])
        if row is None:
            continue  # a configured id whose provider is unknown: `jp q` names it
        configured = config.context_window() if model_id == config.model_id() else None
        window = context_window(model_id, configured)
        models.append(ModelRow(model_id, window, row.name, row.key, row.key_set, why))
    return ModelList(providers, aliases, models, default)


def completions(listing: ModelList) -> list[tuple[str, str]]:
    """`-m` candidates: the aliases, then the model ids, each with a short description."""
    items = [(a.name, f"alias of {a.target}") for a in listing.aliases if a.error is None]
    for m in listing.models:
        needs = "" if m.key_set or m.key is None else f", needs {m.key}"
        items.append((m.id, f"{m.window:,} tokens{needs}"))
    return items
