"""The facts of a range of turns that a later turn may need, found without a model.

Plain functions over events.  A fact is a kind (path, url, command,
identifier, error, number, request, decision, question, approval), its text
copied verbatim from one event (so it can be searched for in a summary), and
the 1-based source turn it came from.  The offline summarizer lists them and
the coverage report checks a summary against them.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gitstore import Event, Kind
from porcelain.domain.stream import Stream
from porcelain.domain.tokens import PROVIDER_VISIBLE

KINDS = (
    "request",
    "decision",
    "question",
    "approval",
    "path",
    "url",
    "command",
    "identifier",
    "error",
    "number",
)

_MARKER = re.compile(r"^\s*\[turns? \d+(?:[-\u2013]\d+)?\]\s*")
_URL = re.compile(r"https?://[^\s)\]>`'\"]+")
_EXTENSIONS = frozenset(
    [
        "py",
        "rs",
        "toml",
        "json",
        "md",
        "txt",
        "js",
        "ts",
        "tsx",
        "jsx",
        "go",
        "c",
        "h",
        "cc",
        "cpp",
        "hpp",
        "java",
        "kt",
        "rb",
        "sh",
        "yaml",
        "yml",
        "cfg",
        "ini",
        "lock",
        "sql",
        "html",
        "css",
        "ipynb",
        "csv",
        "log",
        "conf",
        "xml",
        "proto",
        "wit",
        "abnf",
        "vue",
        "lua",
        "swift",
    ]  # noqa: SIM905
)
_PATH_TOKEN = re.compile(r"(?<![\w/.:@-])(?:~/|\.{1,2}/|/)?(?:[\w.-]+/)*[\w-]+(?:\.[\w-]+)*\.\w+")
_GREP_TAIL = re.compile(r"^(.*?\.\w{1,5})(?:[-:]\d+(?:[-:].*)?)$")
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_FENCE = re.compile(r"```(?:sh|bash|shell|console|zsh)\n(.*?)```", re.DOTALL)
_PROMPT_LINE = re.compile(r"^\s*\$ (.+)$", re.MULTILINE)
_COMMANDS = frozenset(
    [
        "git",
        "jp",
        "python",
        "python3",
        "pip",
        "pip3",
        "uv",
        "pytest",
        "ruff",
        "mypy",
        "cargo",
        "rustc",
        "npm",
        "npx",
        "yarn",
        "pnpm",
        "node",
        "make",
        "cmake",
        "go",
        "docker",
        "kubectl",
        "curl",
        "wget",
        "ls",
        "cp",
        "mv",
        "rm",
        "mkdir",
        "cat",
        "grep",
        "rg",
        "sed",
        "awk",
        "find",
        "chmod",
        "ssh",
        "scp",
        "tar",
        "brew",
        "apt",
        "apt-get",
        "just",
        "bash",
        "sh",
        "export",
    ]  # noqa: SIM905
)
_IDENT_CODE = re.compile(r"^[A-Za-z_][\w]*(?:(?:::|\.)[A-Za-z_]\w*)*(?:\(\))?$")
_SNAKE = re.compile(r"(?<![\w/.`-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?:\(\))?(?![\w/`-])")
_ERROR = re.compile(
    r"\b\w*(?:Error|Exception)\b|\berror(?:\[\w+\])?:|Traceback|\bFAILED\b|panicked|\bfatal:"
)
_UNIT = (
    r"ms|s|sec|secs|seconds?|min|mins|minutes?|h|hours?|days?|weeks?|KB|MB|GB|TB|KiB|MiB|GiB|"
    r"%|tokens?|bytes?|retries|attempts?|requests?|rps|px|x|times|workers?|threads?|files?|"
    r"rows?|items?|characters?|chars?|words?"
)
_NUMBER = re.compile(
    r"(?<![\w.:/-])(?:v?\d+\.\d+(?:\.\d+)+|\d+(?:[.,]\d+)?\s?(?:" + _UNIT + r")(?![\w-])"
    r"|(?i:from|to|returns?|limit|timeout|max|min|size|port|version|set to|=)\s+\d+(?:\.\d+)?\b)"
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_DECISION = re.compile(
    r"\b(decid\w*|chose|chosen|agreed|settled on|going with|go with|we(?:'ll| will)|"
    r"let'?s|instead of|switch(?:ed)? to|opted|the plan is|must|must not|never|always)\b",
    re.IGNORECASE,
)
_ACKNOWLEDGEMENT = re.compile(
    r"^\s*(?:ok(?:ay)?|yes|yep|sure|thanks?(?: you)?|great|good|nice|perfect|cool|"
    r"go(?: ahead)?|continue|proceed|do it|sounds good|lgtm|y|please do)\b[\s,.!]*",
    re.IGNORECASE,
)
_CLIP = 160


@dataclass(frozen=True)
class Fact:
    kind: str
    text: str
    turn: int  # 1-based source turn


def strip_marker(text: str) -> str:
    return _MARKER.sub("", text)


def clip(text: str, limit: int = _CLIP) -> str:
    """A prefix of ``text`` (one line, cut at a word), so that it stays a substring."""
    line = text.strip().splitlines()[0].strip() if text.strip() else ""
    if len(line) <= limit:
        return line
    cut = line[:limit]
    return cut[: cut.rfind(" ")] if " " in cut else cut


def range_turns(
    source: Sequence[Event] | Stream, from0: int, to0: int
) -> list[tuple[int, Event]]:
    """(1-based turn, event) of the model-visible events of turns ``from0..to0`` (0-based)."""
    stream = Stream.of(source)
    events, idx = stream.events, stream.indices
    lo, hi = bisect_left(idx, from0), bisect_right(idx, to0)
    return [
        (idx[i] + 1, events[i]) for i in range(lo, hi) if events[i].get("type") in PROVIDER_VISIBLE
    ]


def _prose(event: Event) -> str:
    if event.get("type") == Kind.CHAT_REQUEST:
        return strip_marker(str(event.get("content") or ""))
    message = event.get("message") if event.get("type") == Kind.CHAT_RESPONSE else None
    return message if isinstance(message, str) else ""


def _tool_text(event: Event) -> list[str]:
    if event.get("type") == Kind.TOOL_CALL_REQUEST:
        args = event.get("arguments") or {}
        return [v for v in args.values() if isinstance(v, str)] if isinstance(args, dict) else []
    if event.get("type") == Kind.TOOL_CALL_RESPONSE:
        return [str(event.get("content") or "")]
    return []


def paths_in(text: str) -> list[str]:
    """File paths as paths (grep's ``file-21-`` and ``file:21:`` tails cut off)."""
    out: list[str] = []
    for token in _PATH_TOKEN.findall(_URL.sub(" ", text)):
        token = token.rstrip(".,:;-")
        tail = _GREP_TAIL.match(token)
        if tail:
            token = tail.group(1)
        last = token.rsplit("/", 1)[-1]
        ext = last.rsplit(".", 1)[-1] if "." in last else ""
        if ext.lower() in _EXTENSIONS and re.search(r"[A-Za-z]", last.split(".")[0]):
            out.append(token)
    return out


def commands_in(text: str) -> list[str]:
    found = [
        line.strip().removeprefix("$ ") for b in _FENCE.findall(text) for line in b.splitlines()
    ]
    found += _PROMPT_LINE.findall(text)
    found += [c for c in _INLINE_CODE.findall(text) if c.split() and c.split()[0] in _COMMANDS]
    return [clip(c) for c in found if c.strip()]


def identifiers_in(text: str) -> list[str]:
    """Code names: quoted in backticks (snake_case, Type::name, call()), or snake_case prose."""
    out = [
        c
        for c in _INLINE_CODE.findall(text)
        if _IDENT_CODE.match(c) and re.search(r"_|::|\(\)|[a-z][A-Z]|\.[a-z]", c)
    ]
    plain = _INLINE_CODE.sub(" ", _URL.sub(" ", text))
    return out + _SNAKE.findall(plain)


def numbers_in(text: str) -> list[str]:
    """Numbers with a unit or a context word (never a bare number such as a line number)."""
    plain = _INLINE_CODE.sub(" ", _URL.sub(" ", text))
    return [m.group(0).strip() for m in _NUMBER.finditer(plain)]


def errors_in(text: str) -> list[str]:
    return [clip(line) for line in text.splitlines() if _ERROR.search(line) and line.strip()]


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


def is_acknowledgement(request: str) -> bool:
    """A reply that carries no request of its own ("go ahead", "ok, thanks")."""
    rest = _ACKNOWLEDGEMENT.sub("", request, count=1)
    return rest != request and len(rest.split()) <= 6


def _questions(pairs: Sequence[tuple[int, Event]]) -> list[Fact]:
    """Questions in the range's last answer with no user request after them."""
    out: list[Fact] = []
    for n, (turn, event) in enumerate(pairs):
        text = _prose(event)
        if event.get("type") != Kind.CHAT_RESPONSE or not text:
            continue
        answered = any(e.get("type") == Kind.CHAT_REQUEST for _, e in pairs[n + 1 :])
        if not answered:
            out += [Fact("question", clip(s), turn) for s in sentences(text) if s.endswith("?")]
    return out


def _approvals(pairs: Sequence[tuple[int, Event]]) -> list[Fact]:
    """Tool calls the range leaves without a result (awaiting confirmation)."""
    answered = {str(e.get("id")) for _, e in pairs if e.get("type") == Kind.TOOL_CALL_RESPONSE}
    return [
        Fact("approval", str(e.get("name") or "tool"), turn)
        for turn, e in pairs
        if e.get("type") == Kind.TOOL_CALL_REQUEST and str(e.get("id")) not in answered
    ]


def _event_facts(turn: int, event: Event) -> Iterable[Fact]:
    prose = _prose(event)
    texts = [prose, *_tool_text(event)]
    if event.get("type") == Kind.CHAT_REQUEST and prose.strip() and not is_acknowledgement(prose):
        yield Fact("request", clip(sentences(prose)[0]), turn)
    for s in sentences(prose):
        if _DECISION.search(s):
            yield Fact("decision", clip(s), turn)
    args = event.get("arguments") if event.get("type") == Kind.TOOL_CALL_REQUEST else None
    for key in ("command", "cmd"):
        if isinstance(args, dict) and isinstance(args.get(key), str) and args[key].strip():
            yield Fact("command", clip(args[key]), turn)
    for text in texts:
        yield from (Fact("url", u.rstrip(".,:;"), turn) for u in _URL.findall(text))
        yield from (Fact("path", p, turn) for p in paths_in(text))
        yield from (Fact("command", c, turn) for c in commands_in(text))
        yield from (Fact("identifier", i, turn) for i in identifiers_in(text))
    tool_output = event.get("type") == Kind.TOOL_CALL_RESPONSE
    for text in texts if tool_output or event.get("type") == Kind.CHAT_REQUEST else []:
        yield from (Fact("error", e, turn) for e in errors_in(text))
    yield from (Fact("number", n, turn) for n in numbers_in(prose))


def facts_of(pairs: Sequence[tuple[int, Event]]) -> list[Fact]:
    """Every fact of the range, first occurrence only, in turn order (see ``KINDS``)."""
    seen: set[tuple[str, str]] = set()
    out: list[Fact] = []
    found = [f for turn, e in pairs for f in _event_facts(turn, e)]
    for fact in [*found, *_questions(pairs), *_approvals(pairs)]:
        key = (fact.kind, fact.text)
        if fact.text and key not in seen and not _within_other(fact, seen):
            seen.add(key)
            out.append(fact)
    return out


def _within_other(fact: Fact, seen: set[tuple[str, str]]) -> bool:
    """An identifier already listed as part of a path or command is not listed again."""
    if fact.kind != "identifier":
        return False
    return any(k in ("path", "command") and fact.text in t for k, t in seen)
