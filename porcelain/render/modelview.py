"""`jp model ls` as text: providers, aliases, model ids (keys by name, never by value)."""

from __future__ import annotations

from porcelain.app.modellist import ModelList


def _key(variable: str | None, is_set: bool) -> str:
    if variable is None:
        return "no key needed"
    return f"{variable} {'set' if is_set else 'NOT SET'}"


def model_lines(listing: ModelList) -> list[str]:
    out = [f"Default model: {listing.default}", "", "Providers:"]
    width = max(len(p.name) for p in listing.providers) + 1
    for p in listing.providers:
        origin = "built in" if p.builtin else "configured"
        where = f", {p.base_url}" if p.base_url else ""
        out.append(
            f"  {p.name + '/':<{width}}  {p.kind}, {origin}{where}; {_key(p.key, p.key_set)}"
        )
    out += ["", "Aliases:"]
    if not listing.aliases:
        out.append('  none (define one: [assistant.model.aliases] fast = "ollama/qwen3")')
    for a in listing.aliases:
        result = f"error: {a.error}" if a.error else f"-> {a.resolved}"
        out.append(
            f"  {a.name} = {a.target}  {result}"
            if a.target != a.resolved
            else f"  {a.name} {result}"
        )
    out += ["", "Models:"]
    width = max((len(m.id) for m in listing.models), default=0)
    for m in listing.models:
        out.append(f"  {m.id:<{width}}  {m.window:>9,} tokens  {_key(m.key, m.key_set)}  ({m.why})")
    out += ["", "Any provider/name the provider serves works with -m; these are the ones jp knows."]
    return out
