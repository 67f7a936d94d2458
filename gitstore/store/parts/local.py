"""What a store keeps on this machine alone and never syncs.

Values and summaries derived from commits (kept in the cache, keyed by the
commit or ref value they were made from, so a stale one is never read), the
store's own layer of jp's configuration, and git's housekeeping.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitstore.cache.db import Cache

if TYPE_CHECKING:
    from gitstore.cache.listing import Listing
    from gitstore.store.ground import Ground


# a summary is a value named by its tip, made from nothing else (one version for all)
_SUMMARY = "summary "
_SUMMARY_OF = "tip"


class Local:
    """What this machine keeps for itself and never syncs."""

    def __init__(self, ground: Ground) -> None:
        self._g = ground

    @property
    def folder(self) -> Path:
        """The git directory that holds the store and what this machine keeps of it."""
        return self._g.gitdir

    @property
    def config_file(self) -> Path:
        """The store's own layer of jp's configuration (local, never synced)."""
        return self._g.gitdir / "jp" / "config.toml"

    @property
    def cache_file(self) -> Path:
        """The cache's SQLite database (derived from the store: it may be dropped)."""
        return self._g.cache.path

    def drop_cache(self) -> None:
        """Delete the cache's database; the next reads fill a new one."""
        g = self._g
        g.cache.close()
        for extra in ("", "-wal", "-shm", "-journal"):
            Path(f"{g.cache.path}{extra}").unlink(missing_ok=True)
        notice = g.cache.notice
        g.cache = Cache(g.gitdir)
        g.cache.notice = notice

    def tell(self, notice: Callable[[str], None]) -> None:
        """Who is told, one line, before a slow step of the cache (to say it to the user)."""
        self._g.cache.notice = notice

    def value(self, name: str, version: str) -> Any:
        """The value kept under ``name`` for ``version`` (e.g. a ref's commit), else None."""
        return self._g.cache.values([name], version).get(name)

    def keep_value(self, name: str, version: str, value: Any) -> None:
        """Keep one JSON value per ``name``: the one for the newest ``version`` seen."""
        self._g.cache.keep_values(version, {name: value})

    def values(self, names: Sequence[str], version: str) -> dict[str, Any]:
        """The values kept under ``names`` for ``version``, read together; a name
        without one is absent."""
        return self._g.cache.values(names, version)

    def keep_values(self, version: str, items: dict[str, Any]) -> None:
        """Keep several values (``keep_value``) in one transaction."""
        self._g.cache.keep_values(version, items)

    def drop_values(self, prefix: str, keep: Sequence[str]) -> None:
        """Forget the values kept under names that start with ``prefix``, but ``keep``'s
        (the values of tips no ref points at any more)."""
        self._g.cache.drop_values(prefix, keep)

    @property
    def listing(self) -> Listing:
        """The rows of `ls` kept in the cache, ordered, with the refs they were made from."""
        return self._g.cache.listing

    def summaries(self, tips: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The summaries kept for ``tips`` (``keep_summaries``); a tip without one is absent."""
        found = self._g.cache.values([_SUMMARY + t for t in tips], _SUMMARY_OF)
        cut = len(_SUMMARY)
        return {k[cut:]: v for k, v in found.items() if isinstance(v, dict)}  # rows of a shape

    def keep_summaries(self, items: dict[str, dict[str, Any]]) -> None:
        """Keep a summary (a JSON object) per tip: commits never change, so neither do they."""
        self._g.cache.keep_values(_SUMMARY_OF, {_SUMMARY + t: s for t, s in items.items()})

    def maintain(self, force: bool = False, wait: bool = False) -> str:
        """git's maintenance (gc: pack objects and refs), when due or ``force``d.

        Runs in the background unless ``wait``; returns what ran, "" if nothing.
        """
        # lazy: start-up; housekeeping follows writes, a read-only command never asks
        from gitstore.store import maintenance

        g = self._g
        if not force and not maintenance.due(g.place):
            return ""
        return g.maintenance.run(force=force, wait=wait)
