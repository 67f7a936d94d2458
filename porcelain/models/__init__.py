"""Language models behind one small interface (see ``base``).

Importing this package never imports a provider SDK.
"""

from porcelain.domain.tokens import estimate_tokens
from porcelain.models.base import (
    DeltaKind,
    Model,
    ModelRequest,
    ModelResponse,
    OnDelta,
    StreamInterrupted,
    ToolSpec,
    context_window,
    get_model,
    ignore_delta,
)

__all__ = [
    "DeltaKind",
    "Model",
    "ModelRequest",
    "ModelResponse",
    "OnDelta",
    "StreamInterrupted",
    "ToolSpec",
    "context_window",
    "estimate_tokens",
    "get_model",
    "ignore_delta",
]
