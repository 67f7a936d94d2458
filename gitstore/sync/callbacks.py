"""What libgit2 asks of jp while it fetches or pushes (``Pygit2Transport``): ssh
keys from the agent, never a prompt, and which refs the remote took."""

from __future__ import annotations

import pygit2


class Callbacks(pygit2.RemoteCallbacks):
    def __init__(self) -> None:
        super().__init__()
        self.rejected: dict[str, str] = {}
        self.accepted: set[str] = set()

    def credentials(
        self,
        url: str,
        username_from_url: str | None,
        allowed_types: pygit2.enums.CredentialType,
    ) -> pygit2.KeypairFromAgent:
        if allowed_types & pygit2.enums.CredentialType.SSH_KEY:
            return pygit2.KeypairFromAgent(username_from_url or "git")
        raise pygit2.GitError(f"{url}: credentials are needed; install git to use your setup")

    def push_update_reference(self, refname: str, message: str | None) -> None:
        if message is None:
            self.accepted.add(refname)
        else:
            self.rejected[refname] = message
