"""`jp q`'s plan: what one query runs with, settled once before anything is written.

A query's configuration is the user's files and flags over the conversation's
recorded deltas (through the trust rule), and this command's own ``-m``,
``-c`` and ``--cfg``; from it come the model, what the turn records and the
compaction rules of ``-k``.  ``QueryPlan.of`` makes all of that in one pass
(the configuration is read once for the command and once for the
conversation), and the query, ``--retry``, the warm model process and the
compaction before the turn all use the one plan.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from porcelain.app.query.turn import model_for
from porcelain.app.recorded import foreign_model, own
from porcelain.config import Config, Recorded, diff_delta, filter_delta, merge, validate
from porcelain.config.merge import drop_key, lookup
from porcelain.config.trust import removals
from porcelain.domain.defaults import default_model
from porcelain.domain.media import refuse_media

if TYPE_CHECKING:
    from porcelain.app.session import Session
    from porcelain.domain.compaction.rules import Rule
    from porcelain.models.base import Model

CLI_SOURCE = "this command's -m, -c and --cfg"
DEFAULT_WORD = "default"  # `-m default`: not a model id (those are provider/name)


@dataclass(frozen=True)
class QueryPlan:
    """One query's configuration and what follows from it.

    ``defaulted``: no model is configured, so jp chose ``model_id``;
    ``foreign``: a delta this machine's user has not accepted chose the model
    (named once before it is used); ``delta``: what the turn records.
    """

    config: Config
    model_id: str
    model: Model
    recorded: list[Recorded]
    wanted: dict[str, Any]
    defaulted: bool = False
    foreign: Recorded | None = None
    specs: tuple[str, ...] = ()
    rules: list[Rule] = field(default_factory=list)

    @classmethod
    def of(
        cls,
        session: Session,
        wanted: dict[str, Any],
        recorded: Sequence[Recorded] = (),
        specs: tuple[str, ...] = (),
    ) -> QueryPlan:
        """The plan of a query on a conversation that recorded ``recorded``."""
        config = session.config(deltas=[*recorded, own(wanted, CLI_SOURCE)])
        configured = config.model_id()
        model_id = configured or default_model(session.has_api_key())
        return cls(
            config,
            model_id,
            model_for(model_id, config),
            list(recorded),
            wanted,
            defaulted=configured is None,
            foreign=foreign_model(config, list(recorded)),
            specs=specs,
            rules=_rules(config, specs),
        )

    def check(self, attachments: Sequence[dict[str, Any]] = ()) -> None:
        """Refuse, before anything is written, a query that cannot reach its model:
        missing credentials (read from the environment: no SDK is imported for
        it), an attached image or document the model cannot take."""
        self.model.check()
        # a model class that says nothing of media takes none
        media: frozenset[str] = getattr(self.model, "media_types", frozenset())
        refuse_media(self.model_id, media, list(attachments))

    @property
    def delta(self) -> dict[str, Any]:
        """What this turn records: the part of ``wanted`` the conversation lacks."""
        return delta_to_record([r.delta for r in self.recorded], self.wanted)


def _rules(config: Config, specs: tuple[str, ...]) -> list[Rule]:
    """The compaction rules of ``-k`` (none without it)."""
    if not specs:
        return []
    # lazy: only `q -k` loads the compaction modules
    from porcelain.domain.compaction.dsl import parse_spec

    # lazy: only `q -k` loads the compaction modules
    from porcelain.domain.compaction.rules import effective_rules, rules_from_config

    inline = [parse_spec(s) for s in specs if s]
    return effective_rules(rules_from_config(config.rules()), inline, bare_k="" in specs)


def command_delta(layers: dict[str, Any], model: str | None, base: Config) -> dict[str, Any]:
    """What this command's -m, -c and --cfg (``layers``, and ``model``) record in the
    conversation: only what a conversation may set (the trust rule); the rest applies
    to this command alone.  ``base``: the configuration without any conversation."""
    if model == DEFAULT_WORD:  # the removal marker: back to the user's files
        layers.setdefault("assistant", {}).setdefault("model", {})["id"] = None
        model = None
    if model:
        validate({"assistant": {"model": {"id": model}}}, "--model")
        layers.setdefault("assistant", {}).setdefault("model", {})["id"] = model
    chosen = layers.get("assistant", {}).get("model", {}).get("id")
    if isinstance(chosen, str):  # the id an alias stands for is what is recorded
        layers["assistant"]["model"]["id"] = base.resolve_model(chosen)
    wanted, _ = filter_delta(Recorded(layers, "--cfg"), base.tools())
    return wanted


def delta_to_record(recorded: list[dict[str, Any]], wanted: dict[str, Any]) -> dict[str, Any]:
    """The part of ``wanted`` that changes what ``recorded`` set, removals of what
    is not recorded left out."""
    if not wanted:
        return {}
    current: dict[str, Any] = {}
    for delta in recorded:
        current = merge(current, delta)
    delta = diff_delta(current, wanted)
    for path in removals(delta):  # a removal of what is not recorded records nothing
        if lookup(current, path) is None:
            delta = drop_key(delta, path)
    return delta
