"""The least a project sets to install the queue: Django's own apps (Django's own user model too),
``jobs``, a SQLite file and the queue as the Tasks backend. No ``JOBS``: every key has its default."""

import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
SECRET_KEY = "standalone-queue-project-only-for-its-test-0123456789abcdefghijklmnop"
DEBUG = False
ALLOWED_HOSTS = ["localhost", "testserver"]
USE_TZ = True

INSTALLED_APPS = [
    "jobs",  # first: its admin templates override the admin's own
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
ROOT_URLCONF = "queueproject.urls"
TEMPLATES = [{
    "BACKEND": "django.template.backends.django.DjangoTemplates",
    "APP_DIRS": True,
    "OPTIONS": {"context_processors": [
        "django.template.context_processors.request",
        "django.contrib.auth.context_processors.auth",
        "django.contrib.messages.context_processors.messages",
    ]},
}]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]

# The queue on SQLite: every write transaction takes the write lock up front (IMMEDIATE), and
# WAL lets readers run beside the writer (the queue's own settings say why, jobsite/settings.py).
DATABASES = {"default": {
    "ENGINE": "django.db.backends.sqlite3",
    "NAME": os.environ["QUEUEPROJECT_DATABASE"],
    "OPTIONS": {"transaction_mode": "IMMEDIATE", "timeout": 5,
                "init_command": "PRAGMA journal_mode=WAL;PRAGMA synchronous=FULL;PRAGMA foreign_keys=ON;"},
}}
MEDIA_ROOT = Path(os.environ["QUEUEPROJECT_DATABASE"]).parent / "documents"

TASKS = {"default": {"BACKEND": "jobs.tasks_backend.QueueBackend", "QUEUES": ["default"], "OPTIONS": {}}}
