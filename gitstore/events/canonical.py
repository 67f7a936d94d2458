"""Canonical JSON, fast: exactly ``json.dumps(value, sort_keys=True, ensure_ascii=False,
indent=1)``, without the standard library's pure-Python encoder.

The standard library encodes with indentation only in Python (its C encoder
takes no indent), one generator per container; this writes the same text with
one recursive function over plain JSON values, leaving each string to the C
``encode_basestring``.  Anything else (a key that is not a string, a float that
is not finite, a value that is no JSON type) goes to ``json.dumps`` itself, so
the text is always the library's.  ``tests/unit/gitstore/test_gitstore_canonical.py``
checks both against each other.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from json import encoder as _json
from json.encoder import encode_basestring
from typing import Any

_INT = int.__repr__
_FLOAT = float.__repr__
_INFINITY = float("inf")


def encoder(
    *, ensure_ascii: bool = True, sort_keys: bool = False, compact: bool = False
) -> Callable[[Any], str]:
    """``json.JSONEncoder(...).encode`` with its C encoder made once, not per call (the
    library makes one each time: a cache row, a title line).  No check for circular
    values: what is encoded here came from JSON (a cycle is a ``RecursionError``)."""
    items, keys = (",", ":") if compact else (", ", ": ")
    library = json.JSONEncoder(
        ensure_ascii=ensure_ascii, sort_keys=sort_keys, separators=(items, keys)
    )
    make = getattr(_json, "c_make_encoder", None)  # the C accelerator's (json's own name)
    if make is None:  # an interpreter without it
        return library.encode
    text = _json.encode_basestring_ascii if ensure_ascii else encode_basestring
    chunks = make(None, library.default, text, None, keys, items, sort_keys, False, True)
    join = "".join
    return lambda value: join(chunks(value, 0))


class _Unusual(Exception):
    """A value this encoder leaves to ``json.dumps``."""


def dumps(value: Any) -> str:
    """``json.dumps(value, sort_keys=True, ensure_ascii=False, indent=1)``."""
    out: list[str] = []
    try:
        _encode(value, "\n", out)
    except (_Unusual, RecursionError, TypeError):
        return json.dumps(value, sort_keys=True, ensure_ascii=False, indent=1)
    return "".join(out)


def _encode(value: Any, indent: str, out: list[str]) -> None:
    """Append the text of ``value``; ``indent``: a newline and the spaces of its level."""
    if isinstance(value, str):
        out.append(encode_basestring(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(_INT(value))
    elif isinstance(value, float):
        if value != value or value == _INFINITY or value == -_INFINITY:
            raise _Unusual
        out.append(_FLOAT(value))
    elif isinstance(value, list | tuple):
        _array(value, indent, out)
    elif isinstance(value, dict):
        _object(value, indent, out)
    else:
        raise _Unusual


def _array(value: list[Any] | tuple[Any, ...], indent: str, out: list[str]) -> None:
    if not value:
        out.append("[]")
        return
    inner = indent + " "
    between = "," + inner
    out.append("[" + inner)
    first = True
    for item in value:
        if not first:
            out.append(between)
        first = False
        if isinstance(item, str):
            out.append(encode_basestring(item))
        else:
            _encode(item, inner, out)
    out.append(indent + "]")


def _object(value: dict[Any, Any], indent: str, out: list[str]) -> None:
    if not value:
        out.append("{}")
        return
    inner = indent + " "
    between = "," + inner
    out.append("{" + inner)
    first = True
    for key in sorted(value):
        if not isinstance(key, str):
            raise _Unusual
        item = value[key]
        if first:
            first = False
        else:
            out.append(between)
        if isinstance(item, str):
            out.append(encode_basestring(key) + ": " + encode_basestring(item))
        else:
            out.append(encode_basestring(key) + ": ")
            _encode(item, inner, out)
    out.append(indent + "}")
