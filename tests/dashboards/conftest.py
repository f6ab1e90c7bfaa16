"""Fixtures of the page tests (the dashboard data and the browser are in tests/conftest.py)."""

from __future__ import annotations

import pytest

from perfdb.models import Metric, Setup
from tests.dashboards.data import load


@pytest.fixture
def series(tmp_path):
    """The dashboard data's 10-room VolanoMark setup and its throughput: one chart line."""
    load(tmp_path)
    setup = Setup.objects.get(params={"rooms": 10, "messages": 1000})
    return setup, Metric.objects.get(name="throughput")
