"""A run's page (dashboards/pages/run_detail.py): its links to the compare view with the
baseline its alert or its build names."""

from __future__ import annotations

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "kernel, patches, baseline_kernel",
    [("2.5.25", "pri_preempt", "2.5.25"), ("2.5.25", "", "2.4.20")],
)
def test_run_detail_links_to_compare_with_its_baseline(
    client, data, kernel, patches, baseline_kernel
):
    run, baseline = data.run(kernel, patches), data.run(baseline_kernel)
    html = client.get(reverse("run-detail", args=[run.pk])).content.decode()
    assert f"/compare/?base={baseline.pk}&amp;new={run.pk}" in html
