"""The offline model's summaries: extractive, deterministic, a few hundred words.

Nothing is paraphrased.  The summary quotes the goal (the first request),
sentences that record decisions or constraints, the exact file paths,
commands, error lines and numbers it finds, the tools used, and the last
request and answer as the current state.  The same events give the same text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from gitstore import Event
from porcelain.models.offline_transcript import parse_transcript

_MARKER = re.compile(r"^\s*\[turn \d+\]\s*")
_INSTRUCTION = re.compile(r"^\s*summari[sz]e\b", re.IGNORECASE)
_CONTEXT = re.compile(r"additional context:\s*(.+)", re.IGNORECASE | re.DOTALL)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_DECISION = re.compile(
    r"\b(decid\w*|chose|chosen|choos\w*|agreed|settled on|going with|go with|we(?:'ll| will)|"
    r"let'?s|instead of|switch(?:ed)? to|opted|the plan|must|must not|never|always)\b",
    re.IGNORECASE,
)
_URL = re.compile(r"https?://[^\s)\]>`'\"]+")
_PATH = re.compile(
    r"(?<![\w/.:-])(?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w.-]+|(?<![\w/.-])[\w-]+\.\w{1,5}\b"
)
_EXTENSION_NAMES = (
    "py rs toml json md txt js ts tsx jsx go c h cc cpp hpp java kt rb sh yaml yml cfg ini "
    "lock sql html css ipynb csv log conf xml proto"
)
_EXTENSIONS = frozenset(_EXTENSION_NAMES.split())
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_FENCE = re.compile(r"```(?:sh|bash|shell|console|zsh)\n(.*?)```", re.DOTALL)
_PROMPT_LINE = re.compile(r"^\s*\$ (.+)$", re.MULTILINE)
_COMMAND_NAMES = (
    "git jp python python3 pip pip3 uv pytest ruff mypy cargo rustc npm npx yarn pnpm node make "
    "cmake go docker kubectl curl wget ls cd cp mv rm mkdir cat grep rg sed awk find chmod ssh "
    "scp tar brew apt apt-get just bash sh export"
)
_COMMANDS = frozenset(_COMMAND_NAMES.split())
_ERROR = re.compile(
    r"\b\w*(?:Error|Exception)\b|\berror(?:\[\w+\])?:|Traceback|\bFAILED\b|panicked|\bfatal:",
)
_UNIT = (
    r"ms|s|sec|seconds?|min|minutes?|h|hours?|days?|KB|MB|GB|TB|KiB|MiB|GiB|%|tokens?|bytes?|"
    r"lines?|turns?|times|retries|px|rps|x"
)
_NUMBER = re.compile(r"(?:\b([A-Za-z][\w-]*)\s+)?(\b\d+(?:[.,]\d+)*(?:\s?(?:" + _UNIT + r")\b)?)")
_POSITION_WORDS = frozenset({"turn", "turns", "step", "item", "line", "page", "section"})
_STOPWORDS = frozenset(
    "the a an to of and or in on at is are was were be by for with from about than".split()  # noqa: SIM905
)


def _words(text: str, limit: int) -> str:
    words = text.split()  # noqa: SIM905
    return " ".join(words[:limit]) + (" …" if len(words) > limit else "")


def _unique(items: Iterable[str], limit: int) -> list[str]:
    out: list[str] = []
    for item in items:
        if item and item not in out:
            out.append(item)
        if len(out) == limit:
            break
    return out


def _content(event: Event) -> str:
    return _MARKER.sub("", str(event.get("content") or ""))


def _texts(events: Sequence[Event]) -> list[str]:
    """Every text worth scanning: requests, answers, tool arguments and results."""
    out: list[str] = []
    for e in events:
        kind = e.get("type")
        if kind == "chat_request":
            out.append(_content(e))
        elif kind == "chat_response" and isinstance(e.get("message"), str):
            out.append(e["message"])
        elif kind == "tool_call_request":
            args = e.get("arguments") or {}
            out.extend(v for v in args.values() if isinstance(v, str))
        elif kind == "tool_call_response":
            out.append(str(e.get("content") or ""))
    return out


def _is_path(token: str) -> bool:
    token = token.rstrip(".,:;")
    if not re.search(r"[A-Za-z]", token):
        return False
    last = token.rsplit("/", 1)[-1]
    ext = last.rsplit(".", 1)[-1].lower() if "." in last else ""
    return ext in _EXTENSIONS or token.startswith(("/", "./", "../", "~/")) or token.count("/") >= 2


def _paths(texts: Sequence[str]) -> list[str]:
    found: list[str] = []
    for text in texts:
        found += _URL.findall(text)
        found += [p.rstrip(".,:;") for p in _PATH.findall(_URL.sub(" ", text)) if _is_path(p)]
    return _unique(found, 12)


def _commands(events: Sequence[Event], texts: Sequence[str]) -> list[str]:
    found: list[str] = []
    for e in events:
        args = e.get("arguments") if e.get("type") == "tool_call_request" else None
        for key in ("command", "cmd"):
            if isinstance(args, dict) and isinstance(args.get(key), str):
                found.append(args[key])
    for text in texts:
        for block in _FENCE.findall(text):
            found += [line.strip().removeprefix("$ ") for line in block.splitlines()]
        found += _PROMPT_LINE.findall(text)
        found += [c for c in _INLINE_CODE.findall(text) if c.split()[0] in _COMMANDS]
    return _unique((_words(c.strip(), 16) for c in found), 6)


def _errors(events: Sequence[Event]) -> list[str]:
    """Error lines from failed tool results, then other results, then requests
    (where users paste them); answers only talk about errors."""
    results = [e for e in events if e.get("type") == "tool_call_response"]
    sources = [str(e.get("content") or "") for e in results if e.get("is_error")]
    sources += [str(e.get("content") or "") for e in results if not e.get("is_error")]
    sources += [_content(e) for e in events if e.get("type") == "chat_request"]
    lines = [line.strip() for text in sources for line in text.splitlines()]
    return _unique((_words(line, 24) for line in lines if _ERROR.search(line)), 3)


def _numbers(texts: Sequence[str]) -> list[str]:
    found: list[str] = []
    for text in texts:
        clean = _PATH.sub(" ", _URL.sub(" ", _INLINE_CODE.sub(" ", text)))
        for word, number in _NUMBER.findall(clean):
            has_unit = not number.replace(",", "").replace(".", "").isdigit()
            if (not has_unit and len(number) < 2) or word.lower() in _POSITION_WORDS:
                continue
            word = "" if word.lower() in _STOPWORDS else word
            found.append(f"{word} {number}".strip())
    return _unique(found, 10)


def _decisions(texts: Sequence[str], goal: str) -> list[str]:
    sentences = (s.strip() for text in texts for s in _SENTENCE.split(text))
    picked = (s for s in sentences if s and _DECISION.search(s) and s not in goal)
    return _unique((_words(s, 25) for s in picked), 3)


def _tools(events: Sequence[Event]) -> list[str]:
    counts: dict[str, int] = {}
    for e in events:
        if e.get("type") == "tool_call_request":
            name = str(e.get("name") or "tool")
            counts[name] = counts.get(name, 0) + 1
    return [f"{name} ×{n}" for name, n in counts.items()][:6]


def _focus(instruction: str) -> str:
    context = _CONTEXT.search(instruction)
    return context.group(1).strip() if context else ""


def _split_instruction(events: list[Event]) -> tuple[list[Event], str]:
    """The conversation to summarize, and the focus the instruction asks for.

    The instruction is a trailing "Summarize ..." request, or the text after a
    transcript sent in the last request (``offline_transcript``).
    """
    if not events or events[-1].get("type") != "chat_request":
        return events, ""
    last = str(events[-1].get("content") or "")
    transcript = parse_transcript(last)
    if transcript is not None:
        return events[:-1] + transcript[0], _focus(transcript[1])
    if _INSTRUCTION.match(_content(events[-1])):
        return events[:-1], _focus(last)
    return events, ""


def summarize(events: Sequence[Event]) -> str:
    """An extractive summary of the events (a trailing "Summarize ..." request is
    read as the instruction, its ``Additional context:`` as the focus; a
    transcript in the last request is read as the conversation)."""
    events, focus = _split_instruction([e for e in events if e.get("type") != "turn_start"])
    requests = [_content(e) for e in events if e.get("type") == "chat_request"]
    requests = [r for r in requests if r.strip()]
    answers = [
        e["message"]
        for e in events
        if e.get("type") == "chat_response" and isinstance(e.get("message"), str)
    ]
    answers = [a for a in answers if a.strip()]
    if not requests and not answers:
        return "Nothing to summarize: the range holds no messages."
    texts = _texts(events)
    prose = [*requests, *answers]
    goal = requests[0] if requests else ""
    lines = [
        "Extractive summary by jp's offline model (not a language model) of "
        f"{len(requests)} requests and {len(answers)} answers."
    ]
    if goal:
        lines.append(f"Goal: {_words(goal, 40)}")
    if focus:
        lines.append(f"Focus asked for: {_words(focus, 30)}")
    decisions = _decisions(prose[1:] if goal else prose, goal)
    if decisions:
        lines.append("Decisions and constraints:")
        lines += [f"- {d}" for d in decisions]
    sections = (
        ("Files", ", ".join(_paths(texts))),
        ("Commands", "; ".join(f"`{c}`" for c in _commands(events, texts))),
        ("Numbers", ", ".join(_numbers(prose))),
        ("Tools used", ", ".join(_tools(events))),
    )
    lines += [f"{title}: {body}" for title, body in sections if body]
    errors = _errors(events)
    if errors:
        lines.append("Errors seen:")
        lines += [f"- {e}" for e in errors]
    if len(requests) > 1:
        lines.append(f"Last request: {_words(requests[-1], 40)}")
    if answers:
        lines.append(f"Last answer: {_words(answers[-1], 60)}")
    return "\n".join(lines)
