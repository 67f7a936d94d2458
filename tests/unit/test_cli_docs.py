from tests.support.cli_docs import DOC, render


def test_cli_reference_matches_the_commands() -> None:
    assert DOC.read_text() == render(), (
        "docs/cli.md is out of date: run `python -m tests.support.cli_docs`"
    )
