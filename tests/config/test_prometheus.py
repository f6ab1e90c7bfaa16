"""A real Prometheus (Debian's package) scrapes the live app's /metrics and answers a query
for the queue depth: what an operator's setup (docs/observability.md) does, end to end.
Skipped where the prometheus binary is not installed."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
import uuid

import pytest
import redis

from config.celery import app
from tests.conftest import free_port

PROMETHEUS = shutil.which("prometheus")
pytestmark = [
    pytest.mark.skipif(PROMETHEUS is None, reason="prometheus is not installed"),
    pytest.mark.django_db(transaction=True),
]

SCRAPE_CONFIG = """
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: perfdb
    metrics_path: /metrics
    static_configs:
      - targets: ["{target}"]
"""


def _query(port: int, expr: str) -> list[dict]:
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    try:
        with urllib.request.urlopen(url, timeout=2) as answer:
            return json.load(answer)["data"]["result"]
    except OSError:
        return []  # not listening yet


def test_prometheus_scrapes_the_queue_depth(live_server, settings, tmp_path):
    queue = f"obs-prom-{uuid.uuid4().hex[:8]}"
    settings.CELERY_TASK_ROUTES = {**settings.CELERY_TASK_ROUTES, "x": {"queue": queue}}
    for i in range(3):
        app.send_task("perfdb.tasks.ping", [str(i)], queue=queue)
    target = live_server.url.removeprefix("http://")
    config = tmp_path / "prometheus.yml"
    config.write_text(SCRAPE_CONFIG.format(target=target))
    port = free_port()
    proc = subprocess.Popen(
        [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=(tmp_path / "prometheus.log").open("w"),
    )  # fmt: skip
    try:
        expr = f'perfdb_celery_queue_length{{job="perfdb",queue="{queue}"}}'
        deadline = time.time() + 25
        while not (result := _query(port, expr)):
            assert proc.poll() is None, (tmp_path / "prometheus.log").read_text()
            assert time.time() < deadline, (tmp_path / "prometheus.log").read_text()[-2000:]
            time.sleep(0.3)
        assert float(result[0]["value"][1]) == 3
        up = _query(port, 'up{job="perfdb"}')
        assert float(up[0]["value"][1]) == 1
        alerts = _query(port, "sum(perfdb_alerts)")
        assert float(alerts[0]["value"][1]) == 0
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        redis.Redis.from_url(settings.CELERY_BROKER_URL).delete(queue)
