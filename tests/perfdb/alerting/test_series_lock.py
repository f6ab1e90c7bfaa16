"""Two regression checks of one series at once, each in its own thread with its own database
connection: the second waits for the first (``series_lock``, a transaction advisory lock per
series) and then reads everything the first wrote, so neither writes from a stale view.

``test_a_second_check_waits_and_sees_the_first_ones_alerts``: the series is
test_moves.py's (a 5-trial step at 2.6.191, seed 1058). Check A is
2.6.192's upload, stopped inside its transaction after it read the series (the
``detection-loaded`` pause point); meanwhile 2.6.193-199 are ingested and their check B
starts. A makes a pending alert at 2.6.192 (the newest kernel it saw); B, which sees
2.6.193-199, should clear it. Before the lock, B waited only on the alert rows A had locked,
read the alerts without A's new one, and left it pending.

A writer that does not take the lock (a worker of the previous release during a deploy, the
admin) can still insert an alert a check collides with: the check then runs again from a
fresh read instead of failing with everything it found.
"""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections

from ingest import queue as ingest_queue
from perfdb.alerting import queue, series_lock
from perfdb.models import Alert, OutboxMessage, Run
from tests.factories import AlertFactory
from tests.perfdb.alerting.builds import check, ingest_runs
from tests.perfdb.alerting.latency import (
    kernel,
    latency_alerts,
    upload_kernels,
)
from tests.perfdb.alerting.polling import wait_for
from tests.perfdb.alerting.step_series import STEP_DOWN

pytestmark = pytest.mark.django_db(transaction=True)

POINT = "detection-loaded"


@pytest.fixture(autouse=True)
def _checks_driven_here(monkeypatch):
    """This test ingests and checks itself: nothing is queued to a worker that may be running
    for the session (it would ingest or check the same uploads at its own moment)."""
    monkeypatch.setattr(ingest_queue, "ingest_upload", lambda **k: None)
    monkeypatch.setattr(queue, "regressions_check", lambda **k: None)
    monkeypatch.setattr(queue, "notify_upload", lambda **k: None)


def ingest_kernels(tmp_path, first: int, end: int):
    """Kernels ``first``..``end - 1`` ingested, not checked."""
    return upload_kernels(tmp_path, first, end, checked=False)


class Check(threading.Thread):
    """``check(upload)`` in a thread, on the thread's own database connection."""

    def __init__(self, upload):
        super().__init__(daemon=True)
        self.upload, self.error = upload, None

    def run(self):
        try:
            check(self.upload)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.error = exc
        finally:
            connections.close_all()


def waiting_sessions() -> int:
    """Sessions of this database waiting for a lock (the second check)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
            "WHERE NOT l.granted AND a.datname = current_database()"
        )
        return cursor.fetchone()[0]


def series_lock_waits() -> int:
    """Sessions waiting for a check's series lock."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = %s "
            "AND NOT granted",
            [series_lock.CHECK_LOCK],
        )
        return cursor.fetchone()[0]


def test_a_second_check_waits_and_sees_the_first_ones_alerts(tmp_path, monkeypatch):
    upload_kernels(tmp_path, 0, 20)  # 2.6.172-191: a pending alert at 2.6.191
    first = latency_alerts().get()
    assert first.status == "pending"
    a_upload = ingest_kernels(tmp_path, 20, 21)
    monkeypatch.setenv("PERFDB_PAUSE_AT", POINT)
    monkeypatch.setenv("PERFDB_PAUSE_DIR", str(tmp_path))
    a = Check(a_upload)
    a.start()
    wait_for((tmp_path / f"{POINT}.reached").exists, "check A inside its transaction")
    b_upload = ingest_kernels(tmp_path, 21, 28)
    b = Check(b_upload)
    b.start()
    wait_for(lambda: waiting_sessions() > 0, "check B to wait for A")
    assert series_lock_waits() == 1  # on the series lock, before reading anything
    (tmp_path / f"{POINT}.release").touch()
    a.join(60)
    b.join(60)
    assert not a.is_alive() and not b.is_alive()
    assert a.error is None and b.error is None, (a.error, b.error)
    # as if checked one after the other: the step confirmed at 2.6.191 with B's upload,
    # A's pending alert at 2.6.192 cleared by B (2.6.193 did not confirm it)
    first.refresh_from_db()
    assert first.status == "untriaged" and first.notify_upload_id == b_upload.pk
    second = latency_alerts().get(candidate_run__kernel__version=kernel(20))
    assert second.upload_id == a_upload.pk
    assert second.status == "cleared", second.status
    assert latency_alerts().count() == 2
    assert not OutboxMessage.objects.exists()  # no subscriber: nothing queued twice either


def test_a_check_colliding_with_an_alert_written_meanwhile_runs_again(
    tmp_path, monkeypatch, settings
):
    """step_series.STEP_DOWN: the 12th kernel's check moves the alert from 2.5.10 to 2.5.9.
    While it is stopped after reading, another writer puts a pending alert on 2.5.9 with the
    step scan's method: the move's update collides with it (alerts are unique per run and
    method). The check runs again, sees that alert and merges it: one alert, moved."""
    settings.PERFDB_SHORT_KERNELS = 6  # the series was drawn for the step scan from six kernels
    for i, values in enumerate(STEP_DOWN[:11]):
        check(ingest_runs(tmp_path, f"u{i}.tar.gz", [(f"2.5.{i + 1}", "[]", values)]))
    alert = Alert.objects.get(metric__name="throughput", direction="regression")
    assert alert.candidate_run.kernel.version == "2.5.10" and alert.status == "untriaged"
    last = ingest_runs(tmp_path, "u11.tar.gz", [("2.5.12", "[]", STEP_DOWN[11])])
    monkeypatch.setenv("PERFDB_PAUSE_AT", POINT)
    monkeypatch.setenv("PERFDB_PAUSE_DIR", str(tmp_path))
    a = Check(last)
    a.start()
    wait_for((tmp_path / f"{POINT}.reached").exists, "the check inside its transaction")
    other = AlertFactory(
        metric=alert.metric,
        candidate_run=Run.objects.get(kernel__version="2.5.9"),
        method="changepoint",
        status="pending",
        change_pct=-9.0,
        confidence=0.9,
    )
    (tmp_path / f"{POINT}.release").touch()
    a.join(60)
    assert not a.is_alive() and a.error is None, a.error
    (moved,) = Alert.objects.filter(metric__name="throughput", direction="regression")
    assert moved.pk == alert.pk and moved.candidate_run.kernel.version == "2.5.9"
    assert moved.events.get(field="merged").old.startswith(f"alert {other.pk}: pending, ")
    assert moved.notify_upload_id == alert.notify_upload_id  # not emailed again
