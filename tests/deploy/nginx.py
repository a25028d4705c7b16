"""A private nginx running the shipped deploy/nginx/jobsite.conf, for the tests that put it in front of the site
(``bench.nginx``, which ``manage.py loadbench`` runs too)."""

from __future__ import annotations

from bench.nginx import NGINX, SHIPPED, nginx_config

__all__ = ["NGINX", "SHIPPED", "nginx_config"]
