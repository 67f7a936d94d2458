"""A remote's URL is checked before it reaches the config, and shown without secrets."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from gitstore.errors import RemoteSetupError
from gitstore.git import command
from gitstore.git.command import redact
from gitstore.sync import remotes
from gitstore.sync.remotespecs import check_url

REFUSED = {
    "": "needs a URL",
    "   ": "needs a URL",
    " /srv/jp.git": "spaces",
    "/srv/jp.git\n": "spaces",
    "/srv/j\x1bp.git": "control characters",
    "/srv/jp\x7f.git": "control characters",
    "-oProxyCommand=touch /tmp/x": "option",
    "--upload-pack=touch /tmp/x": "option",
    "ext::sh -c touch% /tmp/x": "run a command",
    "EXT::sh": "run a command",
    "fd::3": "run a command",
    "foo+bar::https://host/x": "run a command",
}

ACCEPTED = [
    "/srv/jp.git",
    "../jp.git",
    "jp.git",
    "git@host:jp.git",
    "git@[::1]:jp.git",
    "[::1]:jp.git",
    "ssh://git@[::1]:2222/jp.git",
    "ssh://host/a::b.git",
    "https://user:token@host/jp.git",
    "file:///srv/jp.git",
    "/srv/odd::name.git",
]


@pytest.mark.parametrize(("url", "why"), sorted(REFUSED.items()))
def test_a_url_git_would_misread_or_run_is_refused(url: str, why: str) -> None:
    with pytest.raises(RemoteSetupError, match=why) as raised:
        check_url("origin", url)
    assert raised.value.remote == "origin"


@pytest.mark.parametrize("url", ACCEPTED)
def test_every_form_git_takes_for_a_repository_passes_unchanged(url: str) -> None:
    assert check_url("origin", url) == url


def test_a_refused_url_leaves_the_config_as_it_was(tmp_path: Path) -> None:
    repo = pygit2.init_repository(str(tmp_path / "s.git"), bare=True)
    before = (tmp_path / "s.git" / "config").read_bytes()
    for url in REFUSED:
        with pytest.raises(RemoteSetupError):
            remotes.add(repo, "bad", url)
    assert (tmp_path / "s.git" / "config").read_bytes() == before
    assert remotes.find(repo, "bad") is None


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://ann:s3cret@host/jp.git", "https://ann:***@host/jp.git"),
        ("https://ann:@host/jp.git", "https://ann:***@host/jp.git"),
        ("ssh://git:pw@[::1]:22/jp.git", "ssh://git:***@[::1]:22/jp.git"),
        ("https://host/a:b@c", "https://host/a:b@c"),  # no user part: a path
        ("https://TOKEN@host/jp.git", "https://TOKEN@host/jp.git"),  # a name or a token
        ("git@host:jp.git", "git@host:jp.git"),
        ("/srv/a:b@c.git", "/srv/a:b@c.git"),
    ],
)
def test_a_password_in_a_url_is_hidden_when_shown(url: str, shown: str) -> None:
    assert redact(url) == shown


def test_the_taken_name_error_does_not_show_the_other_urls_password(tmp_path: Path) -> None:
    repo = pygit2.init_repository(str(tmp_path / "s.git"), bare=True)
    remotes.add(repo, "origin", "https://ann:s3cret@host/jp.git")
    with pytest.raises(RemoteSetupError) as raised:
        remotes.add(repo, "origin", "/srv/other.git")
    assert "s3cret" not in str(raised.value)
    assert "https://ann:***@host/jp.git" in str(raised.value)
    assert repo.config["remote.origin.url"] == "https://ann:s3cret@host/jp.git"  # git needs it


def test_git_errors_shown_by_push_and_pull_hide_the_password() -> None:
    said = (
        "fatal: unable to access 'https://ann:s3cret@host/jp.git/': Could not resolve host\n"
        "remote: see https://bob:pw@mirror/x for details\n"
    )
    assert "s3cret" not in command.error_lines(said)
    assert "https://ann:***@host/jp.git/" in command.error_lines(said)
    assert command.remote_said(said) == "see https://bob:***@mirror/x for details"
    assert redact("ssh://host/a:b@c and git@host:x") == "ssh://host/a:b@c and git@host:x"
