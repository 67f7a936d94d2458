"""`jp q`'s plan: one configuration read per conversation, the model made once,
what the turn records, and the rules of ``-k``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from gitstore import Store
from porcelain.app.query.plan import QueryPlan, command_delta, delta_to_record
from porcelain.config import Config, Recorded, load_config
from porcelain.errors import ConfigError, UserError
from porcelain.models.offline import OfflineModel


class Counting:
    """A use case's session: the configuration from real layers, each read counted."""

    def __init__(self, tmp_path: Path, overrides: Sequence[str] = (), key: bool = False) -> None:
        self.home = tmp_path / "home"
        self.home.mkdir(exist_ok=True)
        self.overrides = list(overrides)
        self.key = key
        self.reads = 0

    def config(self, deltas: Sequence[dict[str, Any] | Recorded] = (), warn: bool = True) -> Config:
        self.reads += 1
        return load_config(
            environ={"HOME": str(self.home), "XDG_CONFIG_HOME": str(self.home / "config")},
            store_config=None,
            files=[],
            overrides=self.overrides,
            deltas=list(deltas),
        )

    def has_api_key(self) -> bool:
        return self.key

    argv: Sequence[str] = ("jp", "q")

    def store(self) -> Store:
        raise AssertionError("a plan opens no store")


def test_the_plan_reads_the_configuration_once_and_makes_its_model(tmp_path: Path) -> None:
    session = Counting(tmp_path)
    plan = QueryPlan.of(session, {}, [])
    assert session.reads == 1
    assert plan.model_id == "offline/jp" and plan.defaulted
    assert isinstance(plan.model, OfflineModel)
    assert plan.delta == {} and plan.rules == [] and plan.foreign is None
    plan.check([])  # the offline model needs no key


def test_a_configured_model_is_not_defaulted(tmp_path: Path) -> None:
    session = Counting(tmp_path, ["assistant.model.id=offline/other"])
    plan = QueryPlan.of(session, {}, [])
    assert plan.model_id == "offline/other" and not plan.defaulted


def test_the_command_records_only_what_the_conversation_lacks(tmp_path: Path) -> None:
    session = Counting(tmp_path)
    base = session.config()
    wanted = command_delta({}, "offline/b", base)
    assert wanted == {"assistant": {"model": {"id": "offline/b"}}}
    recorded = [Recorded({"assistant": {"model": {"id": "offline/a"}}}, "elsewhere", own=True)]
    plan = QueryPlan.of(session, wanted, recorded)
    assert plan.model_id == "offline/b" and plan.delta == wanted
    same = [Recorded(wanted, "elsewhere", own=True)]
    assert QueryPlan.of(session, wanted, same).delta == {}


def test_default_removes_only_what_is_recorded(tmp_path: Path) -> None:
    base = Counting(tmp_path).config()
    wanted = command_delta({}, "default", base)
    assert wanted == {"assistant": {"model": {"id": None}}}
    assert delta_to_record([], wanted) == {}
    recorded = [{"assistant": {"model": {"id": "offline/a"}}}]
    assert delta_to_record(recorded, wanted) == wanted


def test_a_bad_model_is_refused_before_anything(tmp_path: Path) -> None:
    base = Counting(tmp_path).config()
    with pytest.raises((UserError, ConfigError)):
        command_delta({}, "not a model", base)
    with pytest.raises(ConfigError, match="unknown model provider"):
        QueryPlan.of(Counting(tmp_path), {"assistant": {"model": {"id": "nope/x"}}})


def test_the_rules_of_k_are_made_with_the_plan(tmp_path: Path) -> None:
    plan = QueryPlan.of(Counting(tmp_path), {}, [], ("",))
    assert plan.rules  # bare -k: the configured rules (the built-in one)
