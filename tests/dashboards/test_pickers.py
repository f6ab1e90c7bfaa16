"""The pickers' choice lists (dashboards/chart_queries/pickers.py): a setup with its metrics
in one query, as the two reads it replaces give them."""

from __future__ import annotations

import pytest

from dashboards import chart_queries as cq
from perfdb.models import Setup
from tests.dashboards.data import load

pytestmark = pytest.mark.django_db


def test_a_setup_with_its_metrics_is_what_the_pickers_list(tmp_path, django_assert_num_queries):
    load(tmp_path)
    for setup in Setup.objects.all():
        with django_assert_num_queries(1):
            found, metrics = cq.setup_metrics(setup_id=setup.pk)
        (expected,) = cq.setup_choices(setup_id=setup.pk) or [None]
        assert found == expected
        assert metrics == (cq.metric_choices(setup_ids=[setup.pk]) if expected else [])


def test_a_setup_without_runs_has_no_choices(db):
    assert cq.setup_metrics(setup_id=987654) == (None, [])
