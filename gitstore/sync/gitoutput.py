"""Reading what git prints: its error lines, the remote's own lines, the per-ref
report of ``git push --porcelain``.  Everything here may hold a server's text:
the porcelain shows it as untrusted."""

from __future__ import annotations

from dataclasses import dataclass

from gitstore.sync.urls import redact

RACE_WORDS = (
    "fetch first",
    "non-fast-forward",
    "stale info",
    "already exists",
    "cannot lock",
    "failed to update",
    "non-fastforwardable",
    "not present locally",
)


@dataclass(frozen=True)
class RefResult:
    ref: str
    ok: bool
    summary: str = ""

    @property
    def lost_race(self) -> bool:
        """Rejected because the remote moved since it was fetched: pull and retry."""
        return not self.ok and any(word in self.summary for word in RACE_WORDS)


def error_lines(text: str, count: int = 2, limit: int = 300) -> str:
    """git's own error lines (``fatal:``/``error:``), after the line the transport
    printed just before them (ssh's ``Permission denied (publickey).``, without which
    ``Could not read from remote repository`` says nothing), else its last lines;
    each bounded."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    first = next((i for i, line in enumerate(lines) if line.startswith(("fatal:", "error:"))), None)
    if first is None:
        picked = lines[-count:]
    else:
        errors = [line for line in lines[first:] if line.startswith(("fatal:", "error:"))]
        said = [
            line
            for line in lines[:first]
            if not line.startswith(("remote:", "hint:", "warning:", "From ", "To "))
        ]
        picked = said[-1:] + errors[:count]
    picked = [redact(line) for line in picked]  # git names the URL it could not reach
    cut = [line if len(line) <= limit else line[: limit - 1] + "…" for line in picked]
    return "; ".join(cut) or "git failed without a message"


def remote_said(stderr: str, limit: int = 300) -> str:
    """The ``remote:`` lines git relays from the server (a hook's reason), joined and
    bounded: untrusted text, which the porcelain shows as a one-line field."""
    lines = [
        line[len("remote:") :].strip()
        for line in stderr.splitlines()
        if line.startswith("remote:") and line[len("remote:") :].strip()
    ]
    text = redact("; ".join(lines[-3:]))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def parse_porcelain(stdout: str) -> list[RefResult]:
    """Per-ref lines of ``git push --porcelain``: ``<flag>\\t<src>:<dst>\\t<summary>``."""
    out: list[RefResult] = []
    for line in stdout.splitlines():
        parts = line.split("\t")
        if len(parts) < 3 or len(parts[0]) != 1 or ":" not in parts[1]:
            continue
        flag, spec, summary = parts[0], parts[1], "\t".join(parts[2:])
        dst = spec.rsplit(":", 1)[1]
        out.append(RefResult(dst, flag != "!", summary))
    return out
