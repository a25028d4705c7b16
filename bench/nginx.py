"""A private nginx running the shipped deploy/nginx/jobsite.conf on loopback (its own prefix,
temporary folders, pid and logs): the system's nginx is never started or touched."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
SHIPPED = ROOT / "deploy" / "nginx" / "jobsite.conf"


def nginx_config(workdir: Path, *, upstream_port: int, http_port: int, https_port: int, cert: Path, key: Path,
                 root: Path = ROOT) -> Path:
    """The shipped site file with this run's ports, paths and certificate, in a private nginx.conf."""
    site = SHIPPED.read_text()
    substitutions = [
        ("listen 80;", f"listen 127.0.0.1:{http_port};"),
        ("listen [::]:80;", ""),
        ("listen 443 ssl http2;", f"listen 127.0.0.1:{https_port} ssl http2;"),
        ("listen [::]:443 ssl http2;", ""),
        ("/etc/letsencrypt/live/jobs.example.com/fullchain.pem", str(cert)),
        ("/etc/letsencrypt/live/jobs.example.com/privkey.pem", str(key)),
        ("127.0.0.1:8000", f"127.0.0.1:{upstream_port}"),
        ("/srv/jobsite", str(root)),
    ]
    for old, new in substitutions:
        if old not in site:
            raise RuntimeError(f"deploy/nginx/jobsite.conf no longer contains {old!r}: update bench/nginx.py")
        site = site.replace(old, new)
    (workdir / "jobsite.conf").write_text(site)
    for name in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (workdir / name).mkdir(exist_ok=True)
    # As root, nginx's workers would switch to "nobody", who cannot enter a 0700 temporary
    # folder: keep them as the user running the tests or the benchmark.
    user = "user root;" if os.geteuid() == 0 else ""
    main = f"""
{user}
worker_processes 1;
pid {workdir}/nginx.pid;
error_log {workdir}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log {workdir}/access.log;
    client_body_temp_path {workdir}/body;
    proxy_temp_path {workdir}/proxy;
    fastcgi_temp_path {workdir}/fastcgi;
    uwsgi_temp_path {workdir}/uwsgi;
    scgi_temp_path {workdir}/scgi;
    include {workdir}/jobsite.conf;
}}
"""
    conf = workdir / "nginx.conf"
    conf.write_text(main)
    return conf
