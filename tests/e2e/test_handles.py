"""Short handles for recent conversations (`@1` the most recently active) and title
search in `use` and its picker, typed as a person does."""

from __future__ import annotations

from tests.e2e.harness import JP, User
from tests.support.terminal import Terminal


def three(user: User) -> list[str]:
    ids = []
    for text in ("first about rust", "second about python", "third about python too"):
        user.ok("q", "--new", text)
        ids.append(user.active())
    return ids


def test_at_n_names_the_recently_active_ones(user: User) -> None:
    first, second, third = three(user)
    assert user.show("@1")["id"] == third
    assert user.show("@3")["id"] == first
    user.ok("conversation", "use", "@3")
    user.ok("q", "more rust")  # the first one is now the most recently active
    assert user.show("@1")["id"] == first and user.show("@2")["id"] == third
    proc = user.fail("conversation", "show", "@9", code=1)
    assert proc.stderr.startswith("error: @9: there are 3 live conversations (@1 to @3)")
    assert user.show("@3")["id"] == second


def test_use_finds_one_conversation_by_its_title(user: User) -> None:
    first, second, third = three(user)
    assert first in user.ok("conversation", "use", "about RUST")
    assert user.active() == first
    proc = user.fail("conversation", "use", "python", code=1)
    assert "2 conversations have 'python' in their title" in proc.stderr
    assert second in proc.stderr and third in proc.stderr
    assert user.active() == first, "an ambiguous title changes nothing"
    proc = user.fail("conversation", "use", "golang", code=1)
    assert "not a conversation id" in proc.stderr


def test_the_picker_takes_title_words(user: User) -> None:
    first, _, third = three(user)
    session = Terminal([str(JP), "conversation", "use"], user.env, user.root)
    session.expect(b"Use which?")
    session.send("python too\n")
    code, shown = session.finish()
    assert code == 0, shown
    assert user.active() == third
