"""Reading what the site's pages and downloads carry: the form's keys, htmx's header, a CSV."""

from __future__ import annotations

import csv
import io
import re

from django.test import Client

HTMX = {"HX-Request": "true"}


def form_key(response) -> str:
    return re.search(rb'name="idempotency_key" value="([^"]+)"', response.content).group(1).decode()


def csrf_token(client: Client, response) -> str:
    return re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', response.content).group(1).decode()


def read_csv(response) -> list[dict[str, str]]:
    assert response.status_code == 200 and response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith("attachment; filename=")
    text = response.content.decode("utf-8")
    assert text.startswith("\ufeff")  # so spreadsheets read UTF-8 as UTF-8
    return list(csv.DictReader(io.StringIO(text[1:])))
