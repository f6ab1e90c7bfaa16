"""Fixtures of the alerting tests: who is emailed, and how a series is read."""

from __future__ import annotations

import pytest

from tests.factories import SubscriptionFactory


@pytest.fixture
def subscriber(user):
    """``lab`` subscribed to every throughput alert, emailed at once to lab@lab.example."""
    return SubscriptionFactory(user=user, email="lab@lab.example", metric_pattern="thr*")


@pytest.fixture
def step_scan_from_six_kernels(settings):
    """For series drawn for the step scan: the service reads them with it from six kernels
    (PERFDB_SHORT_KERNELS), not kernel by kernel."""
    settings.PERFDB_SHORT_KERNELS = 6
