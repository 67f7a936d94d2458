"""An answer rendered on a terminal as it streams (render/mdstream.py): a fenced
code block of 8,000 lines against one of 1,000, both sent in the small chunks a
model streams, so the ratio says whether the work grows with the answer
(8x) or with the answer times its chunks (64x and more, as it did when every
chunk rescanned all that was not shown); and the same answer escaped as plain
text (what a terminal without colours gets), the floor of any rendering.
"""

from __future__ import annotations

import time

from bench.common import Profile, Results, Row, interleaved, verdict

CHUNK = 4  # characters a streamed delta holds, about a token
LINEAR = 1.5  # 8x the lines may cost up to 1.5 x 8x the time


def answer(lines: int) -> str:
    body = "".join(f"    total += item_{n} * {n}  # line {n}\n" for n in range(lines))
    return f"Here is the code:\n\n```python\ndef f():\n{body}```\n\nThat is all.\n"


def _streamed(text: str, markdown: bool) -> float:
    # lazy: the bench imports jp's modules only for the sections it runs
    from porcelain.render.mdstream import MarkdownStream
    from porcelain.render.output import UntrustedStream

    stream = MarkdownStream(width=100) if markdown else UntrustedStream(terminal=True)
    start = time.perf_counter()
    for i in range(0, len(text), CHUNK):
        stream.feed(text[i : i + CHUNK])
    stream.flush()
    return time.perf_counter() - start


def render_section(profile: Profile, results: Results) -> None:
    small, big = (100, 800) if profile.name == "smoke" else (1_000, 8_000)
    texts = {"small": answer(small), "big": answer(big)}
    medians = interleaved(
        {
            "small": lambda: _streamed(texts["small"], True),
            "big": lambda: _streamed(texts["big"], True),
            "plain": lambda: _streamed(texts["big"], False),
        },
        profile.few(3),
    )
    growth = medians["big"] / medians["small"] if medians["small"] else 0.0
    results.add(
        Row(
            f"render: stream a {big:,}-line code block",
            medians["big"],
            f"the {small:,}-line block",
            medians["small"],
            f"linear: < {LINEAR * big / small:.0f}x",
            verdict(growth < LINEAR * big / small),
            cpu=medians.cpu["big"],
            base_cpu=medians.cpu["small"],
        )
    )
    results.add(
        Row(
            f"render: stream a {big:,}-line code block (highlighted)",
            medians["big"],
            "the same chunks escaped as plain text",
            medians["plain"],
            note="what the styles cost over a terminal without colours",
        )
    )
