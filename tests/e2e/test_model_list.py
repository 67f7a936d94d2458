"""`jp model ls`: the providers, aliases and model ids `-m` can name, with the key each
needs (set or not, never its value), and `-m` completion from the same list."""

from __future__ import annotations

import json

from tests.e2e.harness import User

CONFIG = """
[assistant.model.aliases]
fast = "ollama/qwen3"
local = "llamacpp/default"

[providers.llamacpp]
kind = "openai"
base_url = "http://127.0.0.1:8080/v1"
api_key_env = "LLAMA_TOKEN"
"""
SECRET = "sk-test-NEVER-SHOWN-0123456789"


def test_model_ls_lists_providers_aliases_and_models_with_their_keys(user: User) -> None:
    user.config(CONFIG)
    env = {"OPENAI_API_KEY": SECRET}
    out = user.ok("model", "ls", env=env)
    assert SECRET not in out, "a key's value is never printed"
    assert "OPENAI_API_KEY set" in out and "ANTHROPIC_API_KEY NOT SET" in out
    assert "llamacpp/" in out and "configured" in out and "LLAMA_TOKEN NOT SET" in out
    assert "fast -> ollama/qwen3" in out
    assert "Default model: offline/jp" in out
    proc = user.run("--format", "json", "model", "ls", env=env)
    assert proc.returncode == 0 and SECRET not in proc.stdout
    data = json.loads(proc.stdout)
    providers = {p["name"]: p for p in data["providers"]}
    assert providers["openai"]["key_set"] is True and providers["anthropic"]["key_set"] is False
    assert providers["llamacpp"] == {
        "name": "llamacpp",
        "kind": "openai",
        "builtin": False,
        "base_url": "http://127.0.0.1:8080/v1",
        "key_env": "LLAMA_TOKEN",
        "key_set": False,
    }
    models = {m["id"]: m for m in data["models"]}
    assert models["openai/gpt-4.1"]["context_window"] == 1_047_576
    assert models["ollama/qwen3"]["source"] == "alias fast"
    assert models["offline/jp"]["key_env"] is None
    assert [a["name"] for a in data["aliases"]] == ["fast", "local"]


def test_m_completes_aliases_and_model_ids(user: User) -> None:
    user.config(CONFIG)
    words = user.ok("completion", "bash", "--complete", "--", "q", "-m", "").splitlines()
    assert (
        words[:2] == ["fast", "local"] and "openai/gpt-4o" in words and "llamacpp/default" in words
    )
    described = user.ok("completion", "zsh", "--complete", "--", "q", "-m", "f")
    assert described.strip() == "fast:alias of ollama/qwen3"
