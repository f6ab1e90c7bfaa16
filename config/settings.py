"""One settings module; every value comes from the environment with a local default.

The defaults work on a development machine with PostgreSQL and Redis on 127.0.0.1.
docs/configuration.md (and the README) list every variable.
"""

import os
from pathlib import Path
from typing import Any

import dj_database_url
import plotly
from celery.schedules import crontab
from csp.constants import NONCE

from config.cache_version import code_version

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DEBUG = env_bool("DEBUG", True)
SECRET_KEY = os.environ.get("SECRET_KEY", "dev-only-insecure-key-change-me" if DEBUG else "")
if not SECRET_KEY:
    raise RuntimeError("SECRET_KEY must be set when DEBUG=0")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")
# The default names the port scripts/dev.sh serves on (PORT, 8000 unless given).
SITE_URL = os.environ.get(
    "SITE_URL", f"http://127.0.0.1:{os.environ.get('PORT') or '8000'}"
).rstrip("/")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "axes",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "perfdb",
    "ingest",
    "dashboards",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "config.middleware.BodySizeLimitMiddleware",
    "config.middleware.BadParamMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into its 429 answer.
    "axes.middleware.AxesMiddleware",
]
# SecurityMiddleware first would answer before the size check; both run before a body is read.
MIDDLEWARE.insert(1, MIDDLEWARE.pop(MIDDLEWARE.index("config.middleware.BodySizeLimitMiddleware")))
# First of all: an anonymous GET with a kept, current answer (the series page, its figure,
# /api/series/) is answered before the rest runs; its headers are those the rest added when it
# was computed (dashboards/page_cache/kept.py).
MIDDLEWARE.insert(0, "dashboards.page_cache.kept.KeptAnswerMiddleware")
# Around the kept answers too: HTML, JSON and CSV are sent compressed (zstd, brotli or gzip,
# as the client accepts) and with Vary: Accept-Encoding; WhiteNoise compresses static files
# itself (Content-Encoding set, left alone). Django masks the CSRF token in every response,
# the secret a compressed page could otherwise leak (BREACH).
MIDDLEWARE.insert(0, "compression_middleware.middleware.CompressionMiddleware")
# Outermost: the request id (every log line of a request, a kept answer's too), its duration,
# and /metrics answered before sessions and redirects (config/observability_middleware.py).
MIDDLEWARE.insert(0, "config.observability_middleware.ObservabilityMiddleware")

AUTHENTICATION_BACKENDS = [
    # django-axes first: it refuses a locked-out username/address before a password check.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

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

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/perfdb"),
        conn_max_age=60,
        # A connection the server dropped (restart, pg_terminate_backend) is noticed before
        # a request uses it, instead of answering 500.
        conn_health_checks=True,
    )
}
# Reads to a streaming replica when DATABASE_REPLICA_URL is set
# (perfdb/operations/db_router.py): writes, reads inside a transaction and upload status go
# to the primary; a status says "done" only once the replica has replayed it (waiting at
# most DATABASE_REPLICA_WAIT seconds).
if os.environ.get("DATABASE_REPLICA_URL"):
    DATABASES["replica"] = dj_database_url.parse(
        os.environ["DATABASE_REPLICA_URL"], conn_max_age=60, conn_health_checks=True
    )
    DATABASES["replica"]["TEST"] = {"MIRROR": "default"}
    DATABASE_ROUTERS = ["perfdb.operations.db_router.PrimaryReplicaRouter"]
DATABASE_REPLICA_WAIT = float(os.environ.get("DATABASE_REPLICA_WAIT", 5))
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", BASE_DIR / "staticfiles"))
# plotly.js is served by the app itself (no CDN). Chart pages load static/vendor/plotly/, a
# partial bundle of the trace types the figure builders emit (~410 kB gzipped against the full
# bundle's 1.47 MB; scripts/plotly-bundle/ builds it from the same plotly.js version the
# plotly package bundles). The package's full plotly.min.js stays served as plotly/ for a
# page that still asks for it. In production (DEBUG off) WhiteNoise serves every file gzipped
# under a hashed name with a far-future cache header (CompressedManifestStaticFilesStorage).
STATICFILES_DIRS = [BASE_DIR / "static", ("plotly", Path(plotly.__file__).parent / "package_data")]
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", BASE_DIR / "var" / "media"))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}
# Bundles in shared storage (docs/deploy.md): with AWS_STORAGE_BUCKET_NAME set, uploads are
# stored in that bucket of any S3-compatible store through django-storages (AWS_S3_ENDPOINT_URL
# for one that is not AWS; credentials from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or the
# host's role), so an ingest worker on another host reads what the web server stored.
# Unset, they stay on local disk under MEDIA_ROOT.
if os.environ.get("AWS_STORAGE_BUCKET_NAME"):
    _s3_storage: dict[str, Any] = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": os.environ["AWS_STORAGE_BUCKET_NAME"],
            "endpoint_url": os.environ.get("AWS_S3_ENDPOINT_URL") or None,
            "region_name": os.environ.get("AWS_S3_REGION_NAME") or None,
            "location": os.environ.get("AWS_LOCATION", "bundles"),
            "default_acl": None,
            "file_overwrite": False,
        },
    }
    STORAGES["default"] = _s3_storage
# Bundles are streamed to disk past this size rather than held in memory.
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
# A body that is not a file (form fields, JSON) is refused past this size.
DATA_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
DATA_UPLOAD_MAX_NUMBER_FIELDS = 1000
BUNDLE_MAX_BYTES = int(os.environ.get("BUNDLE_MAX_BYTES", 200 * 1024 * 1024))
# A body over BUNDLE_MAX_BYTES (+1 MiB) is refused before it is read
# (config.middleware.BodySizeLimitMiddleware); a file is cut off while it streams in.
FILE_UPLOAD_HANDLERS = [
    "ingest.upload_limit.BundleSizeLimitHandler",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]

# --- Redis and Celery -------------------------------------------------------
REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = REDIS_URL
# No task's return value is read (uploads, checks and emails record their outcome in
# PostgreSQL): storing each one only filled Redis. A task whose result is read says so
# (``ignore_result=False``: perfdb.tasks.ping, the end-to-end worker test's).
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SOFT_TIME_LIMIT = int(os.environ.get("CELERY_TASK_SOFT_TIME_LIMIT", 600))
CELERY_TASK_TIME_LIMIT = int(os.environ.get("CELERY_TASK_TIME_LIMIT", 660))
CELERY_RESULT_EXPIRES = 3600
# A task unacknowledged this long is redelivered; it must exceed the hard time limit.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": CELERY_TASK_TIME_LIMIT + 300}
CELERY_TIMEZONE = TIME_ZONE
# Tests give their own workers a queue of their own (a worker's follow-up tasks stay there).
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_TASK_DEFAULT_QUEUE", "celery")
# Split queues (docs/deploy.md): ingest, detection and email each go to a queue of their own
# when these are set (docker-compose sets them, with a worker per queue), so a 1 GiB upload
# never delays an alert email. Unset, every task stays on the default queue (one worker for
# all, as in development and the tests). Routed by task name, the workers' contract.
CELERY_INGEST_QUEUE = os.environ.get("CELERY_INGEST_QUEUE") or CELERY_TASK_DEFAULT_QUEUE
CELERY_DETECTION_QUEUE = os.environ.get("CELERY_DETECTION_QUEUE") or CELERY_TASK_DEFAULT_QUEUE
CELERY_EMAIL_QUEUE = os.environ.get("CELERY_EMAIL_QUEUE") or CELERY_TASK_DEFAULT_QUEUE
# The pages' warm-up after each upload: background work, on a worker of its own (compose runs
# it at a lower CPU priority) so that it never holds an upload or a check back.
CELERY_PAGES_QUEUE = os.environ.get("CELERY_PAGES_QUEUE") or CELERY_TASK_DEFAULT_QUEUE
CELERY_TASK_ROUTES = {
    "ingest.tasks.ingest_upload": {"queue": CELERY_INGEST_QUEUE},
    "ingest.tasks.recover_stuck_uploads": {"queue": CELERY_INGEST_QUEUE},
    "perfdb.tasks.regressions_check": {"queue": CELERY_DETECTION_QUEUE},
    "perfdb.tasks.recover_followups": {"queue": CELERY_DETECTION_QUEUE},
    "perfdb.tasks.notify_upload": {"queue": CELERY_EMAIL_QUEUE},
    "perfdb.tasks.send_email": {"queue": CELERY_EMAIL_QUEUE},
    "perfdb.tasks.send_due_emails": {"queue": CELERY_EMAIL_QUEUE},
    "perfdb.tasks.send_digests": {"queue": CELERY_EMAIL_QUEUE},
    # After an upload's commit (dashboards/page_cache/warm.py).
    "dashboards.tasks.warm_pages": {"queue": CELERY_PAGES_QUEUE},
    # After a deploy or a Redis restart emptied the cache (dashboards/page_cache/warm.py).
    "dashboards.tasks.warm_cold_cache": {"queue": CELERY_PAGES_QUEUE},
}
# Recompute the pages' shared cache entries (overview, busiest setup, profiled setups) in a
# task after each upload instead of in the next browser's request (perfdb/cache/).
PAGE_CACHE_WARM = env_bool("PAGE_CACHE_WARM", True)
# Follow-up work (README "Operations"): owed work past this many seconds is queued again.
FOLLOWUP_DEADLINE_SECONDS = int(os.environ.get("FOLLOWUP_DEADLINE_SECONDS", 30))
# An upload's regression check commits this many series at a time (perfdb/alerting/
# regressions.py, detection_run): each batch reads its series' data once; 1 commits every
# series on its own.
DETECTION_SERIES_PER_TRANSACTION = int(os.environ.get("DETECTION_SERIES_PER_TRANSACTION", 64))
# Email retries: backoff cap; a message left "sending" this long by a dead sender is sent
# again (same Message-ID); a message failing this long is given up (and shown to staff).
OUTBOX_RETRY_MAX_SECONDS = int(os.environ.get("OUTBOX_RETRY_MAX_SECONDS", 45))
OUTBOX_SENDING_TIMEOUT = int(os.environ.get("OUTBOX_SENDING_TIMEOUT", 300))
OUTBOX_GIVE_UP_HOURS = int(os.environ.get("OUTBOX_GIVE_UP_HOURS", 72))
# Every long wait is beat's, never a task countdown (the longest is 30 s, far inside the
# broker's visibility timeout above).
CELERY_BEAT_SCHEDULE = {
    "recover-stuck-uploads": {"task": "ingest.tasks.recover_stuck_uploads", "schedule": 30.0},
    "recover-followups": {"task": "perfdb.tasks.recover_followups", "schedule": 30.0},
    "send-due-emails": {"task": "perfdb.tasks.send_due_emails", "schedule": 15.0},
    "send-digests": {"task": "perfdb.tasks.send_digests", "schedule": crontab(hour=6, minute=0)},
    "warm-cold-cache": {"task": "dashboards.tasks.warm_cold_cache", "schedule": 60.0},
}

# Every cache key carries the code version (a digest of the apps' source and migrations,
# config/cache_version.py; CACHE_VERSION=... to pin it, e.g. to a release's commit): a deploy
# of changed code never reads values of the old shape.
CACHE_VERSION = os.environ.get("CACHE_VERSION") or code_version(BASE_DIR)
# The cache apart from the broker (docs/deploy.md "Redis"): its own Redis, run with maxmemory
# and allkeys-lru, since eviction must never take a queued task. Unset: database 1 of the
# default local server, or REDIS_URL itself when that names another (nothing to guess from).
CACHE_REDIS_URL = os.environ.get("CACHE_REDIS_URL") or (
    REDIS_URL if os.environ.get("REDIS_URL") else "redis://127.0.0.1:6379/1"
)
CACHES = {
    "default": {
        # Redis, but a Redis that does not answer is a cache miss (logged), never a 500.
        "BACKEND": "perfdb.cache.backend.FailSoftRedisCache",
        "LOCATION": CACHE_REDIS_URL,
        "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 1.0},
        "KEY_PREFIX": f"perfdb-{CACHE_VERSION}",
    }
}

# --- Email (Django's own names) -----------------------------------------------
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND", "django.core.mail.backends.smtp.EmailBackend")
EMAIL_HOST = os.environ.get("EMAIL_HOST", "127.0.0.1")
EMAIL_PORT = int(os.environ.get("EMAIL_PORT", 1025))
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_TIMEOUT = int(os.environ.get("EMAIL_TIMEOUT", 20))
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "perfdb@localhost")

# --- API ----------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token auth whose failures are counted per address (429 past API_BAD_TOKEN_LIMIT).
        "dashboards.api.auth.ThrottledTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_PAGINATION_CLASS": "dashboards.api.pagination.Pagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "dashboards.api.schema.ErrorDocumentingSchema",
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "EXCEPTION_HANDLER": "dashboards.api.errors.exception_handler",
    "DEFAULT_THROTTLE_CLASSES": [
        # DRF's, counting per client address as perfdb.operations.client_ip reads it past the proxy.
        "dashboards.api.throttle.AnonRateThrottle",
        "dashboards.api.throttle.UserRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": os.environ.get("API_THROTTLE_ANON", "300/min"),
        "user": os.environ.get("API_THROTTLE_USER", "1200/min"),
    },
}
API_BAD_TOKEN_LIMIT = int(os.environ.get("API_BAD_TOKEN_LIMIT", 20))
API_BAD_TOKEN_WINDOW = int(os.environ.get("API_BAD_TOKEN_WINDOW", 600))

# --- Login lockout (django-axes) ------------------------------------------------
# After AXES_FAILURE_LIMIT wrong passwords for one username from one address, that pair is
# locked for AXES_COOLOFF_MINUTES (the right password too); a successful login resets it.
AXES_FAILURE_LIMIT = int(os.environ.get("AXES_FAILURE_LIMIT", 5))
AXES_COOLOFF_TIME = int(os.environ.get("AXES_COOLOFF_MINUTES", 15)) / 60  # hours
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_ENABLED = env_bool("AXES_ENABLED", True)
AXES_VERBOSE = False

# --- Content-Security-Policy (django-csp) -------------------------------------------
# Scripts only from this site (plotly.js and charts.js are served by the app) or inline with
# the request's nonce; Plotly writes <style> elements, hence inline styles.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'", NONCE],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:", "blob:"],
        "font-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}
SPECTACULAR_SETTINGS = {
    "TITLE": "perfdb API",
    "DESCRIPTION": "Upload kernel benchmark bundles, read runs, compare and triage regressions.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI is served by the app itself (no CDN).
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # One name per choice set (dashboards/api/serializers.py holds them).
    "ENUM_NAME_OVERRIDES": {
        "AlertStatusEnum": "dashboards.api.serializers.ALERT_STATUS",
        "UploadStatusEnum": "dashboards.api.serializers.UPLOAD_STATUS",
        "BetterEnum": "dashboards.api.serializers.BETTER",
        "ModeEnum": "dashboards.api.serializers.MODE",
    },
}

# --- Production hardening (active when DEBUG=0) ----------------------------------
if not DEBUG:
    # HTTPS=0: the site is reached over plain http (docker compose on a laptop, where
    # http://localhost:8000 must not redirect to an https nobody serves): no redirect, cookies
    # that travel over http, no HSTS. Production behind TLS keeps the default, 1.
    HTTPS = env_bool("HTTPS", True)
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", HTTPS)
    # The container's health check (Dockerfile HEALTHCHECK) asks over plain HTTP.
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
    SESSION_COOKIE_SECURE = HTTPS
    CSRF_COOKIE_SECURE = HTTPS
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", 31536000)) if HTTPS else 0
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
# X-Forwarded-Proto is believed only behind a proxy that sets it (and strips a client's own):
# trusted by default it would let any client claim HTTPS.
if env_bool("TRUST_X_FORWARDED_PROTO", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Logs (JSON with the request and upload ids), /metrics and Sentry: docs/observability.md.
from config.observability import *  # noqa: E402,F403

# Series with fewer stock kernels than this are read kernel by kernel as they arrive (a test
# on the trials, confirmed with the upload); longer ones by the step scan (docs/detector.md).
PERFDB_SHORT_KERNELS = int(os.environ.get("PERFDB_SHORT_KERNELS", "12"))

# The reverse proxy (trusted hops, the client's address), the broker's connection:
# docs/proxy-and-faults.md.
from config.network import *  # noqa: E402,F403
