"""GET /api/compare/ (dashboards/api/compare.py): its rows, with Welch's p-value, and its
place in the schema, over data stored by the real ingest pipeline."""

from __future__ import annotations

from statistics import fmean

import pytest

from tests.dashboards.data import (
    SERIES,
    kept,
)

pytestmark = pytest.mark.django_db


def test_compare_api_rows(client, data):
    from scipy import stats

    base, new = data.run("2.5.25"), data.run("2.5.25", "pri_preempt")
    body = client.get(f"/api/compare/?base={base.pk}&new={new.pk}").json()
    row = next(r for r in body["rows"] if r["metric"] == "throughput")
    base_values, new_values = kept(SERIES[1][3], True), list(SERIES[2][3])
    assert row["base_mean"] == pytest.approx(fmean(base_values))
    assert row["new_n"] == 3 and row["unit"] == "msg/s"
    expected_p = stats.ttest_ind(base_values, new_values, equal_var=False).pvalue
    assert row["p_value"] == pytest.approx(expected_p)
    assert row["better"] is True


def test_compare_api_is_in_the_schema(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").content.decode()
    assert "/api/compare/" in schema
