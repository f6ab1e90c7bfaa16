"""config/settings.py: the operational defaults (cache apart from the broker, no task results,
plain http when asked, SITE_URL on the served port), each read in a fresh interpreter with
the environment an operator would give it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from celery import current_app

from tests.conftest import ROOT

# Variables the probes set themselves: the test run's own values must not leak in.
OWN = ("SECRET_KEY", "DEBUG", "REDIS_URL", "CACHE_REDIS_URL", "PORT", "SITE_URL", "HTTPS")


def _settings(env: dict[str, str], *names: str) -> dict:
    clean = {k: v for k, v in os.environ.items() if k not in OWN}
    code = (
        "import json, config.settings as s; "
        f"print(json.dumps({{n: getattr(s, n, None) for n in {list(names)!r}}}, default=str))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        # config.settings itself, not the test override pytest-django names.
        env={**clean, "DJANGO_SETTINGS_MODULE": "config.settings", **env},
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    return json.loads(result.stdout)


def test_the_cache_is_in_another_redis_database_than_the_broker_by_default():
    got = _settings({}, "CELERY_BROKER_URL", "CACHES")
    assert got["CELERY_BROKER_URL"] == "redis://127.0.0.1:6379/0"
    assert got["CACHES"]["default"]["LOCATION"] == "redis://127.0.0.1:6379/1"


def test_the_cache_url_is_its_own_setting():
    env = {"REDIS_URL": "redis://broker:6379/0", "CACHE_REDIS_URL": "redis://cache:6379/0"}
    got = _settings(env, "CELERY_BROKER_URL", "CACHES")
    assert got["CELERY_BROKER_URL"] == "redis://broker:6379/0"
    assert got["CACHES"]["default"]["LOCATION"] == "redis://cache:6379/0"
    # A REDIS_URL alone names a server whose other databases may be someone else's: kept.
    alone = _settings({"REDIS_URL": "redis://127.0.0.1:6379/7"}, "CACHES")
    assert alone["CACHES"]["default"]["LOCATION"] == "redis://127.0.0.1:6379/7"


def test_no_task_stores_a_result_but_the_round_trip_probe():
    current_app.loader.import_default_modules()
    ours = {
        name: task for name, task in current_app.tasks.items() if not name.startswith("celery.")
    }
    assert "ingest.tasks.ingest_upload" in ours
    keeping = sorted(name for name, task in ours.items() if not task.ignore_result)
    assert keeping == ["perfdb.tasks.ping"]


def test_site_url_names_the_served_port():
    assert _settings({"PORT": "8123"}, "SITE_URL")["SITE_URL"] == "http://127.0.0.1:8123"
    assert _settings({}, "SITE_URL")["SITE_URL"] == "http://127.0.0.1:8000"


def test_plain_http_when_https_is_off_and_strict_https_otherwise():
    names = ("SECURE_SSL_REDIRECT", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE")
    base = {"DEBUG": "0", "SECRET_KEY": "k" * 50}
    plain = _settings({**base, "HTTPS": "0"}, *names, "SECURE_HSTS_SECONDS")
    assert plain == dict.fromkeys(names, False) | {"SECURE_HSTS_SECONDS": 0}
    strict = _settings(base, *names, "SECURE_HSTS_SECONDS")
    assert strict == dict.fromkeys(names, True) | {"SECURE_HSTS_SECONDS": 31536000}
