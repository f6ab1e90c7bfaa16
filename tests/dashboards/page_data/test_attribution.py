"""Patch-stack attribution on the compare page and the alert page, over ingested runs."""

from __future__ import annotations

import csv
import io

import pytest

from perfdb.models import Metric, Run
from tests.dashboards.evidence_data import load_stack
from tests.dashboards.page_figures import figure
from tests.factories import AlertFactory

pytestmark = pytest.mark.django_db


def _run(upload, patches: str) -> Run:
    return Run.objects.get(pk__in=upload.run_ids, patch_set__name=patches)


def test_compare_stock_with_the_stack_shows_a_waterfall_naming_p2(client, tmp_path):
    upload = load_stack(tmp_path)
    stock, stack = _run(upload, ""), _run(upload, "p1+p2+p3")
    page = client.get(f"/compare/?base={stock.pk}&new={stack.pk}")
    html = page.content.decode()
    assert 'id="attribution-message"' in html and "p2 moved it" in html
    fig = figure(page, "fig-attribution")
    assert fig["data"][0]["type"] == "waterfall"
    assert fig["data"][0]["measure"] == ["absolute", "relative", "relative", "relative", "absolute"]
    text = client.get(
        f"/compare/?base={stock.pk}&new={stack.pk}&format=csv&chart=attribution"
    ).content.decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["patch"] for r in rows] == ["p1", "p2", "p3"]
    assert [r["verdict"] for r in rows] == ["not significant", "regression", "not significant"]


def test_missing_prefix_says_which_run_would_settle_it(client, tmp_path):
    runs = (
        ("2.5.66", (), (100.0, 101.0, 99.0, 100.5)),
        ("2.5.66", ("p1", "p2"), (90.0, 91.0, 89.5, 90.5)),
    )
    upload = load_stack(tmp_path, runs)
    stock, stack = _run(upload, ""), _run(upload, "p1+p2")
    html = client.get(f"/compare/?base={stock.pk}&new={stack.pk}").content.decode()
    assert "run 2.5.66 + p1 alone" in html and "run 2.5.66 + p2 alone" in html


def test_alert_on_a_stacked_build_names_the_patch(client, tmp_path):
    upload = load_stack(tmp_path)
    stock, stack = _run(upload, ""), _run(upload, "p1+p2+p3")
    alert = AlertFactory(
        metric=Metric.objects.get(name="tops"),
        candidate_run=stack,
        change_pct=-10.0,
        method="welch",
    )
    alert.baseline_runs.set([stock])
    html = client.get(f"/alerts/{alert.pk}/").content.decode()
    assert 'id="alert-attribution"' in html and "p2 moved it" in html
