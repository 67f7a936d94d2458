"""JSON values jp takes in: strict parsing and the checks on a parsed value.

JSON is strict UTF-8 (no byte-order mark, no lone surrogate escapes), without
``NaN``/``Infinity`` or numbers that overflow a float, nested at most
``MAX_DEPTH`` deep.  These checks sit below the events (whose schema uses
``check_value``) and below ``boundary`` (which reads events, files and
metadata with ``load_json``); they import nothing of gitstore.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

MAX_DEPTH = 200  # JSON nesting; jp's own JSON writer recurses per level

SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")  # a lone surrogate written as an escape


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:20]} is too large")
    return value


_STRICT = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite)
LEAN = json.JSONDecoder(parse_constant=_no_constant)  # for values checked after parsing


def load_json(data: bytes | str) -> Any:
    """Strict JSON: raises ``ValueError`` with a short reason for anything else."""
    value, text = _parse(data)
    if SURROGATE_ESCAPE.search(text) is None and text.count("{") + text.count("[") <= MAX_DEPTH:
        return value  # no more containers than MAX_DEPTH: it cannot nest deeper
    walk(value, deep=SURROGATE_ESCAPE.search(text) is not None)
    return value


def _load(data: bytes | str) -> tuple[Any, int]:
    """``load_json``'s value and its depth (``walk``)."""
    value, text = _parse(data)
    return value, walk(value, deep=SURROGATE_ESCAPE.search(text) is not None)


def _parse(data: bytes | str) -> tuple[Any, str]:
    """The value of strict JSON, and its text."""
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"not UTF-8 text (byte {exc.start})") from None
    else:
        text = data
    if text.startswith("\ufeff"):
        raise ValueError("starts with a byte-order mark")
    try:
        value = _STRICT.decode(text)
    except RecursionError:
        raise ValueError("invalid JSON: nested too deeply") from None
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        raise ValueError(f"invalid JSON at {where}: {exc.msg}") from None
    except ValueError as exc:  # a constant, a number too large for a float or an int
        raise ValueError(f"invalid JSON: {exc}") from None
    return value, text


def check_value(value: Any, deep: bool = True) -> None:
    """Nesting at most ``MAX_DEPTH``; with ``deep``, no string holds a lone surrogate.

    A ``Checked`` object inside ``value`` is not walked again: its own depth, counted
    from where it sits, must still be within ``MAX_DEPTH``."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        kind = type(item)
        if kind is str:
            if deep:
                _encodable(item)
        elif kind is Checked:
            if depth + item.depth > MAX_DEPTH:
                raise ValueError(f"nested more than {MAX_DEPTH} levels deep")
        elif depth >= MAX_DEPTH and isinstance(item, dict | list) and item:
            raise ValueError(f"nested more than {MAX_DEPTH} levels deep")
        elif isinstance(item, dict):
            if deep:
                for key in item:
                    _encodable(key)
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
        elif deep and isinstance(item, str):
            _encodable(item)


def walk(value: Any, deep: bool = True) -> int:
    """``check_value`` of a value just parsed, returning how deep it is nested (0: a
    scalar; an object's members one level below it)."""
    if deep:  # a text with a surrogate escape (rare): its strings checked on their own
        check_value(value)
    stack: list[tuple[Any, int]] = [(value, 0)]
    most = 0
    while stack:
        item, depth = stack.pop()
        if depth > most:
            if depth > MAX_DEPTH:
                raise ValueError(f"nested more than {MAX_DEPTH} levels deep")
            most = depth
        if isinstance(item, dict | list):
            members = item.values() if isinstance(item, dict) else item
            stack.extend((v, depth + 1) for v in members)
    return most


_VOUCH = object()  # held by this module: ``Checked`` is made by ``load_record`` only


class Vouched(dict[str, Any]):
    """A JSON object one maker vouches for (``Checked``, an event's ``Valid``): it
    cannot be changed at its top level, and a copy of it (``dict(value)``, a pickle)
    is a plain ``dict``, which nobody vouches for."""

    __slots__ = ()
    _what = "a vouched value"

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"{self._what} cannot be changed (copy it: dict(value))")

    __setitem__ = __delitem__ = __ior__ = _refuse
    update = pop = popitem = clear = setdefault = _refuse

    def __reduce__(self) -> Any:  # a copy is a plain dict: only the maker vouches
        return (dict, (dict(self),))


class Checked(Vouched):
    """A JSON object ``load_record`` parsed and walked: nested ``depth`` levels (its
    members one level below it), every string Unicode text.  ``check_value`` takes
    its word for what is inside, so a record an import read is walked once, not again
    in each event that carries it.  Nothing else can make one (the constructor wants
    this module's token), and it cannot be changed at its top level; what it holds
    must not be changed either (a mapper reads records, never edits them)."""

    __slots__ = ("depth",)
    _what = "a Checked value"

    def __init__(self, value: dict[str, Any], depth: int, vouch: object) -> None:
        if vouch is not _VOUCH:
            raise TypeError("a Checked value is made only by gitstore.values.load_record")
        super().__init__(value)
        self.depth = depth



def load_record(data: bytes | str) -> Checked:
    """``load_json`` of one JSON object, vouched for (``Checked``): a value that is not
    an object raises ``ValueError`` ("not a JSON object")."""
    value, depth = _load(data)
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    return Checked(value, depth, _VOUCH)


def _encodable(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("a string holds a lone surrogate (not Unicode text)") from None
