# Sourced by scripts/dev.sh and scripts/test.sh: make sure PostgreSQL and Redis answer on
# 127.0.0.1, starting the machine's own servers when they are installed but stopped.
# Set DATABASE_URL / REDIS_URL to use servers elsewhere; then nothing is started.

ensure_postgres() {
  if [ -n "${DATABASE_URL:-}" ] && [[ "$DATABASE_URL" != *"127.0.0.1"* && "$DATABASE_URL" != *"localhost"* ]]; then
    return 0
  fi
  if pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then return 0; fi
  if command -v pg_ctlcluster >/dev/null && [ -d /etc/postgresql ]; then
    echo "Starting PostgreSQL..."
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
    for _ in $(seq 1 30); do pg_isready -h 127.0.0.1 -p 5432 -q && return 0; sleep 1; done
  fi
  echo "PostgreSQL is not running on 127.0.0.1:5432 and could not be started here." >&2
  echo "Install it (apt-get install postgresql) or set DATABASE_URL=postgres://USER@HOST:PORT/DB." >&2
  exit 1
}

ensure_redis() {
  if [ -n "${REDIS_URL:-}" ] && [[ "$REDIS_URL" != *"127.0.0.1"* && "$REDIS_URL" != *"localhost"* ]]; then
    return 0
  fi
  if redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then return 0; fi
  if command -v redis-server >/dev/null; then
    echo "Starting Redis..."
    redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no
    for _ in $(seq 1 20); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && return 0; sleep 0.5; done
  fi
  echo "Redis is not running on 127.0.0.1:6379 and could not be started here." >&2
  echo "Install it (apt-get install redis-server) or set REDIS_URL=redis://HOST:PORT/0." >&2
  exit 1
}

ensure_venv() {
  if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
  fi
  # requirements-dev.txt: the runtime set (requirements.txt) plus tests, linters and mypy,
  # pinned with hashes (pip then checks every download: --require-hashes is implied).
  # Reinstall only when either compiled list changed since the last install.
  local stamp=.venv/.requirements.sha256
  local want
  want=$(cat requirements.txt requirements-dev.txt | sha256sum | cut -d' ' -f1)
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    .venv/bin/pip install --quiet -r requirements-dev.txt
    echo "$want" > "$stamp"
  fi
}

ensure_database() {
  # Create the database named in DATABASE_URL (default perfdb) if it does not exist.
  .venv/bin/python - <<'PY'
import os, psycopg, dj_database_url
cfg = dj_database_url.parse(os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/perfdb"))
with psycopg.connect(host=cfg["HOST"], port=cfg["PORT"] or 5432, user=cfg["USER"],
                     password=cfg["PASSWORD"] or None, dbname="postgres", autocommit=True) as conn:
    if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [cfg["NAME"]]).fetchone():
        conn.execute(f'CREATE DATABASE "{cfg["NAME"]}"')
        print(f"Created database {cfg['NAME']}")
PY
}
