"""Which provider serves a model id, where it lives, and where its key comes from.

A model id is ``provider/name``, or the name of an alias from
``[assistant.model.aliases]`` (``fast = "ollama/qwen3"``).  Providers are the
built-in ones below plus the user's ``[providers.NAME]`` entries (``kind``,
``base_url``, ``api_key_env``); an entry named like a built-in one changes only
the fields it gives.  Keys are read from the environment when a call is made
(``endpoint``), never kept in the configuration or the store.

No SDK import, no I/O besides reading the ``environ`` passed in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from porcelain.errors import ConfigError, UserError

Kind = Literal["anthropic", "openai", "offline"]

OPENAI_URL = "https://api.openai.com/v1"
ALIAS_DEPTH = 8


@dataclass(frozen=True)
class Provider:
    """One provider: its kind (which SDK speaks to it), endpoint and key variable.

    ``base_url`` None: the SDK's own default (``ANTHROPIC_BASE_URL``,
    ``OPENAI_BASE_URL`` as the SDK reads them).  ``api_key_env`` None: no key
    is needed (a local server).
    """

    name: str
    kind: Kind
    base_url: str | None = None
    api_key_env: str | None = None
    base_url_env: str | None = None
    builtin: bool = True


BUILTIN: Mapping[str, Provider] = {
    "anthropic": Provider(
        "anthropic", "anthropic", api_key_env="ANTHROPIC_API_KEY", base_url_env="ANTHROPIC_BASE_URL"
    ),
    "openai": Provider(
        "openai", "openai", api_key_env="OPENAI_API_KEY", base_url_env="OPENAI_BASE_URL"
    ),
    "ollama": Provider("ollama", "openai", base_url="http://127.0.0.1:11434/v1"),
    "openrouter": Provider(
        "openrouter",
        "openai",
        base_url="https://openrouter.ai/api/v1",
        api_key_env="OPENROUTER_API_KEY",
    ),
    "offline": Provider("offline", "offline"),
}


@dataclass(frozen=True)
class Endpoint:
    """Where one call goes, with the key read at call time (never stored)."""

    base_url: str | None
    api_key: str | None
    auth_token: str | None = None  # ANTHROPIC_AUTH_TOKEN (a bearer token)

    def secrets(self) -> list[str]:
        """The values a message must never show."""
        return [s for s in (self.api_key, self.auth_token) if s and len(s) >= 4]


@dataclass(frozen=True)
class Warm:
    """``[assistant.warm]``: the warm model process (``warm_client``)."""

    enable: bool = True
    idle_seconds: float = 15 * 60
    # every provider's key variable, the user's own api_key_env included: the
    # process is sent the key with each call and never inherits one
    keys: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Catalog:
    """The providers and aliases a configuration defines (``Catalog.of``)."""

    providers: Mapping[str, Provider] = field(default_factory=lambda: dict(BUILTIN))
    aliases: Mapping[str, str] = field(default_factory=dict)
    warm: Warm = field(default_factory=Warm)

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Catalog:
        """From merged configuration data (``Config.data``), validated by the schema."""
        providers = dict(BUILTIN)
        entries = data.get("providers")
        for name, entry in entries.items() if isinstance(entries, Mapping) else ():
            if name == "mcp":  # MCP servers (config.schema.MCP), not a model provider
                continue
            providers[str(name)] = _entry(str(name), entry, providers.get(str(name)))
        assistant = data.get("assistant")
        assistant = assistant if isinstance(assistant, Mapping) else {}
        model = assistant.get("model")
        aliases = model.get("aliases") if isinstance(model, Mapping) else None
        warm = assistant.get("warm")
        warm = warm if isinstance(warm, Mapping) else {}
        return cls(
            providers,
            {str(k): str(v) for k, v in (aliases or {}).items()},
            Warm(
                enable=bool(warm.get("enable", True)),
                idle_seconds=float(warm.get("idle_minutes", 15)) * 60,
                keys=frozenset(p.api_key_env for p in providers.values() if p.api_key_env),
            ),
        )

    def resolve(self, ref: str) -> str:
        """The ``provider/name`` an alias stands for; a model id is returned as is."""
        seen: list[str] = []
        current = ref.strip()
        while "/" not in current:
            if current not in self.aliases:
                hint = (
                    f"known aliases: {', '.join(sorted(self.aliases))}"
                    if self.aliases
                    else 'define one: [assistant.model.aliases] fast = "ollama/qwen3"'
                )
                raise UserError(f"model {ref!r} is neither provider/name nor an alias", hint)
            if current in seen or len(seen) >= ALIAS_DEPTH:
                raise ConfigError(f"model alias {ref!r} loops: {' -> '.join([*seen, current])}")
            seen.append(current)
            current = self.aliases[current]
        return current

    def provider(self, model_id: str) -> tuple[Provider, str]:
        """The provider and the model name (after ``provider/``) of a resolved id."""
        provider, sep, name = self.resolve(model_id).partition("/")
        if not sep or not provider or not name:
            raise UserError(
                f"model id {model_id!r} is not of the form provider/name",
                hint='for example assistant.model.id = "anthropic/claude-sonnet-4-5"',
            )
        found = self.providers.get(provider)
        if found is None:
            known = ", ".join(f"{p}/" for p in sorted(self.providers))
            raise ConfigError(
                f"unknown model provider {provider!r} in {model_id!r} (known: {known})",
                f"define it in your configuration: [providers.{provider}] "
                'kind = "openai", base_url = "..."',
            )
        return found, name

    def key_variables(self) -> frozenset[str]:
        """Every environment variable a provider's key is read from."""
        return frozenset(p.api_key_env for p in self.providers.values() if p.api_key_env)


def _entry(name: str, entry: Any, builtin: Provider | None) -> Provider:
    if not isinstance(entry, Mapping):
        raise ConfigError(f"providers.{name} must be a table")
    if name == "offline":
        raise ConfigError("providers.offline: the offline model is built in and has no endpoint")
    base = builtin or Provider(name, "openai", builtin=False)
    kind = entry.get("kind", base.kind)
    if kind not in ("openai", "anthropic"):
        raise ConfigError(f'providers.{name}.kind must be "openai" or "anthropic"')
    if builtin is None and "kind" not in entry:
        raise ConfigError(
            f"providers.{name}: kind is missing",
            f'add kind = "openai" (an OpenAI-compatible server) under [providers.{name}]',
        )
    if builtin is None and "base_url" not in entry:
        raise ConfigError(f"providers.{name}: base_url is missing")
    changes: dict[str, Any] = {"kind": kind}
    if "base_url" in entry:
        changes.update(base_url=str(entry["base_url"]).rstrip("/"), base_url_env=None)
    if "api_key_env" in entry:
        changes["api_key_env"] = str(entry["api_key_env"])
    return replace(base, **changes)


def endpoint(provider: Provider, environ: Mapping[str, str]) -> Endpoint:
    """Where a call to ``provider`` goes now: the entry first, then the SDK's variables."""
    base_url = provider.base_url
    if base_url is None and provider.base_url_env:
        base_url = environ.get(provider.base_url_env) or None
    if base_url is None and provider.kind == "openai":
        base_url = OPENAI_URL
    key = environ.get(provider.api_key_env) or None if provider.api_key_env else None
    token = None
    if provider.kind == "anthropic" and provider.name == "anthropic" and provider.builtin:
        token = environ.get("ANTHROPIC_AUTH_TOKEN") or None
    return Endpoint(base_url, key, token)


def missing_key(provider: Provider, model_id: str) -> ConfigError:
    """The error for a call whose provider needs a key the environment lacks."""
    variable = provider.api_key_env or "its key"
    hint = f"export {variable}"
    if provider.kind == "anthropic":
        hint += ", or use the offline model (--model offline/jp)"
    return ConfigError(f"no API key for {model_id}: {variable} is not set", hint)
