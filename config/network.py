"""Settings for what stands between processes: the reverse proxy in front of the web
servers and the Redis broker behind them (docs/proxy-and-faults.md). Read from the
environment; imported at the end of config/settings.py.
"""

import os

from perfdb.operations.client_ip import parse_trusted_proxies

# --- The reverse proxy ------------------------------------------------------------------
# Which hops are ours: empty or 0 (no proxy: REMOTE_ADDR is the client), a count (that many
# proxies, each appending to X-Forwarded-For), or addresses/networks of our proxies
# ("127.0.0.1,10.0.0.0/8"). perfdb.operations.client_ip.client_ip reads it; every per-client limit
# (DRF's throttles, the bad-token limit, django-axes' lockout) and log line asks that function.
TRUSTED_PROXIES = parse_trusted_proxies(os.environ.get("TRUSTED_PROXIES", ""))
AXES_CLIENT_IP_CALLABLE = "perfdb.operations.client_ip.client_ip"

# --- The broker -------------------------------------------------------------------------
# Seconds to open a connection to Redis. The web server queues an upload's ingest inside the
# request: with the broker down it must give up fast and answer 202 (the upload is stored;
# the sweep, ingest.recovery, queues it once the broker is back), not block for 19 s.
BROKER_CONNECT_TIMEOUT = float(os.environ.get("BROKER_CONNECT_TIMEOUT", 1.0))
CELERY_BROKER_CONNECTION_TIMEOUT = BROKER_CONNECT_TIMEOUT
# Sending a task: one quick retry (a connection the broker closed on restart is reopened),
# never the default's three with their waits.
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.2,
}
# A worker whose broker goes away keeps trying to reconnect, forever (Celery's default gives
# up after 100 attempts and the worker exits), at start as after a loss.
CELERY_BROKER_CONNECTION_RETRY = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
# A task running when the connection is lost finishes: its outcome is written to PostgreSQL,
# not to the broker, and the ingest is safe to run twice (a redelivered copy finds it done).
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
# Merged into CELERY_BROKER_TRANSPORT_OPTIONS by config/celery.py (the visibility timeout
# stays config/settings.py's): bounded waits on a broker that accepts a connection and then
# says nothing, and keepalives so a dead peer is noticed.
BROKER_SOCKET_OPTIONS = {
    "socket_connect_timeout": BROKER_CONNECT_TIMEOUT,
    "socket_timeout": float(os.environ.get("BROKER_SOCKET_TIMEOUT", 10.0)),
    "socket_keepalive": True,
    "retry_on_timeout": True,
}
