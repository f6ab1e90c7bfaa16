"""The kernel-time page (dashboards/pages/kernel_time.py): the top functions the URL asks
for, a panel per setup labelled by build, values from readprofile, and its downloads, over
data stored by the real ingest pipeline."""

from __future__ import annotations

import csv
import io
import json

import pytest

from tests.dashboards.kernel_time_data import add_rooms_5
from tests.dashboards.page_figures import figure

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("top", [3, 5])
def test_top_n_functions_comes_from_the_url(client, data, top):
    response = client.get(f"/kernel-time/?top={top}")
    fig = figure(response, "fig-functions")
    names = [t["name"] for t in fig["data"]]
    assert len(names) == top + 2 and names[-2:] == ["other", "idle"]  # the top N busy ones
    assert "default_idle" not in names  # most of data.py's ticks, but idle: apart


def test_kernel_time_draws_a_panel_per_setup_labelled_by_build(client, data, tmp_path):
    add_rooms_5(tmp_path)
    response = client.get("/kernel-time/")
    fig = figure(response, "fig-kernel-time")
    panels = [k for k in fig["layout"] if k.startswith("xaxis")]
    drawn = {(t["xaxis"], tuple(t["customdata"])) for t in fig["data"]}
    assert len(panels) == len(fig["layout"]["annotations"]) == len(drawn) == 2
    titles = [a["text"] for a in fig["layout"]["annotations"]]
    assert titles == ["<b>rooms=5</b> · 2 runs", "<b>rooms=10</b> · 4 runs"]
    labels = {x for t in fig["data"] for x in t["x"]}
    assert "2.5.25+pri_preempt" in labels and not any("rooms" in x for x in labels)


def test_kernel_time_values_come_from_readprofile(client, data):
    body = json.loads(client.get("/kernel-time/?format=json&chart=kernel-time").content)
    row = next(r for r in body["rows"] if r["kernel"] == "2.4.20")
    total, idle, sched = 20000, 8000, 2000  # run 0 of the bundle
    busy = (total - idle) / total * 100
    assert row["kernel_pct"] == pytest.approx(busy)
    assert row["scheduler_pct"] == pytest.approx(sched / (total - idle) * 100 * busy / 100)


def test_kernel_functions_download(client, data):
    response = client.get("/kernel-time/?format=csv&chart=kernel-functions")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    row = next(r for r in rows if r["kernel"] == "2.4.20" and r["function"] == "schedule")
    assert float(row["share_pct"]) == pytest.approx(2000 / 20000 * 100)
