"""The activity page (dashboards/pages/activity.py): the runs given overlaid, and its CSV
without the since-boot row, over data stored by the real ingest pipeline."""

from __future__ import annotations

import csv
import io

import pytest

from tests.dashboards.page_figures import figure

pytestmark = pytest.mark.django_db


def test_activity_overlays_the_runs_given(client, data):
    a, b = data.run("2.4.20"), data.run("2.5.25")
    response = client.get(f"/activity/?runs={a.pk},{b.pk}&groups=cpu")
    fig = figure(response, "fig-vmstat")
    assert {t["customdata"][0] for t in fig["data"]} == {a.pk, b.pk}
    assert {t["name"].split(":")[0] for t in fig["data"]} == {"us", "sy", "id", "wa"}


def test_activity_csv_leaves_out_the_since_boot_row(client, data):
    run = data.run("2.4.20")
    response = client.get(f"/activity/?runs={run.pk}&format=csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    cs = [float(r["value"]) for r in rows if r["column"] == "cs"]
    assert cs == [15000 + 100 + i * 50 for i in range(6)]
