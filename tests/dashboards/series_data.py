"""A run to add to the dashboard data's series (data, not tests; the ``series`` fixture is in
tests/dashboards/conftest.py)."""

from __future__ import annotations

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
