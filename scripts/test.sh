#!/usr/bin/env bash
# Runs the whole test suite against real PostgreSQL, Redis, a Celery worker, an SMTP server
# and headless Chromium. Installs what it needs first. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/services.sh

ensure_postgres
ensure_redis
ensure_venv requirements-dev.txt  # the runtime set plus tests, linters and mypy

# PostgreSQL's server tools (initdb, pg_ctl, pg_basebackup) for the streaming-replica test
# (tests/config/test_replica.py, skipped without them): Debian keeps them off PATH.
if ! ls /usr/lib/postgresql/*/bin/pg_basebackup >/dev/null 2>&1 && ! command -v pg_basebackup >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  fi
fi
for pg_bin in /usr/lib/postgresql/*/bin; do
  if [ -x "$pg_bin/initdb" ]; then PATH="$PATH:$pg_bin"; fi
done
export PATH

# The real servers and tools some tests run (each test skips without its own): Prometheus
# scraping /metrics and promtool checking the exposition, nginx as the reverse proxy in front
# of gunicorn, fio and dbench captured by `perfdb-upload run`.
missing=()
for tool in prometheus:prometheus nginx:nginx-light fio:fio dbench:dbench; do
  command -v "${tool%%:*}" >/dev/null || missing+=("${tool#*:}")
done
if [ "${#missing[@]}" -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "Installing ${missing[*]} for the tests that run them..."
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null) \
    || echo "could not install ${missing[*]}: their tests are skipped" >&2
fi

# Debian's chromium for the browser tests (Playwright drives it; no browser download).
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "Installing Debian's chromium for the browser tests..."
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "Browser tests need /usr/bin/chromium: apt-get install chromium" >&2
    exit 1
  fi
fi

.venv/bin/ruff check .
.venv/bin/lint-imports --no-cache  # the layers in pyproject.toml [tool.importlinter]
.venv/bin/mypy  # pyproject.toml [tool.mypy]: strict on perfdb/ and ingest/parsers/
.venv/bin/python -m pytest "$@"
