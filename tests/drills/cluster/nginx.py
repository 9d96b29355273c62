"""compose.yaml's nginx configuration, rendered for loopback ports, and nginx as a process.

The ``server`` block and the ``upstream`` are compose.yaml's ``configs.nginx.content`` as written,
so the drill tests the real directives (retries, timeouts, the replaced ``X-Forwarded-For``); only
the addresses change: each ``server api-N:8000`` becomes ``127.0.0.1:<port of instance N>`` and
``listen 8000`` becomes ``listen 127.0.0.1:<port>``. Compose's ``$$`` escape is undone.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import yaml

from tests.drills.cluster.process import Proc

ROOT = Path(__file__).resolve().parents[3]
COMPOSE = ROOT / "compose.yaml"


def compose_config() -> str:
    """compose.yaml's ``configs.nginx.content``, with compose's ``$$`` escape undone."""
    document: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    content = str(document["configs"]["nginx"]["content"])
    return content.replace("$$", "$")


def server_block(upstreams: list[int], port: int) -> str:
    """The compose configuration with loopback addresses (see the module docs).

    Raises:
        ValueError: the configuration no longer has the upstream servers or the listen line the
            drill substitutes (compose.yaml changed shape).
    """
    content = compose_config()
    names = re.findall(r"server (api-\d+):8000", content)
    if len(names) != len(upstreams):
        raise ValueError(f"compose.yaml's nginx config names {names}, the drill runs {len(upstreams)} instances")
    for name, upstream in zip(names, upstreams, strict=True):
        content = content.replace(f"server {name}:8000", f"server 127.0.0.1:{upstream}")
    content, listens = re.subn(r"listen 8000;", f"listen 127.0.0.1:{port};", content)
    if listens != 1:
        raise ValueError("compose.yaml's nginx config has no 'listen 8000;'")
    return content


def main_config(directory: Path, upstreams: list[int], port: int) -> str:
    """A whole nginx.conf around :func:`server_block`: in the foreground, everything under ``directory``."""
    temp = directory / "temp"
    return "\n".join(
        [
            "daemon off;",
            "master_process on;",
            "worker_processes 1;",
            "user root;",  # (the drill runs as root; its prefix is a private temp dir)
            f"pid {directory / 'nginx.pid'};",
            f"error_log {directory / 'error.log'} warn;",
            "events { worker_connections 1024; }",
            "http {",
            f"  access_log {directory / 'access.log'};",
            f"  client_body_temp_path {temp / 'body'};",
            f"  proxy_temp_path {temp / 'proxy'};",
            f"  fastcgi_temp_path {temp / 'fastcgi'};",
            f"  uwsgi_temp_path {temp / 'uwsgi'};",
            f"  scgi_temp_path {temp / 'scgi'};",
            server_block(upstreams, port),
            "}",
            "",
        ]
    )


def nginx_binary() -> str | None:
    """Debian's nginx, if installed."""
    return shutil.which("nginx") or (str(Path("/usr/sbin/nginx")) if Path("/usr/sbin/nginx").exists() else None)


def nginx_proc(directory: Path, upstreams: list[int], port: int) -> Proc:
    """nginx on ``port`` in front of ``upstreams``, its prefix and configuration in ``directory``."""
    binary = nginx_binary()
    if binary is None:
        raise RuntimeError("nginx is not installed (apt-get install nginx)")
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "temp").mkdir(exist_ok=True)
    conf = directory / "nginx.conf"
    conf.write_text(main_config(directory, upstreams, port))
    argv = [binary, "-p", str(directory), "-c", str(conf), "-e", str(directory / "error.log")]
    return Proc("nginx", argv, {"PATH": "/usr/sbin:/usr/bin:/bin"}, directory / "nginx.out")
