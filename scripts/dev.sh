#!/usr/bin/env bash
# Quick start: set everything up and run the site on http://127.0.0.1:$PORT (8000 unless
# given) with a Celery worker and beat. Ctrl-C stops all of them.
#
# DATABASE_URL and REDIS_URL (config/settings.py defaults otherwise) name the servers; both
# are checked before anything starts. Only what running needs is installed (requirements.txt);
# scripts/test.sh installs the tests, linters and mypy on top.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/services.sh

export PORT="${PORT:-8000}"  # config/settings.py's SITE_URL default follows it

ensure_postgres
ensure_redis
ensure_venv requirements.txt
ensure_database
.venv/bin/python manage.py migrate --noinput

# Beat's schedule file belongs to this checkout and port: two instances never share one.
beat_dir="var/celerybeat"
mkdir -p "$beat_dir"

pids=()
stop() {
  echo "Stopping..."
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap stop INT TERM EXIT

.venv/bin/celery -A config worker --loglevel INFO --concurrency 2 -n "dev-$PORT@%h" &
pids+=($!)
.venv/bin/celery -A config beat --loglevel WARNING --schedule "$beat_dir/schedule-$PORT" &
pids+=($!)
# The demo (the seed papers' tables) is loaded once, through the same ingest as any upload.
.venv/bin/python manage.py load_demo --if-empty || echo "Demo data not loaded (see above)."
echo "perfdb on http://127.0.0.1:$PORT (Ctrl-C to stop)"
.venv/bin/python manage.py runserver "127.0.0.1:$PORT" &
pids+=($!)
wait -n "${pids[@]}"
