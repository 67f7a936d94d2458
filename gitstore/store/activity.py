"""When each conversation was last activated on this machine: local, never synced.

``<gitdir>/jp/state.json`` holds it; ``jp conversation ls`` and the choice of
a default conversation read it.  The time is the store's clock's.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from gitstore.clock import seconds

if TYPE_CHECKING:
    from gitstore.store.core import Store


def _state_path(store: Store) -> Path:
    return store.gitdir / "jp" / "state.json"


def activations(store: Store) -> dict[str, float]:
    """When each conversation was last activated on this machine (epoch seconds)."""
    try:
        data = json.loads(_state_path(store).read_text())
        return {str(k): float(v) for k, v in data.get("activated", {}).items()}
    except (OSError, ValueError, AttributeError):
        return {}


def record_activation(store: Store, cid: str) -> None:
    path = _state_path(store)
    data = activations(store)
    data[cid] = seconds(store.clock)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"state.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"activated": data}))
    os.replace(tmp, path)
