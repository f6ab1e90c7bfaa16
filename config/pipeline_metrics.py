"""The pipeline's state, read from Redis and PostgreSQL when Prometheus scrapes.

Queue depth is the length of each Celery queue's Redis list (the broker is Redis: kombu
keeps a queue as a list, one more per priority step), for every queue the settings route
a task to. The rest comes from four grouped queries (uploads, regression checks owed, the
outbox, alerts), each a count by status or an age: nothing per user, no text. A source that
does not answer is reported by ``perfdb_metrics_source_up`` = 0 and its metrics are left
out for that scrape (a missing series, never a made-up zero).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta

import redis
from django.conf import settings
from django.db.models import Count, Min
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

log = logging.getLogger(__name__)

# kombu's Redis transport: a message of priority p > 0 waits in "<queue>\x06\x16<p>".
PRIORITY_SEP = "\x06\x16"
PRIORITY_STEPS = (3, 6, 9)
# kombu's hash of messages delivered to a worker and not yet acknowledged (acks_late: the
# tasks running now and those prefetched).
UNACKED_KEY = "unacked"


def celery_queues() -> list[str]:
    """Every queue a task can be sent to: the default one and each route's."""
    names = {settings.CELERY_TASK_DEFAULT_QUEUE}
    names.update(route["queue"] for route in settings.CELERY_TASK_ROUTES.values())
    return sorted(names)


def _age(now: datetime, when: datetime | None) -> float:
    return max(0.0, (now - when).total_seconds()) if when else 0.0


def _redis_metrics() -> list[Metric]:
    client = redis.Redis.from_url(
        settings.CELERY_BROKER_URL, socket_timeout=1.0, socket_connect_timeout=0.5
    )
    queues = celery_queues()
    pipe = client.pipeline(transaction=False)
    for queue in queues:
        pipe.llen(queue)
        for step in PRIORITY_STEPS:
            pipe.llen(f"{queue}{PRIORITY_SEP}{step}")
    pipe.hlen(UNACKED_KEY)
    sizes = pipe.execute()
    per_queue = len(PRIORITY_STEPS) + 1
    depth = GaugeMetricFamily(
        "perfdb_celery_queue_length",
        "Tasks waiting in a Celery queue (the broker's list), by queue.",
        labels=["queue"],
    )
    for i, queue in enumerate(queues):
        depth.add_metric([queue], sum(sizes[i * per_queue : (i + 1) * per_queue]))
    unacked = GaugeMetricFamily(
        "perfdb_celery_unacked_messages",
        "Tasks handed to a worker and not yet acknowledged (running or prefetched).",
        value=sizes[-1],
    )
    return [depth, unacked]


def _by_status(
    name: str, doc: str, statuses: Iterable[str], counts: dict[str, int]
) -> GaugeMetricFamily:
    """A gauge with every status of a model, zero for the ones with no rows: a status that
    empties must read 0, not vanish."""
    family = GaugeMetricFamily(name, doc, labels=["status"])
    for status in statuses:
        family.add_metric([status], counts.get(status, 0))
    return family


def _upload_metrics(now: datetime) -> list[Metric]:
    """Two queries: uploads by status (with the oldest of each), the checks owed."""
    from perfdb.models import Upload

    uploads = list(
        Upload.objects.order_by().values("status").annotate(n=Count("id"), oldest=Min("created_at"))
    )
    waiting = [
        row["oldest"]
        for row in uploads
        if row["status"] in (Upload.Status.QUEUED, Upload.Status.PROCESSING)
    ]
    owed = Upload.objects.filter(detection_due_at__isnull=False).aggregate(
        n=Count("id"), first_due=Min("detection_due_at")
    )
    # A check is owed from the commit of the runs, which set its due time this far ahead.
    owed_since = (
        owed["first_due"] - timedelta(seconds=settings.FOLLOWUP_DEADLINE_SECONDS)
        if owed["first_due"]
        else None
    )
    return [
        _by_status(
            "perfdb_uploads",
            "Uploads by status (queued, processing, done, failed).",
            Upload.Status.values,
            {row["status"]: row["n"] for row in uploads},
        ),
        GaugeMetricFamily(
            "perfdb_uploads_oldest_waiting_age_seconds",
            "Age of the oldest upload still queued or processing; 0 when none waits.",
            value=_age(now, min(waiting) if waiting else None),
        ),
        GaugeMetricFamily(
            "perfdb_detection_owed",
            "Uploads whose stored runs still wait for their regression check.",
            value=owed["n"],
        ),
        GaugeMetricFamily(
            "perfdb_detection_lag_seconds",
            "How long the oldest owed regression check has waited since its runs were "
            "stored; 0 when none is owed.",
            value=_age(now, owed_since),
        ),
    ]


def _alerting_metrics(now: datetime) -> list[Metric]:
    """Two queries: the outbox by status (with the oldest of each), alerts by status."""
    from perfdb.models import Alert, OutboxMessage

    outbox = list(
        OutboxMessage.objects.order_by()
        .values("status")
        .annotate(n=Count("id"), oldest=Min("created_at"))
    )
    unsent = [
        row["oldest"]
        for row in outbox
        if row["status"] in (OutboxMessage.Status.PENDING, OutboxMessage.Status.SENDING)
    ]
    alerts = dict(Alert.objects.order_by().values_list("status").annotate(n=Count("id")))
    return [
        _by_status(
            "perfdb_outbox_messages",
            "Alert emails in the outbox by status (pending, sending, sent, failed).",
            OutboxMessage.Status.values,
            {row["status"]: row["n"] for row in outbox},
        ),
        GaugeMetricFamily(
            "perfdb_outbox_oldest_pending_age_seconds",
            "Age of the oldest email not yet sent (pending or being sent); 0 when none.",
            value=_age(now, min(unsent) if unsent else None),
        ),
        _by_status(
            "perfdb_alerts", "Alerts by status (triage state).", Alert.Status.values, alerts
        ),
    ]


def _database_metrics() -> list[Metric]:
    now = timezone.now()
    return _upload_metrics(now) + _alerting_metrics(now)


class PipelineCollector(Collector):
    """Reads the state at each scrape; each source on its own, so one down still leaves the
    other's metrics."""

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily(
            "perfdb_metrics_source_up",
            "1 when this scrape could read the source (redis, database), else 0.",
            labels=["source"],
        )
        for source, read in (("redis", _redis_metrics), ("database", _database_metrics)):
            try:
                metrics = read()
            except Exception as exc:  # any failure: the source is down for this scrape
                log.warning("metrics: could not read %s: %s", source, exc)
                up.add_metric([source], 0)
                continue
            up.add_metric([source], 1)
            yield from metrics
        yield up
