"""`jp conversation` (alias `jp c`): one module per subcommand, loaded on use."""

from __future__ import annotations

import click

from porcelain.commands.lazy import LazyGroup

_BASE = "porcelain.commands.conversation."
SUBCOMMANDS = {
    name: f"{_BASE}{module}:{name}"
    for name, module in {
        "new": "new",
        "ls": "ls",
        "show": "show",
        "print": "printing",
        "use": "use",
        "fork": "fork",
        "edit": "edit",
        "grep": "grep",
        "archive": "archive",
        "unarchive": "archive",
        "rm": "rm",
        "compact": "compact",
        "import": "transfer",
        "export": "transfer",
        "scan": "redact",
        "redact": "redact",
        "share": "share",
        "unshare": "unshare",
    }.items()
}
SUBCOMMANDS["print"] = f"{_BASE}printing:print_"
SUBCOMMANDS["import"] = f"{_BASE}transfer:import_"
ALIASES = {
    "list": "ls",
    "s": "show",
    "p": "print",
    "u": "use",
    "f": "fork",
    "e": "edit",
    "g": "grep",
    "rg": "grep",
    "a": "archive",
    "ua": "unarchive",
    "remove": "rm",
    "rem": "rm",
    "delete": "rm",
    "del": "rm",
}
SUMMARIES = {
    "new": "Start an empty conversation and make it active.",
    "ls": "List conversations.",
    "show": "Details of a conversation: counts, compactions, review state.",
    "print": "Print a conversation's history (raw, or as the model sees it).",
    "use": "Make a conversation the active one.",
    "fork": "Branch a conversation into a new one (shares history).",
    "edit": "Change a conversation's title, pin or labels.",
    "grep": "Search conversations' events.",
    "archive": "Move conversations to the archive.",
    "unarchive": "Bring archived conversations back.",
    "rm": "Delete conversations.",
    "compact": "Compact a conversation's context, or review a compaction with the model.",
    "import": "Import conversations from JP's folder layout.",
    "export": "Export a conversation to JP's folder layout.",
    "scan": "List the secrets found in conversations (masked).",
    "redact": "Replace the secrets in conversations with placeholders.",
    "share": "Share a conversation as an HTML page or on a git remote, secrets redacted.",
    "unshare": "Delete a conversation's shared copy on a git remote.",
}


def _make() -> LazyGroup:
    @click.group(cls=LazyGroup, lazy=SUBCOMMANDS, aliases=ALIASES, summaries=SUMMARIES)
    def conversation() -> None:
        """List, show, print, fork, compact and review conversations.

        Targets are conversation ids (jp-c17727391057, or any unique prefix,
        jp-c optional: 177273) or keywords: active (.),
        recent (r), newest (n), pinned (p), archived (a).  Without a target a
        command acts on the active conversation.
        """

    return conversation


conversation = _make()
