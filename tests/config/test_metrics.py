"""/metrics: who may read it, and values that move with the pipeline (config/metrics.py,
config/pipeline_metrics.py)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from config.metrics import TASK_DURATION
from config.pipeline_metrics import PRIORITY_SEP
from perfdb.models import Alert, OutboxMessage, Upload
from tests.bundles import volano_bundle
from tests.factories import OutboxMessageFactory
from tests.perfdb.alerting.builds import check, ingest_runs

pytestmark = pytest.mark.django_db

OUTSIDE = "203.0.113.7"  # TEST-NET-3: an address on no allowed network


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of an exposition, by name and sorted labels."""
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def scrape(client, **extra) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = client.get("/metrics", **extra)
    assert response.status_code == 200, response.status_code
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    return samples(response.content.decode())


# --- access ---------------------------------------------------------------------------


def test_loopback_reads_it_and_an_outside_address_finds_nothing(client):
    assert client.get("/metrics").status_code == 200  # the test client is 127.0.0.1
    assert client.get("/metrics", REMOTE_ADDR=OUTSIDE).status_code == 404


def test_a_request_through_a_proxy_is_refused_even_from_loopback(client):
    # The proxy's own address is loopback: believing it would publish /metrics to everyone.
    assert client.get("/metrics", HTTP_X_FORWARDED_FOR=OUTSIDE).status_code == 404
    assert client.get("/metrics", HTTP_X_REAL_IP=OUTSIDE).status_code == 404


def test_a_listed_network_reads_it(client, settings):
    settings.METRICS_ALLOWED_NETWORKS = ["203.0.113.0/24"]
    assert client.get("/metrics", REMOTE_ADDR=OUTSIDE).status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="198.51.100.1").status_code == 404
    assert client.get("/metrics").status_code == 404  # loopback is no longer listed


def test_the_bearer_token_reads_it_from_anywhere_and_a_wrong_one_is_403(client, settings):
    settings.METRICS_TOKEN = "s3cret-scrape-token"
    good = {"REMOTE_ADDR": OUTSIDE, "HTTP_X_FORWARDED_FOR": OUTSIDE}
    ok = client.get("/metrics", HTTP_AUTHORIZATION="Bearer s3cret-scrape-token", **good)
    assert ok.status_code == 200
    bad = client.get("/metrics", HTTP_AUTHORIZATION="Bearer guess", REMOTE_ADDR=OUTSIDE)
    assert bad.status_code == 403
    assert b"s3cret" not in ok.content  # the settings' secrets are nowhere in the text


def test_no_token_configured_refuses_every_bearer(client, settings):
    settings.METRICS_TOKEN = ""
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer ").status_code == 403


def test_only_reads(client):
    assert client.post("/metrics").status_code == 405


def test_no_session_or_csrf_cookie_and_never_cached(client):
    response = client.get("/metrics")
    assert not response.cookies
    assert response["Cache-Control"] == "no-store"


# --- values ---------------------------------------------------------------------------


def test_an_upload_moves_uploads_and_the_request_histogram(client, token, tmp_path):
    before = scrape(client)
    assert before[("perfdb_uploads", (("status", "queued"),))] == 0
    with open(volano_bundle(tmp_path / "a.tar.gz"), "rb") as f:
        answer = client.post("/api/uploads/", {"bundle": f}, HTTP_AUTHORIZATION=f"Token {token}")
    assert answer.status_code == 202
    after = scrape(client)
    assert after[("perfdb_uploads", (("status", "queued"),))] == 1
    assert after[("perfdb_uploads_oldest_waiting_age_seconds", ())] >= 0
    key = (
        "perfdb_http_request_duration_seconds_count",
        (("method", "POST"), ("status", "202"), ("view", "api-uploads")),
    )
    assert after[key] == before.get(key, 0) + 1


def test_an_alert_and_an_email_move_their_gauges(client, tmp_path):
    before = scrape(client)
    assert before[("perfdb_alerts", (("status", "untriaged"),))] == 0
    assert before[("perfdb_outbox_oldest_pending_age_seconds", ())] == 0
    check(ingest_runs(tmp_path, "a.tar.gz", [("2.4.20", "[]", (13000, 13100, 12950))]))
    check(ingest_runs(tmp_path, "b.tar.gz", [("2.4.20", '["O(1)"]', (11000, 11100, 11050))]))
    assert Alert.objects.filter(metric__name="throughput").exists()
    message = OutboxMessageFactory(to="lab@example.org", subject="s", text="t")
    OutboxMessage.objects.filter(pk=message.pk).update(
        created_at=message.created_at.replace(year=message.created_at.year - 1)
    )
    after = scrape(client)
    for status in Alert.Status.values:
        expected = Alert.objects.filter(status=status).count()
        assert after[("perfdb_alerts", (("status", status),))] == expected
    assert sum(v for k, v in after.items() if k[0] == "perfdb_alerts") == Alert.objects.count()
    assert after[("perfdb_outbox_messages", (("status", "pending"),))] == 1
    assert after[("perfdb_outbox_oldest_pending_age_seconds", ())] > 364 * 86400


def test_an_owed_regression_check_shows_as_detection_lag(client, tmp_path, settings):
    upload = ingest_runs(tmp_path, "a.tar.gz", [("2.4.20", "[]", (13000, 13100, 12950))])
    upload.refresh_from_db()
    assert upload.detection_due_at is not None  # the ingest owes its check
    # Stored 100 s ago: due FOLLOWUP_DEADLINE_SECONDS after that.
    stored = timezone.now() - timedelta(seconds=100)
    due = stored + timedelta(seconds=settings.FOLLOWUP_DEADLINE_SECONDS)
    Upload.objects.filter(pk=upload.pk).update(detection_due_at=due)
    values = scrape(client)
    assert values[("perfdb_detection_owed", ())] == 1
    assert 100 <= values[("perfdb_detection_lag_seconds", ())] < 110
    Upload.objects.filter(pk=upload.pk).update(detection_due_at=None)  # the check ran
    values = scrape(client)
    assert (
        values[("perfdb_detection_owed", ())],
        values[("perfdb_detection_lag_seconds", ())],
    ) == (
        0,
        0,
    )


def test_a_queued_task_moves_its_queue_depth(client, settings):
    queue = "perfdb-obs-test-queue"
    settings.CELERY_TASK_ROUTES = {**settings.CELERY_TASK_ROUTES, "x": {"queue": queue}}
    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    broker.delete(queue, f"{queue}{PRIORITY_SEP}9")
    try:
        from config.celery import app

        assert scrape(client)[("perfdb_celery_queue_length", (("queue", queue),))] == 0
        app.send_task("perfdb.tasks.ping", args=["a"], queue=queue)
        app.send_task("perfdb.tasks.ping", args=["b"], queue=queue, priority=9)
        assert scrape(client)[("perfdb_celery_queue_length", (("queue", queue),))] == 2
    finally:
        broker.delete(queue, f"{queue}{PRIORITY_SEP}9")


def test_every_routed_queue_is_listed(client):
    values = scrape(client)
    for route in settings.CELERY_TASK_ROUTES.values():
        assert ("perfdb_celery_queue_length", (("queue", route["queue"]),)) in values
    assert values[("perfdb_metrics_source_up", (("source", "redis"),))] == 1
    assert values[("perfdb_metrics_source_up", (("source", "database"),))] == 1


def test_redis_down_leaves_the_database_metrics_and_says_so(client, settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    values = scrape(client)
    assert values[("perfdb_metrics_source_up", (("source", "redis"),))] == 0
    assert not [k for k in values if k[0] == "perfdb_celery_queue_length"]
    assert ("perfdb_uploads", (("status", "done"),)) in values


def test_a_scrape_costs_four_queries(client, django_assert_num_queries):
    with django_assert_num_queries(4):
        client.get("/metrics")


# --- the Grafana dashboard (docs/grafana/perfdb.json) -----------------------------------

DASHBOARD = Path(settings.BASE_DIR) / "docs" / "grafana" / "perfdb.json"


def dashboard_exprs() -> list[str]:
    board = json.loads(DASHBOARD.read_text())
    return [target["expr"] for panel in board["panels"] for target in panel["targets"]]


def test_the_dashboard_reads_only_metrics_the_app_exports(client):
    client.get("/healthz")  # a labelled histogram shows its series once observed
    exported = {name for name, _ in scrape(client)} | {
        s.name for family in TASK_DURATION.collect() for s in family.samples
    }
    exported |= {f"{TASK_DURATION._name}_bucket", f"{TASK_DURATION._name}_count"}
    used = {name for expr in dashboard_exprs() for name in re.findall(r"perfdb_\w+", expr)}
    assert used and used <= exported, used - exported


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool is not installed")
def test_the_dashboards_queries_are_valid_promql(tmp_path):
    records = [{"record": f"perfdb:board_{i}", "expr": e} for i, e in enumerate(dashboard_exprs())]
    rules = {"groups": [{"name": "dashboard", "rules": records}]}
    path = tmp_path / "rules.yml"
    path.write_text(json.dumps(rules))  # JSON is YAML
    result = subprocess.run(["promtool", "check", "rules", str(path)], capture_output=True)
    assert result.returncode == 0, result.stdout + result.stderr
