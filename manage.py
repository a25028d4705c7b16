#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "jobsite.settings")
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        settings.INSTALLED_APPS  # noqa: B018  load them here: Django's utility would hide their refusal
    except ImproperlyConfigured as refused:  # behind "Models aren't loaded yet"
        sys.exit(f"manage.py: ImproperlyConfigured: {refused}")

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
