"""Smart HTTP: ``git http-backend`` behind nginx and fcgiwrap on a free loopback
port, every repository under ``root`` exported (``GIT_HTTP_EXPORT_ALL``), pushes
allowed (``http.receivepack``) and the client's ``Git-Protocol`` header passed
on as ``GIT_PROTOCOL``, so protocol v2 works."""

from __future__ import annotations

import os
import pwd
import subprocess
import time
from pathlib import Path

from tests.support.servers.base import (
    LOOPBACK,
    START_TIMEOUT,
    Group,
    ServerUnavailable,
    free_port,
    program,
    server_gitconfig,
)

CREDENTIALS = ("tess", "not-a-secret")
# what nginx hands fcgiwrap for each request: `git http-backend` and its variables
BACKEND = """\
            fastcgi_pass unix:{run}/fcgi.sock;
            fastcgi_read_timeout 300s;
            fastcgi_param SCRIPT_FILENAME {backend};
            fastcgi_param PATH_INFO $1;
            fastcgi_param QUERY_STRING $query_string;
            fastcgi_param REQUEST_METHOD $request_method;
            fastcgi_param CONTENT_TYPE $content_type;
            fastcgi_param CONTENT_LENGTH $content_length;
            fastcgi_param REMOTE_ADDR $remote_addr;
            fastcgi_param GIT_PROTOCOL $http_git_protocol;
            fastcgi_param GIT_PROJECT_ROOT {project};
            fastcgi_param GIT_HTTP_EXPORT_ALL 1;
            fastcgi_param GIT_CONFIG_NOSYSTEM 1;
            fastcgi_param GIT_CONFIG_GLOBAL {run}/server.gitconfig;
            fastcgi_param HOME {run};
            fastcgi_param PATH /usr/bin:/bin;
"""
NGINX = """\
daemon off;
master_process on;
worker_processes 2;
{user}
pid {run}/nginx.pid;
error_log {run}/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log off;
    client_body_temp_path {run}/body;
    fastcgi_temp_path {run}/fastcgi;
    proxy_temp_path {run}/proxy;
    uwsgi_temp_path {run}/uwsgi;
    scgi_temp_path {run}/scgi;
    client_max_body_size 0;
    server {{
        listen {host}:{port};
        location ~ ^/git(/.*)$ {{
{fastcgi}        }}
        # the same repositories as plain files: git's dumb HTTP (no upload-pack)
        location /dumb/ {{
            alias {project}/;
        }}
        # the same repositories behind a password (CREDENTIALS)
        location ~ ^/private/git(/.*)$ {{
            auth_basic "jp tests";
            auth_basic_user_file {run}/htpasswd;
            fastcgi_param REMOTE_USER $remote_user;
{fastcgi}        }}
    }}
}}
"""


def _backend() -> str:
    proc = subprocess.run(["git", "--exec-path"], capture_output=True, text=True, check=True)
    path = Path(proc.stdout.strip()) / "git-http-backend"
    if not path.exists():
        raise ServerUnavailable(f"git has no http-backend at {path}")
    return str(path)


class HttpServer:
    kind = "http"

    def __init__(self, run: Path, project: Path) -> None:
        self.run = run
        self.project = project.resolve()  # every repository served lives under it
        self.port = 0
        self.fcgi = Group(run / "fcgiwrap.log")
        self.group = Group(run / "nginx.log")

    def start(self) -> HttpServer:
        nginx, fcgiwrap = program("nginx"), program("fcgiwrap")
        fastcgi = BACKEND.format(run=self.run, backend=_backend(), project=self.project)
        self.run.mkdir(parents=True, exist_ok=True)
        server_gitconfig(self.run / "server.gitconfig")
        user_name, password = CREDENTIALS
        (self.run / "htpasswd").write_text(f"{user_name}:{{PLAIN}}{password}\n")
        sock = self.run / "fcgi.sock"
        self.fcgi.spawn([fcgiwrap, "-c", "4", "-s", f"unix:{sock}"])
        self._wait_socket(sock)
        # nginx started by root runs its workers as this same user (not nobody),
        # who owns the repositories and the socket
        user = f"user {pwd.getpwuid(os.geteuid()).pw_name};" if os.geteuid() == 0 else ""
        for _ in range(5):  # another worker may take the free port first
            self.port = free_port()
            conf = self.run / "nginx.conf"
            conf.write_text(
                NGINX.format(
                    user=user,
                    run=self.run,
                    host=LOOPBACK,
                    port=self.port,
                    fastcgi=fastcgi,
                    project=self.project,
                )
            )
            argv = [nginx, "-p", str(self.run), "-e", str(self.run / "error.log"), "-c", str(conf)]
            self.group.spawn(argv)
            try:
                self.group.wait_for(self.port, "nginx")
                break
            except ServerUnavailable:
                self.group.stop()
        else:
            self.fcgi.stop()
            raise ServerUnavailable(f"nginx would not start: {self.group.tail()}")
        return self

    def _wait_socket(self, sock: Path) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while not sock.exists():
            if time.monotonic() > deadline or any(p.poll() is not None for p in self.fcgi.procs):
                self.fcgi.stop()
                raise ServerUnavailable(f"fcgiwrap did not start: {self.fcgi.tail()}")
            time.sleep(0.05)

    def stop(self) -> None:
        self.group.stop()
        self.fcgi.stop()

    def url(self, path: Path) -> str:
        rest = path.resolve().relative_to(self.project)
        return f"http://{LOOPBACK}:{self.port}/git/{rest.as_posix()}"

    def dumb_url(self, path: Path) -> str:
        """The same repository served as files (git's dumb HTTP: it must hold the
        ``info/refs`` that ``git update-server-info`` writes)."""
        return self.url(path).replace("/git/", "/dumb/", 1)

    def private_url(self, path: Path) -> str:
        """The same repository where the server asks for ``CREDENTIALS``."""
        return self.url(path).replace("/git/", "/private/git/", 1)

    def env(self) -> dict[str, str]:
        return {}
