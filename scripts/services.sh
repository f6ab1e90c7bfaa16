# Sourced by scripts/dev.sh and scripts/test.sh: make sure the PostgreSQL and Redis that
# DATABASE_URL and REDIS_URL name (default 127.0.0.1:5432 and 127.0.0.1:6379) answer. A
# server on this machine that is installed but stopped is started when it is the default
# port; one elsewhere is only checked, and a clear message says which one does not answer.

# url_part URL FIELD DEFAULT: host, port or database (path) of a postgres:// or redis:// URL.
url_part() {
  python3 - "$1" "$2" "$3" <<'PY'
import sys
from urllib.parse import urlsplit
url, field, default = sys.argv[1:]
parts = urlsplit(url)
value = {"host": parts.hostname, "port": parts.port, "db": parts.path.lstrip("/")}[field]
print(value or default)
PY
}

is_local() { [[ "$1" == "127.0.0.1" || "$1" == "localhost" || "$1" == "::1" ]]; }

ensure_postgres() {
  local url="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/perfdb}"
  local host port
  host=$(url_part "$url" host 127.0.0.1)
  port=$(url_part "$url" port 5432)
  if pg_isready -h "$host" -p "$port" -q 2>/dev/null; then return 0; fi
  if is_local "$host" && [ "$port" = 5432 ] && command -v pg_ctlcluster >/dev/null && [ -d /etc/postgresql ]; then
    echo "Starting PostgreSQL..."
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
    for _ in $(seq 1 30); do pg_isready -h "$host" -p "$port" -q && return 0; sleep 1; done
  fi
  echo "PostgreSQL does not answer on $host:$port (DATABASE_URL)." >&2
  if is_local "$host"; then
    echo "Install it (apt-get install postgresql) or set DATABASE_URL=postgres://USER@HOST:PORT/DB." >&2
  fi
  exit 1
}

ensure_redis() {
  local url="${REDIS_URL:-redis://127.0.0.1:6379/0}"
  local host port
  host=$(url_part "$url" host 127.0.0.1)
  port=$(url_part "$url" port 6379)
  if redis-cli -u "$url" ping >/dev/null 2>&1; then return 0; fi
  if is_local "$host" && [ "$port" = 6379 ] && command -v redis-server >/dev/null; then
    echo "Starting Redis..."
    redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no
    for _ in $(seq 1 20); do redis-cli -u "$url" ping >/dev/null 2>&1 && return 0; sleep 0.5; done
  fi
  echo "Redis does not answer on $host:$port (REDIS_URL)." >&2
  if is_local "$host"; then
    echo "Install it (apt-get install redis-server) or set REDIS_URL=redis://HOST:PORT/0." >&2
  fi
  exit 1
}

# ensure_venv FILE: .venv with the pinned FILE installed (requirements.txt to run the app,
# requirements-dev.txt, which includes it, for the tests, linters and mypy), every package
# checked against its hash. Reinstalled only when the file changed since the last install.
ensure_venv() {
  local file="${1:-requirements.txt}"
  if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
  fi
  local stamp=".venv/.${file%.txt}.sha256"
  local want
  want=$(sha256sum "$file" | cut -d' ' -f1)
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    echo "Installing $file..."
    .venv/bin/pip install --quiet --require-hashes -r "$file"
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
