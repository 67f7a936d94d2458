"""Language models behind one small interface (``base``), chosen by ``factory``.

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
    ignore_delta,
)
from porcelain.models.factory import get_model

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
