"""docker-compose.yml as an operator relies on it: migrations as a one-off job before anything
that uses the database, a restart policy and a health check that asks the process itself on
every service, the cache on a Redis of its own that evicts and a broker that never does, plain
http on localhost unless HTTPS=1. ``docker-compose config`` parses it when installed."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest
import yaml

from tests.conftest import ROOT

COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]
APP = [name for name, s in SERVICES.items() if s.get("image") == "perfdb:latest"]
JOB = "migrate"


def _command(service: dict) -> str:
    command = service.get("command", "")
    return " ".join(command) if isinstance(command, list) else command


def test_every_service_has_a_restart_policy():
    for name, service in SERVICES.items():
        want = "no" if name == JOB else "unless-stopped"
        assert service.get("restart") == want, name


def test_every_long_running_service_has_a_health_check():
    for name, service in SERVICES.items():
        check = service.get("healthcheck", {})
        if name == JOB:
            assert check.get("disable") is True  # its exit status is the check
            continue
        assert not check.get("disable") and check.get("test"), name


def test_migrations_run_once_before_anything_that_uses_the_database():
    assert _command(SERVICES[JOB]) == "python manage.py migrate --noinput"
    for name in APP:
        if name == JOB:
            continue
        assert "migrate" not in _command(SERVICES[name]), name
        waits = SERVICES[name]["depends_on"][JOB]
        assert waits == {"condition": "service_completed_successfully"}, name
    assert set(SERVICES[JOB]["depends_on"]) == {"postgres"}


def test_each_worker_is_checked_by_a_ping_to_its_own_name():
    for name in APP:
        command = _command(SERVICES[name])
        if " worker " not in command:
            continue
        node = re.search(r"-n (\w+)@%h", command).group(1)
        test = SERVICES[name]["healthcheck"]["test"]
        assert test[0] == "CMD-SHELL" and f"inspect ping -d {node}@$$HOSTNAME" in test[1], name


def test_beat_is_checked_by_its_own_schedule_file():
    beat = SERVICES["beat"]
    schedule = re.search(r"--schedule (\S+)", _command(beat)).group(1)
    assert f"glob.glob('{schedule}*')" in beat["healthcheck"]["test"][-1]


def test_the_cache_has_its_own_redis_that_evicts_and_the_broker_never_does():
    env = COMPOSE["x-app"]["environment"]
    assert env["REDIS_URL"].startswith("redis://redis:")
    assert env["CACHE_REDIS_URL"].startswith("redis://redis-cache:")
    cache = SERVICES["redis-cache"]["command"]
    assert cache[cache.index("--maxmemory-policy") + 1] == "allkeys-lru"
    assert "--maxmemory" in cache
    broker = SERVICES["redis"]["command"]
    assert broker[broker.index("--maxmemory-policy") + 1] == "noeviction"


def test_plain_http_on_localhost_unless_https_is_asked_for():
    env = COMPOSE["x-app"]["environment"]
    assert env["HTTPS"] == "${HTTPS:-0}"
    assert env["SITE_URL"] == "${SITE_URL:-http://localhost:8000}"
    assert "SECURE_SSL_REDIRECT" not in env  # follows HTTPS (config/settings.py)


@pytest.mark.skipif(not shutil.which("docker-compose"), reason="docker-compose not installed")
def test_compose_parses_and_refuses_to_start_without_a_secret_key(tmp_path):
    clean = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"}
    empty = tmp_path / "empty.env"
    empty.write_text("")  # a developer's .env (README) must not supply the key here
    config = ["docker-compose", "--env-file", str(empty), "config", "-q"]
    run = {"cwd": ROOT, "capture_output": True, "text": True}
    refused = subprocess.run(config, env=clean, **run)
    assert refused.returncode != 0 and "set SECRET_KEY" in refused.stderr
    parsed = subprocess.run(config, env={**clean, "SECRET_KEY": "k" * 50}, **run)
    assert parsed.returncode == 0, parsed.stderr
