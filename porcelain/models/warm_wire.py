"""What the warm model process and its clients share: where the socket lives,
who may connect, and the frames they exchange.

The socket is ``model-<fingerprint>.sock`` in an owner-only folder: ``jp/`` in
``$XDG_RUNTIME_DIR`` when that is set and is a real directory this user owns
that no one else may write (another user's, as ``su`` or ``sudo -E`` leave it,
is not used), else ``jp-<uid>`` in the temporary folder.  The folder is opened
once, without following a link, and must be a directory owned by this user
with mode 0700 (it is made so through its descriptor); the socket is 0600; each side checks the other's uid
with ``SO_PEERCRED`` where the system has it.  The fingerprint covers this
installation (interpreter, jp's source) and the environment the SDKs read
besides the key, so a process started by another version of jp, or under
another proxy, is never asked.

Frames are a 4-byte big-endian length and a UTF-8 JSON object.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import stat
import struct
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

VERSION = 1
MAX_FRAME = 64 * 1024 * 1024
SOCKET_PREFIX = "model-"
MAX_SOCKET_PATH = 100  # sun_path holds 108 bytes on Linux, 104 on the BSDs
_HEADER = struct.Struct(">I")
# the environment an SDK reads besides the key and the URL (both sent per call)
_ENV_PREFIXES = ("OPENAI_", "ANTHROPIC_", "SSL_", "REQUESTS_CA", "CURL_CA")
_ENV_NAMES = frozenset(
    {
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "NO_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "no_proxy",
    }
)


class WireError(Exception):
    """The other side broke the protocol or hung up."""


def own_runtime_folder(runtime: str) -> bool:
    """``runtime`` is an absolute path to a real directory (not a link) this user
    owns and no one else may write: the XDG runtime folder is the user's own."""
    if not runtime or not Path(runtime).is_absolute():
        return False
    try:
        info = os.lstat(runtime)
    except OSError:
        return False
    return (
        stat.S_ISDIR(info.st_mode)
        and info.st_uid == os.getuid()
        and not stat.S_IMODE(info.st_mode) & 0o022
    )


def folder(environ: Mapping[str, str]) -> Path:
    runtime = environ.get("XDG_RUNTIME_DIR", "")
    if own_runtime_folder(runtime):
        return Path(runtime) / "jp"
    return Path(tempfile.gettempdir()) / f"jp-{os.getuid()}"


def private_folder(environ: Mapping[str, str], create: bool = True) -> Path | None:
    """The socket folder, made owner-only; None when it is not safe to use.

    It is opened once without following a link, and checked and made 0700
    through that descriptor, so no path is reused by name in between."""
    path = folder(environ)
    if create:
        try:
            path.mkdir(mode=0o700, exist_ok=True)
        except OSError:
            return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            return None
        if stat.S_IMODE(info.st_mode) & 0o077:
            os.fchmod(fd, 0o700)
    except OSError:
        return None
    finally:
        os.close(fd)
    return path


def fingerprint(secrets: frozenset[str], environ: Mapping[str, str]) -> str:
    """This installation and the SDK-relevant environment, less the secrets."""
    here = Path(__file__).resolve().parent
    digest = hashlib.sha256(f"{VERSION}\0{sys.executable}\0{here}".encode())
    for source in sorted(here.glob("*.py")):
        try:
            digest.update(f"\0{source.name}:{source.stat().st_mtime_ns}".encode())
        except OSError:
            continue
    for name in sorted(environ):
        if name in secrets or not (name in _ENV_NAMES or name.startswith(_ENV_PREFIXES)):
            continue
        digest.update(f"\0{name}={environ[name]}".encode())
    return digest.hexdigest()[:16]


def socket_path(base: Path, print_: str) -> Path | None:
    path = base / f"{SOCKET_PREFIX}{print_}.sock"
    return path if len(os.fsencode(path)) <= MAX_SOCKET_PATH else None


def _peer(sock: socket.socket) -> tuple[int, int] | None:
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    except OSError:
        return None
    pid, uid, _ = struct.unpack("3i", raw)
    return int(pid), int(uid)


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end, where the system tells it."""
    peer = _peer(sock)
    return None if peer is None else peer[1]


def peer_pid(sock: socket.socket) -> int | None:
    """The pid of the process at the other end, where the system tells it."""
    peer = _peer(sock)
    return None if peer is None or peer[0] <= 0 else peer[0]


def trusted_peer(sock: socket.socket) -> bool:
    uid = peer_uid(sock)
    return uid is None or uid == os.getuid()


def send(sock: socket.socket, message: Mapping[str, Any]) -> None:
    data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()
    sock.sendall(_HEADER.pack(len(data)) + data)


def _exactly(sock: socket.socket, size: int) -> bytes:
    chunks: list[bytes] = []
    while size:
        chunk = sock.recv(min(size, 1 << 20))
        if not chunk:
            raise WireError("the other side hung up")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def receive(sock: socket.socket) -> dict[str, Any]:
    (size,) = _HEADER.unpack(_exactly(sock, _HEADER.size))
    if size > MAX_FRAME:
        raise WireError(f"a frame of {size} bytes")
    try:
        message = json.loads(_exactly(sock, size))
    except ValueError as exc:
        raise WireError(f"a frame that is not JSON: {exc}") from None
    if not isinstance(message, dict):
        raise WireError("a frame that is not an object")
    return message
