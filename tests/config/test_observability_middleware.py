"""The outermost middleware: request ids in and out, on every log line of the request, and
the request's duration by view (config/observability_middleware.py)."""

from __future__ import annotations

import logging

import pytest
from prometheus_client import REGISTRY

from perfdb.operations.log_context import ContextFilter

pytestmark = pytest.mark.django_db


def test_a_request_gets_an_id_and_a_proxys_id_is_kept(client):
    made = client.get("/healthz")["X-Request-ID"]
    assert len(made) == 32 and made != client.get("/healthz")["X-Request-ID"]
    kept = client.get("/healthz", HTTP_X_REQUEST_ID="nginx-7f3a.1")
    assert kept["X-Request-ID"] == "nginx-7f3a.1"


@pytest.mark.parametrize("bad", ["a b", "x" * 129, "id\r\nSet-Cookie: a=b", ""])
def test_an_unsafe_incoming_id_is_replaced(client, bad):
    answer = client.get("/healthz", HTTP_X_REQUEST_ID=bad)
    assert answer["X-Request-ID"] != bad and len(answer["X-Request-ID"]) == 32


def test_every_log_line_of_the_request_carries_its_id(client, caplog):
    caplog.handler.addFilter(ContextFilter())
    with caplog.at_level(logging.WARNING):
        client.get("/no-such-page/", HTTP_X_REQUEST_ID="req-404")
    lines = [r for r in caplog.records if r.name == "django.request"]
    assert lines and all(r.request_id == "req-404" for r in lines)  # type: ignore[attr-defined]


def test_the_duration_is_counted_by_url_name_and_unknown_paths_share_one_label(client):
    def count(view: str, status: str) -> float:
        labels = {"view": view, "method": "GET", "status": status}
        return REGISTRY.get_sample_value("perfdb_http_request_duration_seconds_count", labels) or 0

    before = count("healthz", "200"), count("unmatched", "404")
    client.get("/healthz")
    client.get("/no-such-page/1/")
    client.get("/no-such-page/2/")
    assert (count("healthz", "200"), count("unmatched", "404")) == (before[0] + 1, before[1] + 2)


def test_a_made_up_method_is_counted_as_other(client):
    answer = client.generic("BREW", "/healthz")
    labels = {"view": "healthz", "method": "other", "status": str(answer.status_code)}
    assert REGISTRY.get_sample_value("perfdb_http_request_duration_seconds_count", labels)
    labels["method"] = "BREW"
    assert REGISTRY.get_sample_value("perfdb_http_request_duration_seconds_count", labels) is None
