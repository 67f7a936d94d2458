"""Untrusted text made safe to show: control characters in a visible form (pure).

What arrives from a remote, a file, a model or a tool may hold escape
sequences that a terminal would obey; these functions turn each control
character into a visible escape (``\\x1b``), so it is shown, never run.
"""

from __future__ import annotations

import re

# patterns compiled when first used (re's cache): U+2028 in a set makes a 64K table (1 ms)
# on a terminal: C0 but newline and tab, DEL, C1; a CR only when no newline follows
_CONTROL = "\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f]"
# in a one-line field: every control character, and what splits or spaces a line
_ONE_LINE = "[\x00-\x1f\x7f-\x9f\u2028\u2029]"
# what a one-line field never holds raw, terminal or not
_LINE_BREAKS = "[\n\r\t\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]"
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# JSON leaves DEL and C1 raw; as \\u escapes they decode to the same text
JSON_RAW = re.compile("[\x7f-\x9f]")


def _visible(match: re.Match[str]) -> str:
    found = match.group()
    if found == "\r\n":
        return found
    if found in _NAMED:
        return _NAMED[found]
    code = ord(found)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_untrusted(text: str, *, one_line: bool = False) -> str:
    """Untrusted ``text`` made safe for a terminal: each control character in a
    visible form (see the module's docstring); newline and tab stay unless
    ``one_line``.  Text without one comes back as it is."""
    pattern = _ONE_LINE if one_line else _CONTROL
    return re.sub(pattern, _visible, text) if re.search(pattern, text) else text


def untrusted_field(text: object) -> str:
    """Untrusted text for one line of a table or a header, terminal or not: no raw
    newline, carriage return, tab or line separator (the rest is the stream's
    business: ``Output`` escapes it on a terminal)."""
    shown = str(text)
    return re.sub(_LINE_BREAKS, _visible, shown) if re.search(_LINE_BREAKS, shown) else shown
