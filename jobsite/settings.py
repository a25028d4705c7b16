"""Settings for the job site, read from the environment.

One module for every environment: development, tests and production differ only in
environment variables (``DATABASE_URL``, ``SECRET_KEY``, ``DEBUG``...).
"""

from __future__ import annotations

import json
import os
import sys
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import dj_database_url
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

if TYPE_CHECKING:
    from collections.abc import Callable

    from django.http import HttpRequest

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("JOBSITE_VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)


def is_on(value: str) -> bool:
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    return default if value is None else is_on(value)


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DEBUG = env_bool("DEBUG", False)
# What this process is: "web" when jobsite/wsgi.py or asgi.py loads the settings (they set
# JOBSITE_PROCESS=web first); anything else (runworkers, manage.py, tests) is not. The web's
# database timeouts are its own (see DATABASES).
WEB_PROCESS = os.environ.get("JOBSITE_PROCESS", "") == "web"

# --- The secret key: production fails closed ---------------------------------------
# With DEBUG on and no SECRET_KEY, a development key is used. It carries Django's
# "django-insecure-" prefix, so `check --deploy` names it. With DEBUG off, start-up stops
# unless SECRET_KEY is set to a key of this deployment's own: anyone holding a published
# key can forge sessions, password-reset links and signed cookies (messages).
DEVELOPMENT_SECRET_KEY = "django-insecure-development-key-never-use-it-with-DEBUG-off"  # noqa: S105  refused with DEBUG off
PUBLISHED_SECRET_KEYS = {
    DEVELOPMENT_SECRET_KEY,
    "insecure-development-key-set-SECRET_KEY-in-production",  # the key earlier versions shipped
}
SECRET_KEY = os.environ.get("SECRET_KEY", "").strip()
# Writing migrations reads the models and signs nothing, so ``manage.py makemigrations`` runs
# with any key or none (a deployment's tooling checks its models against its migrations
# without holding its secret). Every other process, the web's and the workers' first, refuses.
SIGNS_NOTHING = {"makemigrations"}
COMMAND = sys.argv[1] if len(sys.argv) > 1 and Path(sys.argv[0]).name in {"manage.py", "__main__.py"} else ""
KEY_REQUIRED = not DEBUG and COMMAND not in SIGNS_NOTHING
if KEY_REQUIRED and not SECRET_KEY:
    raise ImproperlyConfigured(
        "SECRET_KEY is not set and DEBUG is off: set SECRET_KEY to a long random value of this "
        "deployment's own, e.g. python -c 'import secrets; print(secrets.token_urlsafe(50))' "
        "(or set DEBUG=1 for development)."
    )
if KEY_REQUIRED and (SECRET_KEY in PUBLISHED_SECRET_KEYS or SECRET_KEY.startswith("django-insecure-")):
    raise ImproperlyConfigured(
        "SECRET_KEY is a published development key and DEBUG is off: set SECRET_KEY to a long "
        "random value of this deployment's own (or set DEBUG=1 for development)."
    )
# Django's own bar for a key (check --deploy's security.W009): at least 50 characters and 5
# distinct ones. A key under it ("x", "changeme") can be guessed, and everything it signs forged.
SECRET_KEY_MIN_LENGTH, SECRET_KEY_MIN_UNIQUE_CHARACTERS = 50, 5
too_weak = len(SECRET_KEY) < SECRET_KEY_MIN_LENGTH or len(set(SECRET_KEY)) < SECRET_KEY_MIN_UNIQUE_CHARACTERS
if KEY_REQUIRED and too_weak:
    raise ImproperlyConfigured(
        f"SECRET_KEY is too short or too simple and DEBUG is off (at least {SECRET_KEY_MIN_LENGTH} characters, "
        f"{SECRET_KEY_MIN_UNIQUE_CHARACTERS} of them different): set SECRET_KEY to a long random value of this "
        "deployment's own, e.g. python -c 'import secrets; print(secrets.token_urlsafe(50))'."
    )
SECRET_KEY = SECRET_KEY or DEVELOPMENT_SECRET_KEY
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

# --- HTTPS behind the proxy of deploy/ ---------------------------------------------
# BEHIND_PROXY: requests come only through nginx (deploy/nginx/jobsite.conf), which sets
# X-Forwarded-Proto and X-Real-IP itself, so both may be trusted. HTTPS: the site is served
# over HTTPS only (redirect, HSTS, cookies that never travel in clear). Both default off
# for development and loopback tests; a production deployment sets HTTPS=1 (which implies
# BEHIND_PROXY unless it is set to 0, e.g. for gunicorn serving TLS itself).
HTTPS = env_bool("HTTPS", False)
BEHIND_PROXY = env_bool("BEHIND_PROXY", HTTPS)
if BEHIND_PROXY:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = HTTPS
SESSION_COOKIE_SECURE = HTTPS
CSRF_COOKIE_SECURE = HTTPS
SECURE_HSTS_SECONDS = int(os.environ.get("HSTS_SECONDS", "31536000")) if HTTPS else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("HSTS_PRELOAD", True)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

INSTALLED_APPS = [
    # The queue first: its templates (jobs/templates/admin/) override the admin's own, the
    # index's staff landing among them.
    "jobs",  # the queue: jobs, their states, the workers, staff triage
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "csp",
    "axes",
    "django_htmx",
    "template_partials",
    "accounts",  # tenants, their members and API tokens: who submits jobs, for which tenant
    "providers",  # the model provider's budget: its calls in flight at once on every host, its 429's hold
    "documents",  # the jobs' documents: their store, each job's document row, the kinds that take one
    "web",  # the product's pages and JSON API over the queue
    "agent",
    "suppliers",  # the tenant's supplier register: read at review, learnt from handled documents
    "ops",
    "bench",
    "mailin",  # inbound e-mail: each team's address, the mailbox read by a queue job
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "web.middleware.SecurityHeadersMiddleware",  # Permissions-Policy
    "django_htmx.middleware.HtmxMiddleware",  # request.htmx, for every middleware after it
    "web.middleware.ApiErrorsMiddleware",  # JSON errors for API clients; 503 when the store is away
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "axes.middleware.AxesMiddleware",  # last: turns a lockout into the login page with its message
]

# --- Content-Security-Policy, on in every environment ------------------------------
# Scripts and styles come only from this site's static files: no inline <script>, <style>,
# style= or on*= attributes, no eval (htmx is configured without it in _base.html's meta
# tag, and without the <style> it would inject for its indicators: static/site.css has them).
# Being on in development and tests too means a page that breaks under it breaks everywhere.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF],
        "connect-src": [SELF],
        "font-src": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
        "base-uri": [NONE],
        "object-src": [NONE],
    },
}

# --- Permissions-Policy, on every response (web.middleware.SecurityHeadersMiddleware) ----
# The site uses none of these powerful features: a page (or anything injected into one) may
# not ask for them. deploy/nginx/jobsite.conf sends the same header on what nginx serves.
PERMISSIONS_POLICY = ", ".join(f"{feature}=()" for feature in (
    "accelerometer", "camera", "display-capture", "geolocation", "gyroscope", "magnetometer",
    "microphone", "midi", "payment", "usb",
))

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
# every atomic() block take the write lock up front (BEGIN IMMEDIATE), so a
# claim never upgrades a read lock and deadlocks; the busy timeout makes a waiting writer
# queue instead of failing at once. synchronous=FULL by default: a 202 promises the job
# survives a power loss, not only a crash of the process (README.md, Durability).
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
    # A web process has no lease to keep, only a person or a client waiting, holding one of
    # a few sync workers: it gives up within 2 s and answers 503 (web.middleware), so a
    # host cut off from the database keeps serving what it can. A worker's first request
    # after a cut pays twice: the health check of its persistent connection (the TCP user
    # timeout, 0.5 s) and then a new connection, whose lost SYN the kernel times out at its
    # first retransmission, 1 s in (the user timeout applies to the connect too): 1.5 s
    # (tests/partition/test_web_cut.py). A 1 s user timeout made that 1.9-2.1 s. The user
    # timeout bounds only how long sent data may go unacknowledged, never a slow query.
    # The connect timeout, 2 s (the least libpq and psycopg honour: a 1 would mean 2),
    # bounds a server that takes the connection and then says nothing.
    _lease_third_ms = int(float(os.environ.get("JOBS_LEASE_SECONDS", "30")) * 1000 / 3)
    if WEB_PROCESS:
        _connect_s = int(os.environ.get("DB_WEB_CONNECT_TIMEOUT", "2"))
        _answer_ms = int(os.environ.get("DB_WEB_TCP_USER_TIMEOUT_MS", "500"))
    else:
        _connect_s, _answer_ms = 5, _lease_third_ms
    for name, value in (("connect_timeout", _connect_s), ("keepalives", 1), ("keepalives_idle", 5),
                        ("keepalives_interval", 2), ("keepalives_count", 2),
                        ("tcp_user_timeout", _answer_ms)):
        options.setdefault(name, value)
# A persistent connection that died (the database restarted) is noticed before a request
# uses it, instead of failing that request with a 503.
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_USER_MODEL = "accounts.User"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# --- Login throttling (django-axes) ------------------------------------------------
# Failed logins are counted per username *from one address*: LOGIN_FAILURE_LIMIT of them
# lock that username from that address only, so a colleague's typos (or an attacker who
# knows a username) lock out neither the rest of an office behind the same NAT nor the user
# from elsewhere. An address is locked across all usernames only at LOGIN_ADDRESS_FAILURE_LIMIT
# (jobsite.throttling), which stops one address spraying many accounts. A lock lasts until
# LOGIN_COOLOFF_MINUTES pass after its last failure; the login page says so with status 429;
# staff see and lift lockouts in the admin (Axes: access attempts). A success does not
# reset the counts: deleting by address would also wipe an attacker's failures against
# other accounts from that address whenever he logs in to his own.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # refuses a locked-out login before checking the password
    "django.contrib.auth.backends.ModelBackend",
]
AXES_HANDLER = "jobsite.throttling.OfficeFriendlyHandler"
AXES_FAILURE_LIMIT = int(os.environ.get("LOGIN_FAILURE_LIMIT", "10"))
LOGIN_ADDRESS_FAILURE_LIMIT = int(os.environ.get("LOGIN_ADDRESS_FAILURE_LIMIT", str(10 * AXES_FAILURE_LIMIT)))
if not 0 < AXES_FAILURE_LIMIT <= LOGIN_ADDRESS_FAILURE_LIMIT:
    raise ImproperlyConfigured("LOGIN_FAILURE_LIMIT must be positive and LOGIN_ADDRESS_FAILURE_LIMIT at least as large")
AXES_COOLOFF_TIME = timedelta(minutes=float(os.environ.get("LOGIN_COOLOFF_MINUTES", "15")))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = False
AXES_LOCKOUT_TEMPLATE = "registration/login.html"
AXES_HTTP_RESPONSE_CODE = 429


def client_ip_address(request: HttpRequest) -> str | None:
    """The client's address: behind the proxy, the X-Real-IP nginx sets (it overwrites any
    the client sent); otherwise the socket's peer. Used by the login throttling."""
    from django.conf import settings

    if settings.BEHIND_PROXY and request.META.get("HTTP_X_REAL_IP"):
        real: str = request.META["HTTP_X_REAL_IP"]
        return real
    peer: str | None = request.META.get("REMOTE_ADDR")
    return peer


AXES_CLIENT_IP_CALLABLE = client_ip_address
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "jobs"  # members; staff land on the triage list (web.views.LoginView)
LOGOUT_REDIRECT_URL = "login"
CSRF_FAILURE_VIEW = "web.views.csrf_failure"  # the product's JSON or HTML error, not Django's page

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

# Where accepted documents and their page images are kept (documents.store): the storage
# "documents". "filesystem" (the default): files under MEDIA_ROOT, for one host. "s3": an
# S3-compatible object store every host reaches (django-storages on boto3; pip install
# '.[s3]'; documents.object_store), checked at start-up (documents.store.check_settings). docs/operations.md.
DOCUMENTS = {
    "STORE": os.environ.get("DOCUMENTS_STORE", "filesystem").strip().lower(),
    "ENDPOINT": os.environ.get("DOCUMENTS_S3_ENDPOINT", "").strip(),
    "BUCKET": os.environ.get("DOCUMENTS_S3_BUCKET", "").strip(),
    "PREFIX": os.environ.get("DOCUMENTS_S3_PREFIX", "").strip().strip("/"),
    "ACCESS_KEY": os.environ.get("DOCUMENTS_S3_ACCESS_KEY", ""),
    "SECRET_KEY": os.environ.get("DOCUMENTS_S3_SECRET_KEY", ""),
    "REGION": os.environ.get("DOCUMENTS_S3_REGION", "us-east-1").strip(),
    "ADDRESSING": os.environ.get("DOCUMENTS_S3_ADDRESSING", "path").strip().lower(),
    "ENCRYPTION": os.environ.get("DOCUMENTS_S3_ENCRYPTION", "").strip(),  # "", AES256, aws:kms
    "KMS_KEY_ID": os.environ.get("DOCUMENTS_S3_KMS_KEY_ID", "").strip(),
    "CONNECT_TIMEOUT": os.environ.get("DOCUMENTS_S3_CONNECT_TIMEOUT", "3"),
    "READ_TIMEOUT": os.environ.get("DOCUMENTS_S3_READ_TIMEOUT", "10"),
    # How long a job waits when the store cannot be reached (deferred: no attempt spent).
    "RETRY_SECONDS": os.environ.get("DOCUMENTS_RETRY_SECONDS", "10"),
}
STORAGES: dict[str, dict[str, Any]] = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    # No "location": it follows MEDIA_ROOT, as before.
    "documents": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
}
if DOCUMENTS["STORE"] == "s3":
    STORAGES["documents"] = {"BACKEND": "documents.object_store.DocumentStorage", "OPTIONS": {
        "bucket_name": DOCUMENTS["BUCKET"], "endpoint_url": DOCUMENTS["ENDPOINT"] or None,
        "access_key": DOCUMENTS["ACCESS_KEY"] or None, "secret_key": DOCUMENTS["SECRET_KEY"] or None,
        "region_name": DOCUMENTS["REGION"] or None, "addressing_style": DOCUMENTS["ADDRESSING"],
        "location": DOCUMENTS["PREFIX"], "file_overwrite": True, "querystring_auth": False,
        "connect_timeout": DOCUMENTS["CONNECT_TIMEOUT"], "read_timeout": DOCUMENTS["READ_TIMEOUT"],
        "object_parameters": {k: v for k, v in (("ServerSideEncryption", DOCUMENTS["ENCRYPTION"]),
                                                ("SSEKMSKeyId", DOCUMENTS["KMS_KEY_ID"])) if v},
    }}

# --- Tenants' webhooks (agent.inbox.webhooks) ----------------------------------------------
# Deliveries go only to http(s) URLs whose addresses are public: a tenant's URL must not reach
# into our own network (SSRF: loopback, private, link-local such as cloud metadata). Tests and
# the demo allow them with WEBHOOKS_ALLOW_PRIVATE=1 (on by default with DEBUG).
WEBHOOKS = {
    "ALLOW_PRIVATE": env_bool("WEBHOOKS_ALLOW_PRIVATE", DEBUG),
    # The site's address as receivers reach it: the events' status_url starts with it.
    "SITE_URL": os.environ.get("WEBHOOKS_SITE_URL", "http://127.0.0.1:8000").rstrip("/"),
    # The whole request (connect, TLS, sending it, the answer's headers), not each read.
    "TIMEOUT_SECONDS": float(os.environ.get("WEBHOOKS_TIMEOUT_SECONDS", "10")),
    # The webhook.catchup job: every so many minutes, the deliveries missing for the reviews
    # completed within the window (a worker died between a completion and its follow-up).
    "CATCHUP_EVERY_MINUTES": float(os.environ.get("WEBHOOKS_CATCHUP_EVERY_MINUTES", "5")),
    "CATCHUP_WINDOW_MINUTES": float(os.environ.get("WEBHOOKS_CATCHUP_WINDOW_MINUTES", "60")),
}

# --- Inbound e-mail (mailin) -----------------------------------------------------------
# One mailbox receives every team's mail at a tagged form of MAILIN_ADDRESS
# (invoices+acme.k3m9x2bq7t@example.com); `manage.py runmailin` queues a fetch of it every
# MAILIN_EVERY_SECONDS, which the workers run. Off while MAILIN_IMAP_HOST is empty.
MAILIN = {
    "ADDRESS": os.environ.get("MAILIN_ADDRESS", "invoices@docket.invalid"),
    "IMAP_HOST": os.environ.get("MAILIN_IMAP_HOST", ""),
    "IMAP_PORT": int(os.environ.get("MAILIN_IMAP_PORT", "993")),
    "IMAP_SECURITY": os.environ.get("MAILIN_IMAP_SECURITY", "ssl"),  # ssl, starttls, or plain (loopback only)
    "IMAP_USER": os.environ.get("MAILIN_IMAP_USER", ""),
    "IMAP_PASSWORD": os.environ.get("MAILIN_IMAP_PASSWORD", ""),
    "FOLDER": os.environ.get("MAILIN_FOLDER", "INBOX"),
    "PROCESSED_FOLDER": os.environ.get("MAILIN_PROCESSED_FOLDER", "Processed"),
    "REJECTED_FOLDER": os.environ.get("MAILIN_REJECTED_FOLDER", "Rejected"),
    "EVERY_SECONDS": float(os.environ.get("MAILIN_EVERY_SECONDS", "60")),
    "BATCH": int(os.environ.get("MAILIN_BATCH", "50")),
    "MAX_MESSAGE_BYTES": int(os.environ.get("MAILIN_MAX_MESSAGE_BYTES", str(32 * 1024 * 1024))),
    "TIMEOUT_SECONDS": float(os.environ.get("MAILIN_TIMEOUT_SECONDS", "30")),
}

# --- The queue ---------------------------------------------------------------------
# jobs.conf.DEFAULTS holds every key of JOBS, its default and what it means; this site sets only
# what its environment changes, each key from the variable named beside it. The queue's code
# reads them through jobs.conf.queue_settings(): typed, and checked at start-up.
_JOBS_FROM_ENVIRONMENT: dict[str, tuple[str, Callable[[str], Any]]] = {
    "JOBS_LEASE_SECONDS": ("DEFAULT_LEASE_SECONDS", float),
    "JOBS_DEADLINE_SECONDS": ("DEFAULT_DEADLINE_SECONDS", float),
    "JOBS_EXPECTED_WAIT_SECONDS": ("EXPECTED_WAIT_SECONDS", float),
    "JOBS_RETRY_BASE_SECONDS": ("RETRY_BASE_SECONDS", float),
    "JOBS_RETRY_MAX_SECONDS": ("RETRY_MAX_SECONDS", float),
    "JOBS_DIAGNOSTIC_KINDS": ("DIAGNOSTIC_KINDS", is_on),
    "JOBS_ISOLATE_HANDLERS": ("ISOLATE_HANDLERS", is_on),
    # JOBS_KIND_LIMITS='{"document_review": {"memory_mb": 1024, "cpu_seconds": 120}}'
    "JOBS_KIND_LIMITS": ("KIND_LIMITS", lambda value: json.loads(value or "{}")),
    # JOBS_KIND_MAX_RUNNING='{"webhook.deliver": 2, "document_review": null}' (null: no limit)
    "JOBS_KIND_MAX_RUNNING": ("KIND_MAX_RUNNING", lambda value: json.loads(value or "{}")),
    "JOBS_FAIR_CLAIMS": ("FAIR_CLAIMS", is_on),  # 0: first come, first served (to measure what fairness costs)
    "JOBS_TENANT_MAX_WAITING": ("SCOPE_MAX_WAITING", int),  # a tenant is a scope of the queue
    "JOBS_PREFETCH": ("PREFETCH", int),
    # Reviews yield the CPU to requests on a host that serves both (docs/decisions.md, "Reviews yield").
    "JOBS_HANDLER_NICE": ("HANDLER_NICE", int),
    "JOBS_PREFETCH_WINDOW": ("PREFETCH_WINDOW_SECONDS", float),
    "JOBS_COMPLETION_BATCH": ("COMPLETION_BATCH", int),
    "JOBS_COMPLETION_FLUSH_MS": ("COMPLETION_FLUSH_MS", float),
}
JOBS = {key: read(os.environ[name]) for name, (key, read) in _JOBS_FROM_ENVIRONMENT.items() if name in os.environ}

# --- The model provider's budget (providers) ---------------------------------------------
# Calls to the model provider in flight at once, across all workers and hosts (providers.budget).
# JOBS_PROVIDER_SLOTS, its name while the queue kept the budget, still sets it.
PROVIDER_SLOTS = int(os.environ.get("PROVIDER_SLOTS") or os.environ.get("JOBS_PROVIDER_SLOTS") or "4")

# --- Django's Tasks framework --------------------------------------------------------
# A module-level @task function's .enqueue() commits a job of kind "task" that runworkers runs
# (jobs.tasks_backend); get_result(id) reads it back. OPTIONS: SCOPE, MAX_ATTEMPTS, DEADLINE,
# OUTSIDE_EFFECTS (see docs/tasks.md).
TASKS = {
    "default": {
        "BACKEND": "jobs.tasks_backend.QueueBackend",
        "QUEUES": ["default"],
        "OPTIONS": {},
    },
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
        # Django logs to the console only with DEBUG on; in production a 500's traceback
        # must still reach the process's log (gunicorn's stderr).
        "django": {"handlers": ["console"], "level": "ERROR", "propagate": False},
        "jobs": {"handlers": ["console"], "level": os.environ.get("JOBS_LOG_LEVEL", "INFO")},
        "agent": {"handlers": ["console"], "level": os.environ.get("JOBS_LOG_LEVEL", "INFO")},
        "mailin": {"handlers": ["console"], "level": os.environ.get("JOBS_LOG_LEVEL", "INFO")},
        # pypdf warns once per unreadable token of a damaged PDF: 100,000 lines (and 1.3 s of
        # CPU) for one hostile upload. Its errors still reach the log; the document's own
        # refusal says what is wrong with it.
        "pypdf": {"handlers": ["console"], "level": "ERROR", "propagate": False},
    },
}

# --- Email (agent.inbox.notifications) ----------------------------------------------------------
# Submitters get a digest (a batch finished, documents needing their action), at most one per
# their chosen minutes; triage staff get one when jobs start needing a human. Sent over SMTP to
# EMAIL_HOST; without one (bin/demo, development) printed on the worker's console instead.
EMAIL_HOST = os.environ.get("EMAIL_HOST", "")
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND") or (
    "django.core.mail.backends.smtp.EmailBackend" if EMAIL_HOST else "django.core.mail.backends.console.EmailBackend")
SMTP_SUBMISSION_PORT, SMTPS_PORT = 587, 465  # STARTTLS on the first, TLS from the first byte on the second
EMAIL_PORT = int(os.environ.get("EMAIL_PORT", str(SMTP_SUBMISSION_PORT)))
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", EMAIL_PORT == SMTP_SUBMISSION_PORT)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", EMAIL_PORT == SMTPS_PORT)
EMAIL_TIMEOUT = float(os.environ.get("EMAIL_TIMEOUT", "10"))
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "Docket <docket@localhost>")
# Where the links in an email point: the site's address as its readers reach it.
SITE_URL = os.environ.get("SITE_URL", "http://localhost:8000").rstrip("/")
NOTIFY = {
    # A member's digest: at most one email per this many minutes, unless she chose otherwise.
    "DIGEST_MINUTES": int(os.environ.get("NOTIFY_DIGEST_MINUTES", "15")),
    # A digest waits this long after the event that scheduled it (the review's end commits first).
    "SETTLE_SECONDS": int(os.environ.get("NOTIFY_SETTLE_SECONDS", "60")),
}
