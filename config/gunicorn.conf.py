"""gunicorn settings for the web server, read by docker-compose and by bench/load.py.

    gunicorn -c config/gunicorn.conf.py config.wsgi:application

Threaded workers (gthread): a page spends part of its time waiting on PostgreSQL and Redis,
and a thread waiting there lets another request of the same process use the CPU; a sync
worker would hold a whole process idle meanwhile, so 50 browsing clients queued behind 3
processes. Processes still bound the CPU work (one GIL each), so WEB_CONCURRENCY follows
the cores (2 x cores + 1 is gunicorn's rule of thumb; cores + 1 keeps more CPU for
PostgreSQL on the same machine) and GUNICORN_THREADS the waiting. Each thread holds its own
database connection (CONN_MAX_AGE): workers x threads must stay well below PostgreSQL's
max_connections (100 by default) together with the Celery workers. docs/deploy.md has the
figures these defaults were chosen by.
"""

import gc
import os

# Under gunicorn a scope chart (scaling, kernel-time, wakeups) whose previous value is younger
# than this is served while a background thread recomputes it (perfdb/cache/): uploads
# arriving every few seconds would otherwise have it recomputed as often as it is read. The
# pages no version follows (compare, run detail, alerts, the overview, /api/runs/) are kept
# this long for anonymous readers (dashboards/page_cache/kept.py). docs/deploy.md has the trade.
os.environ.setdefault("PAGE_CACHE_STALE_SECONDS", "30")

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
worker_class = "gthread"
# Import the app once in the master, then fork: the workers share its memory and start at
# once. Importing it (Django, Plotly, SciPy) in each process took a minute of a loaded
# 2-core machine, with every worker doing it at the same time (bench/load.py).
preload_app = True
workers = int(os.environ.get("WEB_CONCURRENCY", 3))
threads = int(os.environ.get("GUNICORN_THREADS", 4))
# A slow client or a stuck request is cut off; a busy page never comes near it.
timeout = int(os.environ.get("GUNICORN_TIMEOUT", 120))
graceful_timeout = 30
keepalive = 5
# Bounds on the request line and headers; the body is bounded by the app before it is read
# (BUNDLE_MAX_BYTES, config/middleware.py).
limit_request_line = 8190
limit_request_fields = 100
limit_request_field_size = 8190
# Recycle a worker now and then, staggered, so a slow leak cannot grow without bound.
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", 5000))
max_requests_jitter = 500


def pre_fork(server, worker):
    """Freeze what the master imported (Django, Plotly, SciPy, every view module: ~200,000
    objects) out of the cycle collector's reach before a worker forks from it: every full
    collection in a worker had walked them all again. Measured on a scope's scaling chart at
    10M results: 171 -> 119 ms of CPU, 214 -> 52 ms of collections (docs/performance.md)."""
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 (imports the URL conf, hence every view)
    gc.freeze()
