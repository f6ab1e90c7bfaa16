"""The admin (perfdb/admin.py): what staff edit there reaches the product. A metric's
direction set in the metric list is kept by later uploads and used by the regression check."""

from __future__ import annotations

import pytest

from perfdb.alerting.regressions import regressions_check_upload
from perfdb.models import Alert, Metric, Run
from tests.bundles import ingest_bundle, make_bundle, manifest_toml, volano_log, volano_run
from tests.dashboards.data import vmstat_text
from tests.factories import StaffFactory

pytestmark = pytest.mark.django_db


def _vmstat_bundle(tmp_path, kernel: str, cs_base: int, name: str):
    files = '{ path = "t.log", parser = "volanomark" }, { path = "vmstat.txt", parser = "vmstat" }'
    text = vmstat_text(1).replace(" 15100 ", f" {cs_base} ")
    rows = text.splitlines()
    # every sample's cs column set to cs_base (+ a little noise)
    head, body = rows[:3], rows[3:]
    body = [
        " ".join(row.split()[:11] + [str(cs_base + 7 * i)] + row.split()[12:])
        for i, row in enumerate(body)
    ]
    return make_bundle(
        tmp_path / name,
        {
            "manifest.toml": manifest_toml(volano_run(kernel, files=files)),
            "t.log": volano_log(13000),
            "vmstat.txt": "\n".join(head + body) + "\n",
        },
    )


def test_staff_set_a_vmstat_direction_in_the_admin_and_a_cs_explosion_alerts(client, tmp_path):
    first = ingest_bundle(_vmstat_bundle(tmp_path, "2.6.0", 15000, "a.tar.gz"))
    assert first.status == "done", first.error
    cs = Metric.objects.get(name="vmstat_cs_mean")
    assert cs.better == "none"  # no direction by default (docs/parsers/vmstat.md)

    client.force_login(StaffFactory(is_superuser=True))
    changelist = client.get("/admin/perfdb/metric/").content.decode()
    assert 'name="form-0-better"' in changelist  # editable in the list
    page = client.get(f"/admin/perfdb/metric/{cs.pk}/change/")
    assert page.status_code == 200
    form = {"name": cs.name, "unit": cs.unit, "better": "lower", "description": ""}
    if "resolution" in page.content.decode():
        form["resolution"] = ""
    response = client.post(f"/admin/perfdb/metric/{cs.pk}/change/", form)
    assert response.status_code == 302, response.content.decode()[:2000]
    cs.refresh_from_db()
    assert cs.better == "lower"

    # A later vmstat upload (its parser says "none") keeps the direction and is tested by it.
    second = ingest_bundle(_vmstat_bundle(tmp_path, "2.6.1", 90000, "b.tar.gz"))
    assert second.status == "done", second.error
    cs.refresh_from_db()
    assert cs.better == "lower"
    setup_id = Run.objects.get(pk=second.run_ids[0]).setup_id
    regressions_check_upload(upload_id=second.pk, series=[(setup_id, cs.pk)])
    alert = Alert.objects.get(metric=cs)
    assert alert.direction == "regression" and alert.change_pct > 100
