"""A run to add to the dashboard data's series, and that series as a fixture: the series
cache tests (a fixture and data, not tests)."""

from __future__ import annotations

import pytest

from perfdb.models import Metric, Setup
from tests.dashboards.data import load

NEW_RUN = """format = 1
[[run]]
workload = "VolanoMark"
workload_version = "2.1.2"
kernel = "2.6.0"
hardware = "P8"
mode = "UP"
params = { rooms = 10, messages = 1000 }
metrics = { throughput = 4242.5 }
"""


@pytest.fixture
def series(tmp_path):
    load(tmp_path)
    setup = Setup.objects.get(params={"rooms": 10, "messages": 1000})
    return setup, Metric.objects.get(name="throughput")
