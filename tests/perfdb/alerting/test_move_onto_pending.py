"""A confirmed step placed anew on a kernel that already holds a pending or cleared alert of
its direction: one alert (the confirmed one, moved), emailed once, the other's history kept.

The series is the accuracy bench's (``detector_suite.make_series``, seed 1058, a 5-trial
step, values rounded): 2.6.191 jumps, 2.6.192 sits a little lower. Uploaded as the lab
would (2.6.172-191 together, then 192, 193, 194-199 together, then 200), the checks go:

- 2.6.191 newest: a pending alert there; 2.6.192 newest: a second pending alert there;
- 2.6.193 confirms the step at 2.6.191 (emailed with that upload) and clears 2.6.192's;
- 2.6.200: the step scan now places the step at 2.6.192, where the cleared alert sits.

Before, that confirmed the cleared alert and emailed the same step a second time, leaving
the first alert on 2.6.191: two open alerts and two emails for one regression.
"""

from __future__ import annotations

import pytest
from django.test import Client

from ingest.services import upload_create, upload_ingest
from perfdb.alerting.notify import outbox_fill_for_upload
from perfdb.models import Alert, AlertEvent, OutboxMessage, Subscription
from tests.bundles import make_bundle, manifest_toml, volano_run
from tests.perfdb.alerting.test_regressions import check

pytestmark = pytest.mark.django_db

LATENCY = [
    (1263, 1308, 1260, 1227, 1248),
    (1223, 1250, 1280, 1268, 1215),
    (1235, 1251, 1283, 1271, 1275),
    (1322, 1281, 1259, 1240, 1310),
    (1244, 1267, 1259, 1312, 1260),
    (1316, 1278, 1300, 1223, 1303),
    (1266, 1276, 1230, 1250, 1209),
    (1265, 1186, 1276, 1285, 1266),
    (1264, 1270, 1266, 1231, 1266),
    (1275, 1221, 1261, 1266, 1251),
    (1281, 1217, 1247, 1254, 1242),
    (1294, 1271, 1244, 1276, 1288),
    (1223, 1224, 1291, 1223, 1276),
    (1261, 1301, 1239, 1294, 1243),
    (1284, 1261, 1226, 1293, 1263),
    (1263, 1266, 1194, 1211, 1251),
    (1243, 1239, 1258, 1227, 1306),
    (1253, 1259, 1229, 1273, 1305),
    (1293, 1272, 1255, 1282, 1250),
    (1402, 1427, 1407, 1424, 1436),  # 2.6.191: the step (confirmed here first)
    (1346, 1364, 1341, 1379, 1357),  # 2.6.192: where the scan places it at the end
    (1402, 1397, 1379, 1394, 1394),
    (1428, 1399, 1397, 1391, 1373),
    (1403, 1354, 1381, 1441, 1391),
    (1431, 1383, 1376, 1471, 1370),
    (1413, 1402, 1417, 1349, 1387),
    (1404, 1442, 1350, 1386, 1398),
    (1422, 1382, 1434, 1384, 1358),
    (1408, 1393, 1369, 1406, 1408),
]
METRIC = '\n[metric.latency]\nunit = "ms"\nbetter = "lower"\n'


def kernel(index: int) -> str:
    return f"2.6.{172 + index}"


def upload_kernels(tmp_path, first: int, end: int, checked: bool = True):
    """Kernels ``first``..``end - 1`` of the series in one bundle, ingested and (unless
    ``checked`` is False) checked."""
    runs = [
        volano_run(kernel(i), extra=f"metrics = {{ latency = {list(LATENCY[i])} }}")
        for i in range(first, end)
    ]
    name = f"k{first}-{end}.tar.gz"
    path = make_bundle(tmp_path / name, {"manifest.toml": manifest_toml(*runs) + METRIC})
    with open(path, "rb") as stream:
        made, _ = upload_create(stream=stream, filename=name)
    upload_ingest(upload_id=made.pk)
    made.refresh_from_db()
    assert made.status == "done", made.error
    if checked:
        check(made)
    return made


def latency_alerts():
    return Alert.objects.filter(metric__name="latency", direction="regression")


@pytest.fixture
def subscriber(user):
    return Subscription.objects.create(user=user, email="lab@lab.example", metric_pattern="lat*")


def replay_to_the_cleared_alert(tmp_path):
    """The series up to 2.6.199: the step confirmed at 2.6.191 (and emailed), a cleared
    alert at 2.6.192. Returns (confirming upload, confirmed alert, cleared alert)."""
    upload_kernels(tmp_path, 0, 20)
    upload_kernels(tmp_path, 20, 21)
    confirming = upload_kernels(tmp_path, 21, 22)
    upload_kernels(tmp_path, 22, 28)
    first = latency_alerts().get(candidate_run__kernel__version=kernel(19))
    other = latency_alerts().get(candidate_run__kernel__version=kernel(20))
    assert first.status == "untriaged" and first.notify_upload_id == confirming.pk
    assert other.status == "cleared" and other.confirmed_at is None
    assert other.notify_upload_id is None
    return confirming, first, other


def test_the_confirmed_alert_moves_onto_a_cleared_one_and_is_emailed_once(tmp_path, subscriber):
    confirming, first, other = replay_to_the_cleared_alert(tmp_path)
    assert len(outbox_fill_for_upload(upload_id=confirming.pk)) == 1
    first.status = Alert.Status.ACKNOWLEDGED  # triaged before the move: kept
    first.save()
    other_history = set(other.events.values_list("pk", flat=True))
    assert other_history  # "cleared (the next kernel did not confirm it ...)"
    last = upload_kernels(tmp_path, 28, 29)
    (alert,) = latency_alerts()  # one alert for one step
    assert alert.pk == first.pk and alert.candidate_run.kernel.version == kernel(20)
    assert alert.status == "acknowledged" and alert.notify_upload_id == confirming.pk
    assert not Alert.objects.filter(pk=other.pk).exists()
    # emailed once: nothing for the last upload, one message in all
    assert outbox_fill_for_upload(upload_id=last.pk) == []
    assert OutboxMessage.objects.count() == 1
    # history: the move, the merge, and the merged alert's own events, on the alert
    (move,) = alert.events.filter(field="kernel")
    assert move.old.startswith(f"{kernel(19)} (run ") and move.new.startswith(f"{kernel(20)} (")
    (merge,) = alert.events.filter(field="merged")
    assert merge.old.startswith(f"alert {other.pk}: cleared, on {kernel(20)} (run ")
    assert f"upload {last.pk}'s check" in merge.new and "not emailed" in merge.new
    assert other_history <= set(alert.events.values_list("pk", flat=True))
    # the merged alert's page leads to the alert that absorbed it
    gone = Client().get(f"/alerts/{other.pk}/")
    assert gone.status_code == 302 and gone["Location"] == f"/alerts/{alert.pk}/"
    assert Client().get(f"/alerts/{alert.pk + other.pk + 1000}/").status_code == 404
    # checking again changes nothing
    assert check(last) == 0
    assert latency_alerts().count() == 1 and alert.events.filter(field="merged").count() == 1


def test_a_pending_alert_on_the_new_kernel_is_merged_too(tmp_path, subscriber):
    """The same with the other alert still pending (a check that has not cleared it yet,
    or a pairwise one): merged, never emailed, its notes kept."""
    confirming, first, other = replay_to_the_cleared_alert(tmp_path)
    Alert.objects.filter(pk=other.pk).update(status="pending", method="welch", notes="seen")
    AlertEvent.objects.create(alert=other, field="notes", old="", new="seen")
    last = upload_kernels(tmp_path, 28, 29)
    (alert,) = latency_alerts()
    assert alert.pk == first.pk and alert.candidate_run.kernel.version == kernel(20)
    assert alert.status == "untriaged" and alert.notify_upload_id == confirming.pk
    assert "seen" in alert.notes
    assert alert.events.filter(field="notes", new="seen").exists()
    assert alert.events.get(field="merged").old.startswith(f"alert {other.pk}: pending, ")
    assert outbox_fill_for_upload(upload_id=last.pk) == []
