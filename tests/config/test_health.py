import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.worker
def test_healthz_detail_is_ok_with_a_worker(client, staff, celery_worker):
    client.force_login(staff)
    body = client.get("/healthz/detail").json()
    assert body["ok"] is True
    assert body["checks"] == {"database": "ok", "redis": "ok", "workers": "ok"}
    assert body["uploads"]["waiting"] == 0 and body["email"]["pending"] == 0


def test_healthz_is_fast_and_asks_no_worker(client, monkeypatch):
    from perfdb.operations import health

    # Fast by construction: no Celery round trip (a broker ping waits up to a second).
    monkeypatch.setattr(health, "check_workers", lambda: pytest.fail("a Celery round trip"))
    response = client.get("/healthz")
    assert response.status_code == 200 and response.json() == {"ok": True, "failed": []}


def test_healthz_names_what_is_down_but_not_why(client, settings):
    settings.REDIS_URL = "redis://:hunter2@127.0.0.1:1/0"  # nothing listens on port 1
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json() == {"ok": False, "failed": ["redis"]}
    assert b"hunter2" not in response.content and b"127.0.0.1" not in response.content


def test_healthz_detail_is_for_staff_only(client, user):
    assert client.get("/healthz/detail").status_code == 302  # to the login page
    client.force_login(user)
    assert client.get("/healthz/detail").status_code == 302


def test_health_command_reports_what_is_down(settings, capsys):
    from django.core.management import CommandError, call_command

    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    with pytest.raises(CommandError, match="redis"):
        call_command("health")
    assert '"database": "ok"' in capsys.readouterr().out


def test_api_schema_and_docs_are_served_without_a_cdn(client):
    schema = client.get("/api/schema/")
    assert schema.status_code == 200 and b"/api/uploads/" in schema.content
    docs = client.get("/api/docs/").content.decode()
    assert "cdn" not in docs.lower() and "/static/drf_spectacular_sidecar/" in docs
