"""Split queues: every routed task exists, and docker-compose runs a worker for
every queue it routes to, so no task is queued where nobody listens."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import yaml
from django.conf import settings

from config.celery import app

ROOT = Path(__file__).resolve().parents[2]
QUEUED_BY_NAME = {
    "ingest.tasks.ingest_upload",
    "perfdb.tasks.regressions_check",
    "perfdb.tasks.notify_upload",
    "perfdb.tasks.send_email",
}


def test_every_route_names_a_registered_task():
    app.loader.import_default_modules()
    assert set(settings.CELERY_TASK_ROUTES) <= set(app.tasks)
    beat = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert QUEUED_BY_NAME | beat <= set(settings.CELERY_TASK_ROUTES)


def test_unsplit_by_default_every_task_goes_to_the_default_queue():
    """Development and the tests run one worker on the default queue."""
    queues = {route["queue"] for route in settings.CELERY_TASK_ROUTES.values()}
    assert queues == {settings.CELERY_TASK_DEFAULT_QUEUE}


def test_compose_routes_each_queue_to_a_worker_of_its_own():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    env = compose["services"]["web"]["environment"]
    names = ("CELERY_INGEST_QUEUE", "CELERY_DETECTION_QUEUE", "CELERY_EMAIL_QUEUE")
    routed = {env[name] for name in (*names, "CELERY_PAGES_QUEUE")}
    assert routed == {"ingest", "detection", "email", "pages"}
    listening = {}
    for name, service in compose["services"].items():
        command = service.get("command", "")
        if "celery" in command and " worker" in command:
            listening[name] = set(re.search(r"-Q (\S+)", command).group(1).split(","))
    assert set().union(*listening.values()) == routed
    assert all(len(queues) == 1 for queues in listening.values()), listening
    # Every producer (web, beat, the workers' follow-ups) routes the same way.
    for name, service in compose["services"].items():
        if name in listening or name in ("web", "beat"):
            assert service["environment"]["CELERY_EMAIL_QUEUE"] == "email", name


def test_the_split_routes_as_compose_sets_them():
    code = (
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE'] = 'config.settings'; "
        "from django.conf import settings; "
        "print(sorted({r['queue'] for r in settings.CELERY_TASK_ROUTES.values()}))"
    )
    env = {
        "CELERY_INGEST_QUEUE": "ingest",
        "CELERY_DETECTION_QUEUE": "detection",
        "CELERY_EMAIL_QUEUE": "email",
        "CELERY_PAGES_QUEUE": "pages",
        "PATH": "/usr/bin:/bin",
    }
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "['detection', 'email', 'ingest', 'pages']"
