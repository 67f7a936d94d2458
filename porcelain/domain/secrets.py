"""The environment variables that hold providers' keys (never passed to a tool).

Built-in providers read their keys from these (``porcelain/models/catalog.py``;
a test keeps the two lists in step); a user's ``[providers.NAME]`` entry adds its
``api_key_env``.
"""

from __future__ import annotations

from typing import Final

PROVIDER_KEYS: Final = frozenset(
    {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "OPENROUTER_API_KEY"}
)
