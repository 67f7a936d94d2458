"""Which fenced code jp highlights: a known lexer, and code small enough.

A fence's info string names a Pygments lexer, and the text comes from a model,
a pulled conversation or an imported file.  Pygments' lexers are regular
expressions, some far worse than linear on the right line (``systemd`` is cubic
on a line of spaces: 2,000 of them about 22 s; ``make`` and ``console`` blow up
on a long word; ``csharp`` is quadratic on a run of ``$``), so one answer could
pin a core on every view.  Two bounds hold the work on the terminal and in the
web view alike: the lexer must be one of ``LEXERS`` (common languages, each
measured on blocks of one repeated character, 21 characters tried: linear,
at worst about 60 microseconds a character, so 0.6 s for a crafted block of
``MAX_BLOCK``), and the block at most ``MAX_BLOCK`` characters with no line
over ``MAX_LINE``; anything else is shown as plain text.

Pure: names and sizes only; Pygments is loaded by the renderers.
"""

from __future__ import annotations

from typing import Final

MAX_BLOCK: Final = 10_000  # characters of one highlighted block
MAX_LINE: Final = 500  # characters of its longest line

# info-string word (lower case) -> the Pygments alias jp asks for
LEXERS: Final[dict[str, str]] = {
    **dict.fromkeys(("python", "py", "python3", "py3", "pycon"), "python"),
    **dict.fromkeys(("javascript", "js", "node", "mjs", "cjs"), "javascript"),
    **dict.fromkeys(("typescript", "ts"), "typescript"),
    **dict.fromkeys(("jsx",), "jsx"),
    **dict.fromkeys(("tsx",), "tsx"),
    **dict.fromkeys(("json", "jsonc", "json5"), "json"),
    **dict.fromkeys(("bash", "sh", "shell", "zsh", "ksh"), "bash"),
    **dict.fromkeys(("c", "h"), "c"),
    **dict.fromkeys(("cpp", "c++", "cxx", "hpp", "cc"), "cpp"),
    **dict.fromkeys(("java",), "java"),
    **dict.fromkeys(("go", "golang"), "go"),
    **dict.fromkeys(("rust", "rs"), "rust"),
    **dict.fromkeys(("ruby", "rb"), "ruby"),
    **dict.fromkeys(("php",), "php"),
    **dict.fromkeys(("sql", "postgresql", "mysql", "sqlite"), "sql"),
    **dict.fromkeys(("html", "htm"), "html"),
    **dict.fromkeys(("xml", "svg"), "xml"),
    **dict.fromkeys(("css",), "css"),
    **dict.fromkeys(("yaml", "yml"), "yaml"),
    **dict.fromkeys(("toml",), "toml"),
    **dict.fromkeys(("ini", "cfg", "conf"), "ini"),
    **dict.fromkeys(("diff", "patch", "udiff"), "diff"),
    **dict.fromkeys(("markdown", "md"), "markdown"),
    **dict.fromkeys(("kotlin", "kt"), "kotlin"),
    **dict.fromkeys(("swift",), "swift"),
    **dict.fromkeys(("csharp", "cs", "c#"), "csharp"),
    **dict.fromkeys(("scala",), "scala"),
    **dict.fromkeys(("lua",), "lua"),
    **dict.fromkeys(("perl", "pl"), "perl"),
    **dict.fromkeys(("r",), "r"),
    **dict.fromkeys(("dockerfile", "docker"), "docker"),
    **dict.fromkeys(("haskell", "hs"), "haskell"),
    **dict.fromkeys(("elixir", "ex", "exs"), "elixir"),
    **dict.fromkeys(("erlang", "erl"), "erlang"),
    **dict.fromkeys(("clojure", "clj"), "clojure"),
    **dict.fromkeys(("ocaml", "ml"), "ocaml"),
    **dict.fromkeys(("dart",), "dart"),
    **dict.fromkeys(("graphql", "gql"), "graphql"),
    **dict.fromkeys(("nginx",), "nginx"),
    **dict.fromkeys(("powershell", "ps1", "pwsh"), "powershell"),
    **dict.fromkeys(("objective-c", "objc"), "objective-c"),
}


def lexer_name(info: str) -> str | None:
    """The Pygments alias for a fence's info string, or None (plain text)."""
    word = info.strip().split(None, 1)[0].lower() if info.strip() else ""
    return LEXERS.get(word)


def small_enough(code: str) -> bool:
    """``code`` is within what jp highlights (``MAX_BLOCK``, ``MAX_LINE``)."""
    if len(code) > MAX_BLOCK:
        return False
    return all(len(line) <= MAX_LINE for line in code.split("\n"))


def highlighted(info: str, code: str) -> str | None:
    """The lexer to highlight ``code`` with, or None to show it as plain text."""
    name = lexer_name(info)
    return name if name is not None and small_enough(code) else None
