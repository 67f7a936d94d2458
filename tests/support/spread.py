"""The suite's scheduling under pytest-xdist: `--dist loadscope`, with long modules spread.

``loadscope`` sends each test module to one worker whole, so a module's expensive
module-scoped fixtures are built once.  A module far longer than the others then
holds one worker for all of its time while the rest idle at the end:
tests/reliability/test_crash.py (98 killed `jp` runs, about an eighth of the e2e
and reliability tests' CPU time, measured with per-test ``getrusage``) is cut into
``SPREAD[module]`` work units instead, by a stable hash of each test's id, so its
module fixtures are built at most that many times.
"""

from __future__ import annotations

import zlib
from typing import Any

from xdist.scheduler import LoadScopeScheduling

SPREAD = {"tests/reliability/test_crash.py": 4}


def unit(nodeid: str) -> str | None:
    """The work unit of a test of a spread module (None: the module is not spread)."""
    module = nodeid.split("::", 1)[0]
    parts = SPREAD.get(module)
    if parts is None:
        return None
    return f"{module}@{zlib.crc32(nodeid.encode()) % parts}"


class SpreadScheduling(LoadScopeScheduling):
    def _split_scope(self, nodeid: str) -> str:
        return unit(nodeid) or super()._split_scope(nodeid)


def scheduler(config: Any, log: Any) -> SpreadScheduling | None:
    """The scheduler for ``--dist loadscope``; other modes keep xdist's own."""
    return SpreadScheduling(config, log) if config.getvalue("dist") == "loadscope" else None
