"""What a use case may ask of the command that runs it (the commands' `App` is one).

Use cases that open the store or read the configuration themselves take a
`Session`, so they depend on this small protocol and not on the commands'
context, which also holds the terminal's output.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from gitstore import Store
    from porcelain.config import Config, Recorded


class Session(Protocol):
    @property
    def argv(self) -> Sequence[str]:
        """The command line, recorded in the operation log."""
        ...

    def store(self) -> Store: ...

    def config(
        self, deltas: Sequence[dict[str, Any] | Recorded] = (), warn: bool = True
    ) -> Config: ...

    def has_api_key(self) -> bool: ...
