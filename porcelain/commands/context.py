"""What every command gets: the chosen store, configuration and output."""

from __future__ import annotations

import gc
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from porcelain.domain.places import check_owner as check_owner
from porcelain.domain.places import choose_store
from porcelain.errors import FaultError, NoAnswer, UserError
from porcelain.render.output import Output

if TYPE_CHECKING:
    from gitstore import Identity, Limits, Store
    from porcelain.config import Config, Recorded


class App:
    """One command's context (a plain class: ``dataclasses`` loads ``inspect``, 40 M
    instructions of every command, a JP folders' import started without click)."""

    def __init__(
        self,
        output: Output,
        environ: Mapping[str, str] | None = None,
        store_option: str | None = None,
        config_files: Sequence[str] = (),
        overrides: Sequence[str] = (),
        yes: bool = False,
        cwd: Path | None = None,
        argv: Sequence[str] = (),  # the command line, recorded in the operation log
    ) -> None:
        self.output = output
        self.environ = dict(os.environ) if environ is None else environ
        self.store_option = store_option
        self.config_files = config_files
        self.overrides = overrides
        self.yes = yes
        self.cwd = Path.cwd() if cwd is None else cwd
        self.argv = argv
        self._store: Store | None = None
        self._warned = False  # the trust rule's warning was printed
        # commits made the same on every machine (a session import): jp's own name, not the user's
        self.machine_neutral = False

    # -- the store -------------------------------------------------------------

    def store_path(self) -> Path:
        return self.chosen_store()[0]

    def chosen_store(self) -> tuple[Path, str | None]:
        """The store's path, and who named it (``--store``, ``JP_STORE``; None: jp's default)."""
        return choose_store(self.store_option, self.environ, self.cwd)

    def store(self) -> Store:
        if self._store is None:
            # lazy: `jp --help` loads no store module, nor the clock that loads gitstore (start-up)
            from gitstore import Store, init_store
            from porcelain import clock

            path, named_by = self.chosen_store()
            if path.exists() and not path.is_dir():
                raise FaultError(
                    f"the store {path} is a file, not a git directory",
                    "point --store or JP_STORE at a store, or create one: `jp init PATH`",
                )
            if not path.exists() and not path.is_symlink():
                if named_by is not None:  # a typo must not look like an empty store
                    raise UserError(
                        f"no store at {path} (named by {named_by})",
                        f"check the path, or create a store there: `jp init {path}`",
                    )
                init_store(path, clock.for_store())
                self.output.note(f"note: created the store {path}")
            self._store = Store(path, self.identity(), self.limits, clock=clock.for_store())
            self._store.local.tell(self.output.note)  # a slow step of the cache, on stderr
            # lazy: `jp --help` loads no configuration module (start-up)
            from porcelain.app.oprecord import begin

            begin(self, self._store)
        return self._store

    def opened_store(self) -> Store | None:
        """The store, if this command opened it."""
        return self._store

    def limits(self) -> Limits:
        """Size limits of what the store accepts: ``store.max_event_bytes`` of the
        user's own configuration (never of a conversation's)."""
        # lazy: `jp --help` loads no store module (start-up)
        from gitstore import MAX_EVENT_BYTES_KEY, Limits

        value = self.config().get(MAX_EVENT_BYTES_KEY)
        return Limits(max_event_bytes=value) if isinstance(value, int) and value > 0 else Limits()

    def identity(self) -> Identity:
        # lazy: `jp --help` loads no store module (start-up)
        from gitstore import Identity

        if self.machine_neutral:
            return Identity()
        name = self.environ.get("GIT_COMMITTER_NAME") or self.environ.get("USER") or "jp"
        email = self.environ.get("GIT_COMMITTER_EMAIL") or "jp@localhost"
        return Identity(name, email)

    # -- configuration ----------------------------------------------------------------

    def config(self, deltas: Sequence[dict[str, Any] | Recorded] = (), warn: bool = True) -> Config:
        """The configuration, with a conversation's recorded ``deltas`` when given.

        What the trust rule left out of them is said once per command on stderr.
        """
        # lazy: `jp --help` loads no tomlkit (start-up)
        from porcelain.config import load_config

        # lazy: `jp --help` loads no configuration module (start-up)
        from porcelain.config.explain import warning

        store_config = self.store().local.config_file if self._store_exists() else None
        config = load_config(
            environ=self.environ,
            store_config=store_config,
            files=[Path(f) for f in self.config_files],
            overrides=list(self.overrides),
            deltas=list(deltas),
        )
        if config.ignored and warn and not self._warned:
            self._warned = True
            self.output.note(warning(config.ignored))
        return config

    def _store_exists(self) -> bool:
        return self._store is not None or self.store_path().exists()

    def cli_layers(self) -> dict[str, Any]:
        # lazy: `jp --help` loads no tomlkit (start-up)
        from porcelain.config import cli_layers

        return cli_layers([Path(f) for f in self.config_files], list(self.overrides))

    def has_api_key(self) -> bool:
        return bool(self.environ.get("ANTHROPIC_API_KEY"))

    def confirm(self, question: str, yes: bool = False) -> bool:
        """The one rule of every confirmation (docs/everyday.md): ``yes`` (the command's
        -y) or the global --yes goes ahead without asking; otherwise only a typed y/yes
        does.  Enter on a terminal is a no; a question nobody can answer (stdin closed,
        or not a terminal and no y/n on it) refuses the command, naming --yes."""
        if yes or self.yes:
            return True
        answer = self.output.confirm(question)
        if answer is None:
            raise NoAnswer(
                "nothing changed: the confirmation got no answer "
                "(stdin is closed or not a terminal)",
                "pass --yes (-y) to go ahead without asking",
            )
        return answer


def ended(output: Output, code: int, late: list[str]) -> int:
    """``code``, once what closing the operation had to say (``late``) is said."""
    for line in late:
        output.note(line)
    # Everything still alive is freed by the exit itself: frozen objects are left out of
    # the interpreter's final collections, which cost 15-20 ms once pygit2 and click are
    # loaded (more than the whole of most commands' own work).
    gc.freeze()
    return code
