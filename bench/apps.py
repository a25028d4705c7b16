from django.apps import AppConfig


class BenchConfig(AppConfig):
    """Benchmarks that print figures: ``manage.py queuebench`` and ``manage.py workerbench``.

    They measure the project's queue path against a bare driver loop of the same statements,
    on throwaway databases, so they import the queue's statements (``jobs.sql``); ``jobs`` never imports
    this app. It has no models. ``web_load.py`` beside it is a plain script (no Django set-up
    of its own) that loads the web API under gunicorn.
    """

    name = "bench"
    verbose_name = "Benchmarks"
