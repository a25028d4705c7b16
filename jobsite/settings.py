"""Settings for the job site, read from the environment.

One module for every environment: development, tests and production differ only in
environment variables (``DATABASE_URL``, ``SECRET_KEY``, ``DEBUG``...).
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("JOBSITE_VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


DEBUG = env_bool("DEBUG", False)
SECRET_KEY = os.environ.get("SECRET_KEY") or "insecure-development-key-set-SECRET_KEY-in-production"
ALLOWED_HOSTS = [h for h in os.environ.get("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver").split(",") if h]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "jobs",
    "agent",
    "ops",
    "bench",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "jobs.middleware.ApiErrorsMiddleware",  # JSON errors for API clients; 503 when the store is away
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "jobsite.urls"
WSGI_APPLICATION = "jobsite.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- The durable store -------------------------------------------------------------
# DATABASE_URL picks the store: postgresql://... for many worker hosts, or
# sqlite:////absolute/path.sqlite3. Unset: a SQLite file in the project folder.
#
# SQLite: WAL lets readers (status polls) run beside the single writer; IMMEDIATE makes
# every atomic() block take the write lock up front (the seed's BEGIN IMMEDIATE), so a
# claim never upgrades a read lock and deadlocks; the busy timeout makes a waiting writer
# queue instead of failing at once. synchronous=FULL by default: a 202 promises the job
# survives a power loss, not only a crash of the process (see the README).
SQLITE_SYNCHRONOUS = os.environ.get("SQLITE_SYNCHRONOUS", "FULL").upper()
if SQLITE_SYNCHRONOUS not in {"FULL", "NORMAL"}:
    raise ValueError("SQLITE_SYNCHRONOUS must be FULL or NORMAL")
SQLITE_BUSY_TIMEOUT = float(os.environ.get("SQLITE_BUSY_TIMEOUT", "5"))
# How long a queue writer waits for the fair write lock (jobs.writelock) before it goes on
# with SQLite's own lock alone; part of the busy timeout, never more than half of it.
SQLITE_LOCK_WAIT = min(float(os.environ.get("SQLITE_LOCK_WAIT", "1")), SQLITE_BUSY_TIMEOUT / 2)

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=int(os.environ.get("CONN_MAX_AGE", "60")),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": SQLITE_BUSY_TIMEOUT,
        "init_command": (
            "PRAGMA journal_mode=WAL;"
            f"PRAGMA synchronous={SQLITE_SYNCHRONOUS};"
            "PRAGMA foreign_keys=ON;"
        ),
    }
    # Tests that start real worker processes need a real file they can all open.
    DATABASES["default"]["TEST"] = {
        "NAME": os.environ.get("SQLITE_TEST_NAME") or str(VAR_DIR / "test.sqlite3"),
    }
else:
    # Django's own cursors bind parameters on the client and never prepare; the queue's hot
    # path (claim, complete) binds on the server and prepares its statements once per
    # connection, which psycopg allows only with a threshold set.
    options = DATABASES["default"].setdefault("OPTIONS", {})
    options.setdefault("prepare_threshold", 5)
    # Every wait is bounded, so one stopped or cut-off process costs at most its own jobs:
    # a lock held elsewhere fails the waiter after DB_LOCK_TIMEOUT (the queue's sweeps skip
    # locked rows instead), a runaway statement ends after DB_STATEMENT_TIMEOUT (set it to
    # 0 for a long migration), and the server ends a session left idle inside a transaction
    # (a SIGSTOPped worker) after DB_IDLE_IN_TRANSACTION_TIMEOUT, releasing its row locks.
    options.setdefault("options", " ".join(
        f"-c {name}={os.environ.get(variable, default)}"
        for name, variable, default in (
            ("lock_timeout", "DB_LOCK_TIMEOUT", "5s"),
            ("statement_timeout", "DB_STATEMENT_TIMEOUT", "30s"),
            ("idle_in_transaction_session_timeout", "DB_IDLE_IN_TRANSACTION_TIMEOUT", "15s"),
        )
    ))
    # A dead network path is noticed within a third of a lease, not after the kernel's
    # retransmission timeout (about 15 minutes): TCP keepalives on an idle connection,
    # tcp_user_timeout on one waiting for an answer, and a bounded connect.
    _lease_third_ms = int(float(os.environ.get("JOBS_LEASE_SECONDS", "30")) * 1000 / 3)
    for name, value in (("connect_timeout", 5), ("keepalives", 1), ("keepalives_idle", 5),
                        ("keepalives_interval", 2), ("keepalives_count", 2),
                        ("tcp_user_timeout", _lease_third_ms)):
        options.setdefault(name, value)
# A persistent connection that died (the database restarted) is noticed before a request
# uses it, instead of failing that request with a 503.
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_USER_MODEL = "jobs.User"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "login"
CSRF_FAILURE_VIEW = "jobs.views.csrf_failure"  # the product's JSON or HTML error, not Django's page

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]

# Accepted documents are stored once, named by their SHA-256, never rewritten.
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", VAR_DIR / "documents"))
DATA_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024

# --- The queue ---------------------------------------------------------------------
JOBS = {
    "MAX_ATTEMPTS": 3,
    "DEFAULT_LEASE_SECONDS": float(os.environ.get("JOBS_LEASE_SECONDS", "30")),
    "DEFAULT_DEADLINE_SECONDS": float(os.environ.get("JOBS_DEADLINE_SECONDS", "300")),
    "RETRY_BASE_SECONDS": float(os.environ.get("JOBS_RETRY_BASE_SECONDS", "2")),
    "RETRY_MAX_SECONDS": float(os.environ.get("JOBS_RETRY_MAX_SECONDS", "60")),
    # The diagnostic kind (sleeps, can mark an external start) is for tests and the
    # benchmarks; users are offered it only when this is on.
    "DIAGNOSTIC_KINDS": env_bool("JOBS_DIAGNOSTIC_KINDS", False),
    # Kinds that read user documents run their handler in a child process under hard
    # memory, CPU and time limits (jobs.sandbox). Off only for tests that drive a worker
    # in-process on a logical clock.
    "ISOLATE_HANDLERS": env_bool("JOBS_ISOLATE_HANDLERS", True),
}

# Worker, supervisor and sandbox lines: key=value by default, one JSON object a line with
# JOBS_LOG_FORMAT=json (jobs.logs).
LOG_FORMAT = os.environ.get("JOBS_LOG_FORMAT", "keyvalue").strip().lower()
if LOG_FORMAT not in {"keyvalue", "json"}:
    raise ValueError("JOBS_LOG_FORMAT must be keyvalue or json")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "keyvalue": {"()": "jobs.logs.KeyValueFormatter"},
        "json": {"()": "jobs.logs.JsonFormatter"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT}},
    "loggers": {
        "jobs": {"handlers": ["console"], "level": os.environ.get("JOBS_LOG_LEVEL", "INFO")},
        "agent": {"handlers": ["console"], "level": os.environ.get("JOBS_LOG_LEVEL", "INFO")},
    },
}
