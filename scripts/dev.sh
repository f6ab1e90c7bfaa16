#!/usr/bin/env bash
# Quick start: set everything up and run the site on http://127.0.0.1:8000 with a Celery
# worker and beat. Ctrl-C stops all of them.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/services.sh

ensure_postgres
ensure_redis
ensure_venv
ensure_database
.venv/bin/python manage.py migrate --noinput

pids=()
stop() {
  echo "Stopping..."
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap stop INT TERM EXIT

.venv/bin/celery -A config worker --loglevel INFO --concurrency 2 -n "dev@%h" &
pids+=($!)
.venv/bin/celery -A config beat --loglevel WARNING --schedule "${TMPDIR:-/tmp}/perfdb-celerybeat" &
pids+=($!)
# The demo (the seed papers' tables) is loaded once, through the same ingest as any upload.
.venv/bin/python manage.py load_demo --if-empty || echo "Demo data not loaded (see above)."
echo "perfdb on http://127.0.0.1:8000 (Ctrl-C to stop)"
.venv/bin/python manage.py runserver 127.0.0.1:8000 &
pids+=($!)
wait -n "${pids[@]}"
