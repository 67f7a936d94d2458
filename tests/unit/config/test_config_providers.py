"""The trust rule's provider check: a recorded model names only a provider the
user's own configuration enables, unless the delta is the user's own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gitstore import Store, activity, init_store
from porcelain.config import Recorded, filter_delta, load_config
from porcelain.config.trust import enabled_providers, not_enabled

SOURCE = "conversation jp-c1 (config_delta #1)"


def model(model_id: str) -> dict[str, Any]:
    return {"assistant": {"model": {"id": model_id}}}


def test_enabled_providers_are_those_the_users_files_name() -> None:
    user = {
        "assistant": {"model": {"id": "anthropic/a", "aliases": {"fast": "groq/x"}}},
        "providers": {"ollama": {}},
        "conversation": {
            "compaction": {
                "review": {"model": {"id": "openai/r"}},
                "rules": [{"summary": {"model": {"id": "mistral/s"}}}],
            }
        },
    }
    enabled = enabled_providers(user, None)
    assert enabled == {"offline", "anthropic", "groq", "ollama", "openai", "mistral"}
    assert enabled_providers({}, "offline/jp") == {"offline"}
    assert enabled_providers({}, "anthropic/claude") == {"offline", "anthropic"}


def test_a_delta_from_elsewhere_chooses_only_an_enabled_provider() -> None:
    enabled = frozenset({"offline", "anthropic"})
    kept, ignored = filter_delta(Recorded(model("ollama/llama3"), SOURCE), (), enabled)
    assert kept == {} and [i.reason for i in ignored] == [not_enabled("ollama")]
    kept, ignored = filter_delta(Recorded(model("anthropic/b"), SOURCE), (), enabled)
    assert kept == model("anthropic/b") and ignored == []
    review = {"conversation": {"compaction": {"review": {"model": {"id": "openrouter/x/y"}}}}}
    assert filter_delta(Recorded(review, SOURCE), (), enabled)[0] == {}
    rules = {"conversation": {"compaction": {"rules": [{"summary": {"model": {"id": "o/x"}}}]}}}
    assert filter_delta(Recorded(rules, SOURCE), (), enabled)[0] == {}


def test_the_users_own_delta_keeps_its_provider() -> None:
    enabled = frozenset({"offline"})
    kept, ignored = filter_delta(Recorded(model("ollama/l"), SOURCE, own=True), (), enabled)
    assert kept == model("ollama/l") and ignored == []


def test_load_config_checks_plain_deltas_against_the_users_layers(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    (tmp_path / "cfg" / "jp").mkdir(parents=True)
    (tmp_path / "cfg" / "jp" / "config.toml").write_text('[assistant.model]\nid = "openai/m"\n')
    load = lambda delta, **kw: load_config(  # noqa: E731
        environ={**env, **kw}, store_config=None, files=[], overrides=[], deltas=[delta]
    )
    assert load(model("openai/other")).model_id() == "openai/other"
    assert load(model("ollama/l")).model_id() == "openai/m"
    assert load(model("anthropic/c")).model_id() == "openai/m"
    assert load(Recorded(model("ollama/l"), SOURCE, own=True)).model_id() == "ollama/l"


def test_accepted_commits_are_kept_locally_and_bad_lines_skipped(tmp_path: Path) -> None:
    init_store(tmp_path / "store.git")
    store = Store(tmp_path / "store.git")
    assert activity.accepted_commits(store) == frozenset()
    first, second = "a" * 40, "b" * 40
    activity.accept_commits(store, [first, "not a commit", "../x"])
    (store.gitdir / "jp" / "accepted").open("a").write("garbage\n\x00\n")
    activity.accept_commits(store, [second])
    assert activity.accepted_commits(store) == {first, second}
