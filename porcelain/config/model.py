"""``Config``: the merged configuration, with typed accessors."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final, TypeVar

from porcelain.config.merge import APPEND_PATHS, RULES_PATH, lookup, merge, split_key
from porcelain.config.schema import dotted, is_model_id, leaves, validate
from porcelain.config.trust import Ignored
from porcelain.errors import ConfigError

T = TypeVar("T")

# No ``assistant.model.id``: the caller picks one (offline without an API key).
DEFAULTS: Final[Mapping[str, Any]] = {
    "assistant": {"max_retries": 2, "model": {"max_tokens": 8192}},
}

# Used when no layer defines ``conversation.compaction.rules`` (reference 4.2).
DEFAULT_RULE: Final[Mapping[str, Any]] = {
    "keep_first": 1,
    "keep_last": 1,
    "reasoning": "strip",
    "tool_calls": "strip",
}

MODEL_ID_PATH: Final = ("assistant", "model", "id")
REVIEW_MODEL_ID_PATH: Final = ("conversation", "compaction", "review", "model", "id")
ALIASES_PATH: Final = ("assistant", "model", "aliases")
ALIAS_DEPTH: Final = 8

DEFAULTS_SOURCE: Final = "default"
DEFAULT_RULE_SOURCE: Final = "default (the built-in rule: no layer defines one)"
OP_LOG_RETENTION_DAYS: Final = 90


_ALIAS_HINT = (
    'for example: id = "anthropic/claude-sonnet-4-5", or '
    '[assistant.model.aliases] fast = "ollama/qwen3"'
)


def _unresolved(where: str, ref: str, seen: list[str], current: str, aliases: dict[str, str]) -> str:
    """Why ``ref`` names no model: itself, or the alias on its way that names nothing."""
    known = ", ".join(sorted(aliases)) or "none defined"
    if not seen:
        return (
            f"{where}: {ref!r} is not a model id of the form provider/name, "
            f"nor an alias of assistant.model.aliases (known: {known})"
        )
    return (
        f"{where}: the model alias {seen[-1]!r} (assistant.model.aliases.{seen[-1]}) stands for "
        f"{current!r}, which is neither a model id provider/name nor an alias (known: {known})"
    )


class Config:
    """The merged configuration.  Never mutated: ``with_layer`` returns a new one.

    Build one with ``load_config`` or ``Config.defaults().with_layer(...)``;
    the constructor trusts ``data`` (it does not validate).  Each value
    remembers the layer it came from (``origin``), and ``ignored`` holds what
    the trust rule left out of the conversation's deltas.
    """

    __slots__ = ("_data", "_ignored", "_origins", "_sources")

    def __init__(
        self,
        data: Mapping[str, Any] | None = None,
        sources: tuple[str, ...] = (),
        origins: Mapping[tuple[str, ...], str] | None = None,
        ignored: tuple[Ignored, ...] = (),
    ):
        self._data: dict[str, Any] = copy.deepcopy(dict(data or {}))
        self._sources = sources
        self._origins = dict(origins or {})
        self._ignored = ignored

    @classmethod
    def defaults(cls) -> Config:
        return cls().with_layer(DEFAULTS, DEFAULTS_SOURCE)

    @property
    def data(self) -> dict[str, Any]:
        """A copy of the merged nested dict."""
        return copy.deepcopy(self._data)

    @property
    def sources(self) -> tuple[str, ...]:
        """Names of the layers merged so far, lowest first."""
        return self._sources

    @property
    def ignored(self) -> tuple[Ignored, ...]:
        """What the conversation's deltas tried to set and the trust rule left out."""
        return self._ignored

    def with_layer(self, layer: Mapping[str, Any], name: str) -> Config:
        """A new Config with ``layer`` merged on top; ConfigError names ``name``."""
        validate(layer, name)
        origins = dict(self._origins)
        for path, value in leaves(layer):
            below = origins.get(path)
            appended = path in APPEND_PATHS and isinstance(lookup(self._data, path), list)
            if appended and below is not None and value:
                origins[path] = f"{below} + {name}"
            elif not (appended and not value):
                origins[path] = name
        data = merge(self._data, layer)
        return Config(data, (*self._sources, name), origins, self._ignored)

    def restored(self, path: tuple[str, ...], base: Config) -> Config:
        """A new Config whose ``path`` is what ``base`` (the layers below) has there."""
        data, origins = copy.deepcopy(self._data), dict(self._origins)
        value, node = lookup(base._data, path), data
        for part in path[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):  # the layers hold a value where a table goes
                return self
        origins.pop(path, None)
        if value is None:
            node.pop(path[-1], None)
        else:
            node[path[-1]] = copy.deepcopy(value)
            if path in base._origins:
                origins[path] = base._origins[path]
        return Config(data, self._sources, origins, self._ignored)

    def with_ignored(self, ignored: tuple[Ignored, ...]) -> Config:
        return Config(self._data, self._sources, self._origins, (*self._ignored, *ignored))

    def origin(self, path: tuple[str, ...]) -> str:
        """The layer a value came from (lowest layer's name when unknown)."""
        return self._origins.get(path) or (self._sources[0] if self._sources else DEFAULTS_SOURCE)

    def entries(self) -> list[tuple[tuple[str, ...], Any, str]]:
        """Every effective value: (key path, value, the layer it came from), sorted.

        The built-in compaction rule is listed when no layer defines one.
        """
        out = [(path, copy.deepcopy(v), self.origin(path)) for path, v in leaves(self._data)]
        if lookup(self._data, RULES_PATH) is None:
            out.append((RULES_PATH, [dict(DEFAULT_RULE)], DEFAULT_RULE_SOURCE))
        return sorted(out, key=lambda entry: entry[0])

    def get(self, dotted_key: str, default: Any = None) -> Any:
        value = lookup(self._data, split_key(dotted_key, "config key"))
        return default if value is None else copy.deepcopy(value)

    def _typed(self, dotted_key: str, kind: type[T]) -> T | None:
        value = lookup(self._data, split_key(dotted_key))
        if isinstance(value, bool) and kind is not bool:
            return None
        return value if isinstance(value, kind) else None

    # -- models ------------------------------------------------------------

    def aliases(self) -> dict[str, str]:
        """``[assistant.model.aliases]``: name -> ``provider/name``."""
        table = lookup(self._data, ALIASES_PATH)
        return {str(k): str(v) for k, v in table.items()} if isinstance(table, dict) else {}

    def resolve_model(self, ref: str, where: str = "--model") -> str:
        """``ref`` as ``provider/name``: an alias is replaced by what it stands for.

        ``where`` names the key (and its file) or the flag in the error."""
        aliases = self.aliases()
        current, seen = ref.strip(), list[str]()
        while not is_model_id(current):
            if current in seen or len(seen) >= ALIAS_DEPTH:
                chain = " -> ".join(repr(a) for a in [*seen, current])
                raise ConfigError(
                    f"{where}: the model alias {seen[0]!r} loops: {chain}",
                    "make one of them a model id provider/name in [assistant.model.aliases]",
                )
            if current not in aliases:
                raise ConfigError(_unresolved(where, ref, seen, current, aliases), _ALIAS_HINT)
            seen.append(current)
            current = aliases[current].strip()
        return current

    def _model_at(self, path: tuple[str, ...]) -> str | None:
        value = lookup(self._data, path)
        if not isinstance(value, str):
            return None
        return self.resolve_model(value, f"{self.origin(path)}: {dotted(path)}")

    # -- assistant ---------------------------------------------------------

    def model_id(self) -> str | None:
        """The assistant's model, aliases resolved."""
        return self._model_at(MODEL_ID_PATH)

    def context_window(self) -> int | None:
        return self._typed("assistant.model.context_window", int)

    def max_tokens(self) -> int:
        return self._typed("assistant.model.max_tokens", int) or 8192

    def thinking_budget(self) -> int | None:
        return self._typed("assistant.model.thinking_budget", int)

    def instructions(self) -> str | None:
        return self._typed("assistant.instructions", str)

    def max_retries(self) -> int:
        value = self._typed("assistant.max_retries", int)
        return 2 if value is None else value

    def user_name(self) -> str | None:
        return self._typed("user.name", str)

    def op_log_retention_days(self) -> int:
        """Days the operation log keeps an operation (`store.op_log_retention_days`)."""
        return self._typed("store.op_log_retention_days", int) or OP_LOG_RETENTION_DAYS

    # -- compaction --------------------------------------------------------

    def review_model_id(self) -> str | None:
        """The review's model, else the assistant's (aliases resolved)."""
        return self._model_at(REVIEW_MODEL_ID_PATH) or self.model_id()

    def warn_at(self) -> float | None:
        """``conversation.compaction.warn_at``: the share of the window past which
        `jp q` says the conversation is nearly full (0 turns it off)."""
        value = lookup(self._data, split_key("conversation.compaction.warn_at"))
        return (
            float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
        )

    def review_context_window(self) -> int | None:
        """The review model's window; the assistant's only when it is the same model."""
        window = self._typed("conversation.compaction.review.model.context_window", int)
        if window is not None:
            return window
        own_id = self._model_at(REVIEW_MODEL_ID_PATH)
        if own_id is None or own_id == self.model_id():
            return self.context_window()
        return None

    def review_instructions(self) -> str | None:
        return self._typed("conversation.compaction.review.instructions", str)

    def rules(self) -> list[dict[str, Any]]:
        """Configured rules (appended across layers), else the one built-in rule.

        An explicit empty array (``rules = []``) means no rules at all.
        """
        rules = lookup(self._data, RULES_PATH)
        if not isinstance(rules, list):
            return [dict(DEFAULT_RULE)]
        out = [copy.deepcopy(r) for r in rules if isinstance(r, dict)]
        for i, rule in enumerate(out):  # a summary's model may be an alias
            model = (rule.get("summary") or {}).get("model")
            if isinstance(model, dict) and isinstance(model.get("id"), str):
                where = f"{self.origin(RULES_PATH)}: {dotted(RULES_PATH)}[{i}].summary.model.id"
                model["id"] = self.resolve_model(model["id"], where)
        return out

    # -- tools -------------------------------------------------------------

    def tools(self) -> dict[str, dict[str, Any]]:
        """Every configured tool but ``*``, with ``*``'s defaults filled in.

        ``enable`` and ``confirm`` are always present (default true); disabled
        tools are included, so the caller decides what to do with them.
        """
        table = lookup(self._data, ("conversation", "tools"))
        if not isinstance(table, dict):
            return {}
        star = table.get("*")
        defaults: dict[str, Any] = {"enable": True, "confirm": True}
        if isinstance(star, dict):
            defaults.update(star)
        return {
            name: {**defaults, **copy.deepcopy(spec)}
            for name, spec in table.items()
            if name != "*" and isinstance(spec, dict)
        }

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Config) and self._data == other._data

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Config({self._data!r}, sources={self._sources!r})"
