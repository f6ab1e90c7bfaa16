"""dashboards/api/throttle.py: the series API's throttle refuses what DRF's anonymous and
per-user throttles refuse, with their two counters in one read and one write."""

from __future__ import annotations

import pytest
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle

from perfdb.models import Metric, Setup
from tests.dashboards.data import load
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def series_url(tmp_path):
    load(tmp_path)
    setup = Setup.objects.order_by("id").first()
    metric = Metric.objects.filter(results__setup_id=setup.pk).first()
    return f"/api/series/?setup={setup.pk}&metric={metric.pk}"


@pytest.mark.parametrize("throttle", [AnonRateThrottle, UserRateThrottle])
def test_anonymous_series_reads_are_throttled_by_either_rate(
    client, monkeypatch, series_url, throttle
):
    monkeypatch.setattr(throttle, "rate", "5/min", raising=False)
    responses = [client.get(series_url) for _ in range(7)]
    assert [r.status_code for r in responses] == [200] * 5 + [429, 429]
    assert 0 < int(responses[-1]["Retry-After"]) <= 60
    other = client.get(series_url, REMOTE_ADDR="10.0.0.9")  # counted per address
    assert other.status_code == 200


def test_a_signed_in_user_is_counted_by_the_user_rate_only(client, monkeypatch, series_url):
    monkeypatch.setattr(AnonRateThrottle, "rate", "2/min", raising=False)
    monkeypatch.setattr(UserRateThrottle, "rate", "4/min", raising=False)
    client.force_login(UserFactory(username="reader"))
    codes = [client.get(series_url).status_code for _ in range(5)]
    assert codes == [200] * 4 + [429]


def test_the_window_slides_request_by_request(client, monkeypatch, series_url):
    """Each request leaves the window ``duration`` seconds after it was made (to the
    second), as in DRF's sliding window: not all at once at the start of a new minute."""
    clock = {"now": 1000.0}
    monkeypatch.setattr(AnonRateThrottle, "rate", "2/min", raising=False)
    monkeypatch.setattr(AnonRateThrottle, "timer", lambda self: clock["now"])
    monkeypatch.setattr(UserRateThrottle, "timer", lambda self: clock["now"])
    codes = {}
    for at in (0, 30, 59, 61, 62, 91):
        clock["now"] = 1000.0 + at
        codes[at] = client.get(series_url).status_code
    assert codes == {0: 200, 30: 200, 59: 429, 61: 200, 62: 429, 91: 200}


def test_the_rest_of_the_api_keeps_its_own_counts(client, series_url):
    """DRF's throttles of the other views read their own keys (a list of times each)."""
    for _ in range(3):
        assert client.get(series_url).status_code == 200
        assert client.get("/api/runs/").status_code == 200


def test_a_bad_series_request_is_counted_too(client, monkeypatch, series_url):
    """Its answer is never cached: counted before its 400, as DRF counts every request."""
    monkeypatch.setattr(AnonRateThrottle, "rate", "2/min", raising=False)
    codes = [client.get("/api/series/?setup=abc&metric=1").status_code for _ in range(3)]
    assert codes == [400, 400, 429]
    assert client.get(series_url).status_code == 429  # the same counts
