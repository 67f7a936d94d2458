"""Secrets in text: found, typed, masked and replaced (pure, standard library only).

``scan(text)`` gives a ``Finding`` per secret: its kind (``"aws access key id"``),
where it is (``offset``, ``length``), a masked preview and the SHA-256 of the value
(the allow-list's key).  A finding never holds the value itself, so no ``repr``,
log line or JSON of one can leak it.  ``redact(text, findings)`` puts
``[redacted: KIND]`` in place of each.

The rules (docs/security.md lists them and what they miss): the shapes of
providers' keys and tokens (each a fixed prefix jp can look for before it runs the
expression), private key blocks, passwords in URLs, and ``NAME=value`` lines of
``.env`` files whose name says secret and whose value looks random.  Each rule
names a few literal anchors; a text holding none of them is never matched
against the rule, so a scan costs a few substring searches for most text.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Final

PLACEHOLDER = "[redacted: {kind}]"
PLACEHOLDER_MARK = "[redacted: "  # what every placeholder begins with


@dataclass(frozen=True)
class Finding:
    """One secret in one text: never the value, only where it is and its hash."""

    kind: str
    offset: int
    length: int
    preview: str  # a few characters, the rest masked
    digest: str  # "sha256:<hex>" of the value

    @property
    def end(self) -> int:
        return self.offset + self.length


def digest(value: str) -> str:
    """The key a value has in the allow-list (``secrets.allow.hashes``)."""
    return "sha256:" + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


def preview(value: str) -> str:
    """At most four characters of the value (none of a short one), the rest as ``*``
    counted up to 12."""
    shown = value[:4] if len(value) >= 16 else ""
    hidden = min(len(value) - len(shown), 12)
    return f"{shown}{'*' * hidden}({len(value)} chars)"


def entropy(value: str) -> float:
    """Shannon entropy of the value in bits per character."""
    if not value:
        return 0.0
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


# A rule: a kind, the literal anchors one of which a match must hold, the
# expression, the group that is the secret (0: the whole match) and an optional check.
Check = Callable[[str], bool]


@dataclass(frozen=True)
class Rule:
    kind: str
    anchors: tuple[str, ...]
    source: str
    group: int = 0
    check: Check | None = None
    flags: int = 0

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        """Compiled when a text first holds an anchor of the rule: most commands
        that scan (a push of clean events) never need most rules."""
        return re.compile(self.source, self.flags)


def _rule(kind: str, anchors: Sequence[str], pattern: str, group: int = 0,
          check: Check | None = None, flags: int = 0) -> Rule:  # fmt: skip
    return Rule(kind, tuple(anchors), pattern, group, check, flags)


# what a value that is no secret looks like; this and ``_WORDS`` are compiled on
# first use (``re``'s cache), by the few values a rule matches
_PLACEHOLDERS = (
    r"^(?:x+|\*+|\.+|-+|<[^>]*>|\{[^}]*\}|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%[A-Za-z_(].*"
    r"|(?i:changeme|password|passwd|secret|example|your[-_a-z]*|redacted|placeholder|"
    r"dummy|test|none|null|true|false|undefined|hunter2|admin|root|user|pass))$"
)


def _not_placeholder(value: str) -> bool:
    return not re.match(_PLACEHOLDERS, value) and "[redacted" not in value


# letters joined by dots, dashes or underscores, no digit: a name in code
# (``env.OPENAI_API_KEY``, ``author_name``) or a word (``proxy-handled``), not a key
_WORDS = r"[A-Za-z$]+(?:[._-]+[A-Za-z$]+)*"


def _random_looking(value: str) -> bool:
    """A value that looks generated, not a word, a path or a placeholder."""
    if len(value) < 8 or not _not_placeholder(value):
        return False
    if value.startswith(("/", "./", "~/", "http")) or re.fullmatch(_WORDS, value):
        return False
    classes = sum(
        (any(c.islower() for c in value), any(c.isupper() for c in value),
         any(c.isdigit() for c in value), any(not c.isalnum() for c in value))
    )  # fmt: skip
    return classes >= 2 and entropy(value) >= 3.0


def _url_password(value: str) -> bool:
    return _not_placeholder(value) and len(value) >= 3


# a word boundary, or just after an escaped newline, tab or return of JSON-encoded text
_B = r"(?:(?<![A-Za-z0-9_])|(?<=\\[ntr]))"

_SECRET_NAME = r"[A-Za-z0-9_.-]*(?:SECRET|TOKEN|PASSWORD|PASSWD|PASSPHRASE|PWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?|_KEY)[A-Za-z0-9_]*"  # noqa: E501

RULES: Final[tuple[Rule, ...]] = (
    _rule("private key", ("PRIVATE KEY",),
          r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?:.|\n){0,16384}?"
          r"(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|(?=\n\s*\n)|\Z)"),
    _rule("aws access key id", ("AKIA", "ASIA", "ABIA", "ACCA"),
          r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])"),
    _rule("aws secret access key", ("ws_secret", "WS_SECRET", "SecretAccessKey", "secret_access"),
          r"(?i:aws_?secret_?access_?key|secretaccesskey)[\"']?\s*[:=]\s*[\"']?"
          r"([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])", 1),
    _rule("github token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
          rf"{_B}gh[pousr]_[A-Za-z0-9]{{36,255}}\b"),
    _rule("github token", ("github_pat_",), rf"{_B}github_pat_[A-Za-z0-9_]{{50,255}}\b"),
    _rule("gitlab token", ("glpat-",), rf"{_B}glpat-[A-Za-z0-9_-]{{20,}}"),
    _rule("anthropic api key", ("sk-ant-",), rf"{_B}sk-ant-[A-Za-z0-9]{{2,8}}-[A-Za-z0-9_-]{{32,}}"),
    _rule("openrouter api key", ("sk-or-",), rf"{_B}sk-or-v1-[0-9a-f]{{64}}\b"),
    _rule("openai api key", ("sk-",),
          rf"{_B}sk-(?:proj-|svcacct-|admin-|None-)?(?=[A-Za-z0-9_-]*[0-9])(?=[A-Za-z0-9_-]*[A-Z])"
          r"[A-Za-z0-9_-]{32,}(?![A-Za-z0-9_-])", 0, lambda v: not v.startswith(("sk-ant-", "sk-or-"))),
    _rule("slack token", ("xox",), rf"{_B}xox[abposr]-[0-9A-Za-z-]{{10,}}"),
    _rule("slack webhook", ("hooks.slack.com",),
          r"https://hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{16,}"),
    _rule("discord webhook", ("discord",),
          r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{40,}"),
    _rule("stripe key", ("sk_live_", "rk_live_", "sk_test_", "rk_test_"),
          rf"{_B}[rs]k_(?:live|test)_[0-9A-Za-z]{{24,}}\b"),
    _rule("google api key", ("AIza",), rf"{_B}AIza[0-9A-Za-z_-]{{35}}(?![0-9A-Za-z_-])"),
    _rule("google oauth client secret", ("GOCSPX-",), rf"{_B}GOCSPX-[A-Za-z0-9_-]{{24,40}}"),
    _rule("npm token", ("npm_",), rf"{_B}npm_[A-Za-z0-9]{{36,40}}\b"),
    _rule("pypi token", ("pypi-",), rf"{_B}pypi-AgE[A-Za-z0-9_-]{{50,}}"),
    _rule("hugging face token", ("hf_",), rf"{_B}hf_[A-Za-z]{{34}}\b"),
    _rule("sendgrid api key", ("SG.",), rf"{_B}SG\.[A-Za-z0-9_-]{{22}}\.[A-Za-z0-9_-]{{43,50}}\b"),
    _rule("digitalocean token", ("dop_v1_", "doo_v1_"), rf"{_B}do[op]_v1_[a-f0-9]{{64}}\b"),
    _rule("shopify token", ("shpat_", "shpss_", "shpca_", "shppa_"), rf"{_B}shp(?:at|ss|ca|pa)_[a-fA-F0-9]{{32}}\b"),
    _rule("databricks token", ("dapi",), rf"{_B}dapi[a-f0-9]{{32}}(?:-\d)?\b"),
    _rule("telegram bot token", (":AA",), rf"{_B}\d{{8,10}}:AA[A-Za-z0-9_-]{{30,40}}\b"),
    _rule("azure storage key", ("AccountKey=",), r"AccountKey=([A-Za-z0-9+/]{80,100}={0,2})", 1),
    _rule("jwt", ("eyJ",),
          rf"{_B}eyJ[A-Za-z0-9_-]{{10,}}\.eyJ[A-Za-z0-9_-]{{10,}}\.[A-Za-z0-9_-]{{16,}}"),
    _rule("password in url", ("://",),
          rf"{_B}[a-zA-Z][a-zA-Z0-9+.-]{{1,20}}://[^\s:/@?#\"'<>]{{1,64}}:([^\s/\"'<>]{{1,128}})@"
          r"[A-Za-z0-9.-]", 1, _url_password),
    _rule("env secret", ("secret", "token", "passw", "pwd", "passphrase", "apikey", "accesskey",
                         "privatekey", "credential", "_key"),
          rf"[ \t]*(?:export[ \t]+)?[\"']?{_SECRET_NAME}[\"']?[ \t]*[=:][ \t]*[\"']?"
          r"([^\s\"'#,;(){}\\]{8,256})[\"']?[ \t,;]*(?:$|(?=\n)|(?=\\[nr]))", 1, _random_looking,
          re.IGNORECASE),
)
# the last rule reads lines: its anchors are looked for in the lower-cased text, and
# its expression is matched at the start of each line holding one (a newline, or
# the two characters \n of JSON-encoded text, begins a line)
_LINES: Final = RULES[-1]
_PATTERNS: Final = RULES[:-1]


# each anchor of the expressions once, with the rules that name it; the line rule's
# anchors are looked for in the lower-cased text
_BY_ANCHOR: Final = tuple(
    (anchor, tuple(i for i, r in enumerate(_PATTERNS) if anchor in r.anchors))
    for anchor in dict.fromkeys(a for r in _PATTERNS for a in r.anchors)
)
_SHORT: Final = 2048  # a text shorter is asked first of one alternation of every anchor

# What a JSON text (a note, an event) must hold for a string in it, once decoded,
# to hold an anchor: an anchor as it is (the line rule's in any case, looked for in
# the lower-cased text), or what could spell a character of one when decoded: the
# escape of a printable ASCII character (``\u0041``, ``\/``), or one of the two
# characters whose lower case is ASCII (U+0130, U+212A), as it is or escaped.
_SPELLS_ASCII: Final = "\u0130\u212a"
_MAY_HOLD: Final = re.compile(
    "|".join(
        (
            *(re.escape(a) for a, _ in _BY_ANCHOR),
            r"\\/",
            r"\\u(?:00[2-7][0-9A-Fa-f]|(?i:0130|212a))",
            *_SPELLS_ASCII,
        )
    )
)


def applicable(text: str) -> tuple[Rule, ...]:
    """The rules one of whose anchors ``text`` holds (the others cannot match it),
    in the order of ``RULES``.  Scanning many small strings, ask once for all of
    them joined.

    Most text holds no anchor: a short text is told so by one search of an
    alternation of them all, ``may_hold``'s (faster there than a substring search
    an anchor, which is faster on a long text; what else that alternation finds
    only sends the text to those searches)."""
    held: set[int] = set()
    if len(text) >= _SHORT or _MAY_HOLD.search(text) is not None:
        for anchor, rules in _BY_ANCHOR:
            if anchor in text:
                held.update(rules)
    out = [_PATTERNS[i] for i in sorted(held)]
    lower = text.lower()
    for anchor in _LINES.anchors:
        if anchor in lower:
            out.append(_LINES)
            break
    return tuple(out)


def may_hold(json_text: str) -> bool:
    """False when no string of the JSON text ``json_text`` holds an anchor of any rule,
    so none holds a finding: a text told so is clean without being parsed.  A text
    that is not JSON is asked as it is (an anchor in it is one here too)."""
    if _MAY_HOLD.search(json_text) is not None:
        return True
    lower = json_text.lower()
    return any(anchor in lower for anchor in _LINES.anchors)


def _line_starts(text: str, lower: str, anchors: Sequence[str]) -> list[int]:
    """The start of each line holding an anchor; each stretch of text is searched for a
    line break once, however many anchors a long line holds."""
    hits: list[int] = []
    for anchor in anchors:
        at = lower.find(anchor)
        while at >= 0:
            hits.append(at)
            at = lower.find(anchor, at + 1)
    starts: list[int] = []
    start = searched = 0
    for at in sorted(hits):
        if at > searched:
            newline = text.rfind("\n", searched, at)
            escaped = text.rfind("\\n", max(searched - 1, 0), at)
            start = max(start, newline + 1, escaped + 2 if escaped >= 0 else 0)
            searched = at
        if not starts or starts[-1] != start:
            starts.append(start)
    return starts


def _matches(rule: Rule, text: str) -> Iterable[re.Match[str]]:
    if rule is not _LINES:
        return rule.pattern.finditer(text)
    found = (rule.pattern.match(text, at) for at in _line_starts(text, text.lower(), rule.anchors))
    return (m for m in found if m is not None)


def scan(text: str, rules: Iterable[Rule] | None = None) -> list[Finding]:
    """Every secret in ``text``, by offset; where two rules find overlapping spans the
    first (earlier, then longer) wins.  ``rules``: those ``applicable`` gave for a
    text that holds this one (default: those of ``text`` itself)."""
    found: list[Finding] = []
    for rule in applicable(text) if rules is None else rules:
        for match in _matches(rule, text):
            start, end = match.span(rule.group)
            value = match.group(rule.group)
            if start == end or (rule.check is not None and not rule.check(value)):
                continue
            found.append(Finding(rule.kind, start, end - start, preview(value), digest(value)))
    return _disjoint(found)


def _disjoint(found: list[Finding]) -> list[Finding]:
    out: list[Finding] = []
    for f in sorted(found, key=lambda f: (f.offset, -f.length)):
        if out and f.offset < out[-1].end:
            continue
        out.append(f)
    return out


def placeholder(kind: str) -> str:
    return PLACEHOLDER.format(kind=kind)


def redact(text: str, findings: Iterable[Finding]) -> str:
    """``text`` with each finding replaced by ``[redacted: KIND]`` (findings of this
    text, as ``scan`` gave them)."""
    out = text
    for f in sorted(findings, key=lambda f: f.offset, reverse=True):
        out = out[: f.offset] + placeholder(f.kind) + out[f.end :]
    return out


KINDS: Final = tuple(dict.fromkeys(r.kind for r in RULES))
