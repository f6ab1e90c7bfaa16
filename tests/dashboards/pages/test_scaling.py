"""The scaling page draws the newest builds by default and lets you pick others (URL).

The scaling page's chart and download."""

from __future__ import annotations

import csv
import io
from statistics import fmean

import pytest

from dashboards.page_data import scaling as scaling_data
from tests.dashboards.data import (
    ROOMS,
    SCALING,
    SERIES,
    kept,
    throughput_id,
)
from tests.dashboards.page_figures import figure
from tests.dashboards.scaling_builds import figure_builds, scaling_runs  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db


def test_default_is_the_newest_builds_and_a_choice_is_kept_in_the_url(
    client,
    scaling_runs,  # noqa: F811
    monkeypatch,
):
    monkeypatch.setattr(scaling_data, "SCALING_MAX_BUILDS", 2)
    default = client.get("/scaling/")
    assert default.status_code == 200
    assert figure_builds(default) == ["2.5.59", "2.5.66"]
    chosen = client.get("/scaling/?builds=2.4.17&builds=2.5.66")
    assert figure_builds(chosen) == ["2.4.17", "2.5.66"]
    assert "builds=2.4.17&amp;builds=2.5.66" in chosen.content.decode()  # the permalink


def test_an_unknown_build_is_a_400(client, scaling_runs):  # noqa: F811
    response = client.get("/scaling/?builds=9.9.9")
    assert response.status_code == 400 and "builds" in response.content.decode()


def test_scaling_draws_one_line_per_build_with_change_first_to_last(client, data):
    response = client.get(f"/scaling/?metric={throughput_id()}&param=rooms")
    fig = figure(response, "fig-scaling")
    by_name = {t["name"].split(":")[0]: t for t in fig["data"]}
    for kernel, values in SCALING.items():
        # rooms = 10 on these kernels is the series run, whose value is its mean
        series_row = next(s for s in SERIES if s[0] == kernel and not s[1])
        expected = list(values)
        expected[ROOMS.index(10)] = fmean(kept(series_row[3], series_row[4]))
        trace = by_name[kernel]
        assert trace["x"] == list(ROOMS) and trace["y"] == pytest.approx(expected)
        change = (expected[-1] - expected[0]) / expected[0] * 100
        assert f"{change:+.1f}%" in trace["name"]


def test_scaling_csv(client, data):
    response = client.get(f"/scaling/?metric={throughput_id()}&param=rooms&format=csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert {float(r["param_value"]) for r in rows} == {float(r) for r in ROOMS}
