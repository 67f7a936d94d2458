"""The model jp uses when none is configured, written once."""

from __future__ import annotations

from typing import Final

DEFAULT_MODEL: Final = "anthropic/claude-sonnet-4-5"  # with a key
OFFLINE_MODEL: Final = "offline/jp"  # without one: jp's built-in offline model
EXAMPLE_MODEL_ID: Final = f'assistant.model.id = "{DEFAULT_MODEL}"'


def default_model(has_api_key: bool) -> str:
    """The model of a query that names none: the default with a key, offline without."""
    return DEFAULT_MODEL if has_api_key else OFFLINE_MODEL
