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
    check_value(value, deep=SURROGATE_ESCAPE.search(text) is not None)
    return value


def check_value(value: Any, deep: bool = True) -> None:
    """Nesting at most ``MAX_DEPTH``; with ``deep``, no string holds a lone surrogate."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ValueError(f"nested more than {MAX_DEPTH} levels deep")
        if isinstance(item, dict):
            if deep:
                for key in item:
                    _encodable(key)
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
        elif deep and isinstance(item, str):
            _encodable(item)


def _encodable(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("a string holds a lone surrogate (not Unicode text)") from None
