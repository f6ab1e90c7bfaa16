"""Fixtures of the alerting tests: who is emailed."""

from __future__ import annotations

import pytest

from tests.factories import SubscriptionFactory


@pytest.fixture
def subscriber(user):
    """``lab`` subscribed to every throughput alert, emailed at once to lab@lab.example."""
    return SubscriptionFactory(user=user, email="lab@lab.example", metric_pattern="thr*")
