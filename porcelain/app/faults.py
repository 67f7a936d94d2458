"""``JP_FAULT``: a testing hook that kills ``jp`` at a named fault point.

Not for users.  ``JP_FAULT=<point>[@N][:kill]`` makes this process SIGKILL
itself the N-th time (default: the first) it reaches ``<point>`` (``:int``
sends it SIGINT instead, as Ctrl-C does, ``:term`` SIGTERM), one of
``gitstore.faults.POINTS``; the reliability tests use it to crash ``jp`` at
every stage of a write.  ``cli.main`` imports this module only when the
variable is set, so an ordinary run pays nothing.
"""

from __future__ import annotations

import os
import signal

from gitstore import faults
from porcelain.errors import UsageError

ACTIONS = ("kill", "int", "term")


def parse(spec: str) -> tuple[str, int, str]:
    """``move:locked@2:kill`` -> ("move:locked", 2, "kill")."""
    rest = spec.strip()
    action = "kill"
    for name in ACTIONS:
        if rest.endswith(":" + name):
            rest, action = rest[: -len(name) - 1], name
    point, _, count = rest.partition("@")
    if point not in faults.POINTS:
        raise UsageError(
            f"JP_FAULT: unknown fault point {point!r}",
            "it is a testing hook; known points: " + ", ".join(faults.POINTS),
        )
    if count and not (count.isascii() and count.isdigit() and int(count) >= 1):
        raise UsageError(f"JP_FAULT: @{count} is not a count of 1 or more")
    return point, int(count or 1), action


def install(spec: str) -> None:
    """Kill this process at the fault point ``spec`` names."""
    point, count, action = parse(spec)
    seen = 0

    def hook(name: str) -> None:
        nonlocal seen
        if name != point:
            return
        seen += 1
        if seen == count:
            sent = {"int": signal.SIGINT, "term": signal.SIGTERM}.get(action, signal.SIGKILL)
            os.kill(os.getpid(), sent)

    faults.install(hook)
