"""Templates: a prompt kept by name in the user's configuration (``[templates.NAME]``),
used with ``jp q -t NAME`` and filled with ``-p KEY VALUE`` parameters.

Pure functions over the template's table.  ``$input`` in ``prompt`` (or
``system``) stands for the query's text, ``$KEY`` for a parameter (``-p``,
else ``defaults``), ``$$`` for a dollar sign; a template without ``$input``
in its prompt gets the text after it, on a line of its own.  A name the
template uses that nothing gives is an error naming it, never an empty string
sent to the model.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from porcelain.errors import UsageError

INPUT = "input"


@dataclass(frozen=True)
class Filled:
    """What a template makes of one query."""

    text: str
    system: str | None
    model: str | None


def names(text: str) -> list[str]:
    """The ``$NAME`` placeholders of ``text``, in order, each once."""
    found: list[str] = []
    for _, named, braced, _ in string.Template.pattern.findall(text):
        name = named or braced
        if name and name not in found:
            found.append(name)
    return found


def fill(
    name: str, table: Mapping[str, Any], text: str, params: Sequence[tuple[str, str]]
) -> Filled:
    """The query ``text`` through template ``name`` with ``params`` (``-p KEY VALUE``)."""
    prompt = str(table.get("prompt", ""))
    system = table.get("system")
    values = {str(k): str(v) for k, v in (table.get("defaults") or {}).items()}
    values.update(params)
    used = names(prompt) + names(str(system or ""))
    unknown = [key for key, _ in params if key not in used]
    if unknown:
        raise UsageError(
            f"template {name} has no parameter {unknown[0]}",
            f"its parameters: {', '.join(k for k in used if k != INPUT) or 'none'}",
        )
    values[INPUT] = text
    missing = [key for key in used if key not in values]
    if missing:
        raise UsageError(
            f"template {name} needs a value for {missing[0]}",
            f"give it: `jp q -t {name} -p {missing[0]} VALUE ...`",
        )
    try:
        body = string.Template(prompt).substitute(values)
        shown_system = string.Template(str(system)).substitute(values) if system else None
    except ValueError:  # a "$" that starts no name
        raise UsageError(
            f"template {name} has a $ that is not a placeholder", "write $$ for a dollar sign"
        ) from None
    if INPUT not in names(prompt):  # the text goes after the template's prompt
        body = "\n\n".join(part for part in (body, text) if part)
    if not body.strip():
        raise UsageError(f"template {name} makes an empty query", "give the text after it")
    model = table.get("model")
    return Filled(body.strip(), shown_system, str(model) if model else None)
