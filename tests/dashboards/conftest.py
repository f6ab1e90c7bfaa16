"""Fixtures of the page tests (the dashboard data and the browser are in tests/conftest.py)."""

from __future__ import annotations

import pytest

from perfdb.models import Alert, Metric, Setup
from tests.dashboards.data import load
from tests.perfdb.alerting.builds import check, ingest_runs


@pytest.fixture
def alert(tmp_path):
    """An open alert raised by the real pipeline (two uploads, each checked): 2.4.20+O(1)
    about 15 % below stock 2.4.20, three trials a side."""
    check(ingest_runs(tmp_path, "a.tar.gz", [("2.4.20", "[]", (13000, 13100, 12950))]))
    check(ingest_runs(tmp_path, "b.tar.gz", [("2.4.20", '["O(1)"]', (11000, 11100, 11050))]))
    return Alert.objects.get(metric__name="throughput")


@pytest.fixture
def series(tmp_path):
    """The dashboard data's 10-room VolanoMark setup and its throughput: one chart line."""
    load(tmp_path)
    setup = Setup.objects.get(params={"rooms": 10, "messages": 1000})
    return setup, Metric.objects.get(name="throughput")
