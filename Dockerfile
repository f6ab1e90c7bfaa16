# Two stages: the first installs the runtime set (requirements.txt, every package pinned with
# its hashes, so pip refuses anything else) into a virtualenv; the second copies only that
# virtualenv and the code, and runs as an unprivileged user. Tests, linters and mypy
# (requirements-dev.txt) never enter the image. Debian bookworm, whose postgresql-client is 15,
# the version of compose's postgres:15 (pg_dump/pg_restore for `manage.py backup`/`restore`).
FROM python:3.11-slim-bookworm AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
RUN python -m venv /opt/venv
COPY requirements.txt /tmp/requirements.txt
RUN /opt/venv/bin/pip install --require-hashes -r /tmp/requirements.txt

FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PATH=/opt/venv/bin:$PATH
RUN apt-get update \
    && apt-get install -y --no-install-recommends postgresql-client \
    && rm -rf /var/lib/apt/lists/*
RUN useradd --system --create-home --uid 10001 perfdb \
    && mkdir -p /data/media /backups && chown perfdb:perfdb /data/media /backups
COPY --from=build /opt/venv /opt/venv
WORKDIR /app
# The code stays root's (read-only to the app); only /data/media (uploads) and /backups
# (`manage.py backup`, a volume in compose) are writable.
COPY . .
RUN DEBUG=0 SECRET_KEY=build-only python manage.py collectstatic --noinput
USER perfdb
EXPOSE 8000
# /healthz: database and Redis answer (a 503 otherwise). Plain HTTP from inside the container
# (settings exempt it from the HTTPS redirect); Host localhost must be in ALLOWED_HOSTS (the
# compose default is). The worker and beat containers, which serve no HTTP, have their own.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request as u; r = u.Request('http://127.0.0.1:8000/healthz', headers={'Host': 'localhost'}); sys.exit(0 if u.urlopen(r, timeout=4).status == 200 else 1)"]
# config/gunicorn.conf.py: gthread, WEB_CONCURRENCY x GUNICORN_THREADS, bound on 0.0.0.0:8000.
CMD ["gunicorn", "-c", "config/gunicorn.conf.py", "config.wsgi:application"]
