import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.worker
def test_healthz_is_ok_with_a_worker(client, celery_worker):
    body = client.get("/healthz").json()
    assert body == {"ok": True, "checks": {"database": "ok", "redis": "ok", "workers": "ok"}}


def test_healthz_names_what_is_down(client, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["ok"] is False and body["checks"]["database"] == "ok"
    assert body["checks"]["redis"].startswith("redis:")


def test_api_schema_and_docs_are_served_without_a_cdn(client):
    schema = client.get("/api/schema/")
    assert schema.status_code == 200 and b"/api/uploads/" in schema.content
    docs = client.get("/api/docs/").content.decode()
    assert "cdn" not in docs.lower() and "/static/drf_spectacular_sidecar/" in docs
