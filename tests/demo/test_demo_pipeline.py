"""The demo loaded the way a new user gets it: every bundle through Celery and a real worker.

Checks every number of the papers once stored, and that detection flags the papers'
regressions (and records their improvements as improvements), with one email per upload.
"""

from __future__ import annotations

import pytest

from ingest.demo import demo_load
from perfdb.alerting.regressions import regressions_recheck_all
from perfdb.models import (
    Alert,
    OutboxMessage,
    ProfileEntry,
    Result,
    Run,
    Sample,
)
from tests.conftest import wait_for_worker_idle
from tests.demo.paper_values import PAPER_VALUES, PaperValue
from tests.factories import SubscriptionFactory, ThresholdFactory

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def _runs(expected: PaperValue):
    runs = Run.objects.filter(
        upload__filename=f"{expected.bundle}.tar.gz",
        kernel__version=expected.run.kernel,
        patch_set__name="+".join(expected.run.patches),
    )
    if expected.run.hardware:
        runs = runs.filter(setup__hardware__name=expected.run.hardware)
    for name, value in expected.run.params:
        runs = runs.filter(**{f"setup__params__{name}": value})
    return runs


def _stored_values(expected: PaperValue) -> list[tuple[float, str | None, str | None]]:
    runs = _runs(expected)
    metric = expected.metric
    if metric.startswith("vmstat:"):
        column, row = metric[len("vmstat:") :].rstrip("]").split("[")
        series = Sample.objects.filter(run__in=runs, source="vmstat", column=column)
        return [
            (values[int(row)], None, None)
            for values in series.values_list("values", flat=True)
            if int(row) < len(values)
        ]
    if metric.startswith("profile:"):
        _, function, field = metric.split(":")
        rows = ProfileEntry.objects.filter(run__in=runs, function=function)
        return [(v, None, None) for v in rows.values_list(field, flat=True)]
    rows = Result.objects.filter(run__in=runs, metric__name=metric)
    return list(rows.values_list("value", "metric__unit", "metric__better"))


def _load_demo(smtp_server, user):
    _, handler = smtp_server
    handler.messages.clear()
    SubscriptionFactory(user=user, email="sjas@lab.example", workload_pattern="SPECjAppServer2002")
    uploads = demo_load(wait_seconds=120)
    assert [u.status for u in uploads] == ["done"] * len(uploads), [u.error for u in uploads]
    return uploads, handler


def test_every_paper_number_is_stored_with_its_unit_and_direction(
    celery_worker, smtp_server, user, client
):
    uploads, _ = _load_demo(smtp_server, user)
    overview = client.get("/").content.decode()
    assert "published results of the seed papers" in overview
    assert "Ottawa Linux Symposium 2003" in overview and "LKML" in overview
    assert all(f"/uploads/{u.pk}/" in overview for u in uploads)
    wrong = []
    for expected in PAPER_VALUES:
        stored = _stored_values(expected)
        ok = any(
            value == pytest.approx(expected.value, rel=1e-12, abs=1e-12)
            and (expected.unit is None or unit == expected.unit)
            and (expected.better is None or better == expected.better)
            for value, unit, better in stored
        )
        if not ok:
            wrong.append((expected.source, expected.metric, expected.value, stored[:3]))
    assert not wrong, wrong[:10]


def _alert(workload: str, kernel: str, patches: str, metric_prefix: str) -> Alert:
    return Alert.objects.get(
        setup__workload__name=workload,
        candidate_run__kernel__version=kernel,
        candidate_run__patch_set__name=patches,
        metric__name__startswith=metric_prefix,
    )


def test_the_papers_regressions_are_flagged_and_mailed_once_staff_set_a_threshold(
    celery_worker, smtp_server, user
):
    """The papers publish one value a kernel: nothing says how noisy it is, so their
    regressions are flagged pending (shown, not emailed on a guess). A threshold staff set
    for the workload and metric replaces the test: the recheck confirms and mails it once."""
    uploads, handler = _load_demo(smtp_server, user)
    # Detection and email run as their own tasks after each upload commits.
    wait_for_worker_idle()

    trade = _alert("Trade", "2.5.59", "", "tops_rel")
    assert (trade.direction, round(trade.change_pct, 1)) == ("regression", -14.4)
    assert [r.kernel.version for r in trade.baseline_runs.all()] == ["2.4-distro"]

    o1 = _alert("SPECjAppServer2002", "2.4.20", "O(1)", "tops_rel")
    assert (o1.direction, round(o1.change_pct, 1)) == ("regression", -10.6)

    yield_pa = _alert("Trade", "2.5.65", "PA", "pages_rel")
    assert (yield_pa.direction, round(yield_pa.change_pct, 1)) == ("regression", -32.6)

    improvements = Alert.objects.filter(
        setup__workload__name="SPECjAppServer2002",
        candidate_run__kernel__version="2.5.66",
        candidate_run__patch_set__name="",
        metric__name__startswith="tops_rel_base",
    )
    assert sorted(round(a.change_pct, 1) for a in improvements) == [11.6, 24.0]
    assert {a.status for a in improvements} == {"improvement"}

    assert {a.status for a in (trade, o1, yield_pa)} == {"pending"}
    assert {a.method for a in (trade, o1, yield_pa)} == {"threshold"}
    assert not OutboxMessage.objects.filter(to="sjas@lab.example").exists()

    ThresholdFactory(workload=o1.setup.workload, metric=o1.metric, threshold_pct=5.0)
    regressions_recheck_all()
    wait_for_worker_idle()
    o1.refresh_from_db()
    assert o1.status == "untriaged" and o1.confirmed_at is not None
    sjas_upload = next(u for u in uploads if "specjappserver" in u.filename)
    sent = OutboxMessage.objects.filter(to="sjas@lab.example")
    assert sent.count() == 1 and sent.get().upload == sjas_upload
    assert len([m for m in handler.messages if m["To"] == "sjas@lab.example"]) == 1
