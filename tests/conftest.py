"""Shared fixtures: a real Celery worker against Redis and the test database, users, tokens,
the fault tests' own workers and SMTP server, headless Chromium, the dashboard data, and the
page cache serving stale values.

The worker runs as a subprocess with the test settings and DATABASE_URL pointing at the
test database, so tests that use it must commit their data (``django_db(transaction=True)``).
Test modules never import a fixture: pytest finds these by name. Rows a test needs come from
tests/factories.py; plain helpers live in modules named for what they hold.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings

from tests.factories import StaffFactory, UserFactory

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _no_outside_network(monkeypatch):
    """Tests talk to loopback only: any other address is a bug in the test."""
    real_connect = socket.socket.connect

    def guarded(sock, address):
        host = address[0] if isinstance(address, tuple) else address
        if (
            isinstance(host, str)
            and host not in ("127.0.0.1", "localhost", "::1")
            and not (host.startswith("/"))
        ):
            raise RuntimeError(f"test tried to reach {address!r}; only loopback is allowed")
        return real_connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)


@pytest.fixture(autouse=True)
def _empty_cache():
    """No test sees page data another test cached (config/test_settings.py: LocMemCache)."""
    from django.core.cache import cache

    cache.clear()


@pytest.fixture
def stale_for_30s(settings, monkeypatch):
    """The page cache serves a value up to 30 s stale while it is recomputed in the
    background; each previous value is ``age["seconds"]`` old (15 unless a test sets it);
    the refreshes queued for the background thread are kept so that a test can count them."""
    from perfdb.cache import entries, refresh

    settings.PAGE_CACHE_STALE_SECONDS = 30
    started: list[object] = []
    age = {"seconds": 15.0}
    submit = refresh.submit
    monkeypatch.setattr(refresh, "submit", lambda job: started.append(job) or submit(job))
    monkeypatch.setattr(entries, "entry_age", lambda entry: age["seconds"])
    return started, age


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def smtp_server():
    """A real SMTP server (aiosmtpd) that keeps every message it receives."""
    from aiosmtpd.controller import Controller
    from aiosmtpd.handlers import Message

    class Keep(Message):
        def __init__(self):
            super().__init__()
            self.messages = []

        def handle_message(self, message):
            self.messages.append(message)

    handler = Keep()
    controller = Controller(handler, hostname="127.0.0.1", port=free_port())
    controller.start()
    yield controller, handler
    controller.stop()


# The session worker's name once it answered: broadcasts then wait for its reply only.
_SESSION_WORKER: dict[str, object] = {}


@pytest.fixture(scope="session")
def celery_worker_process(django_db_setup, django_db_blocker, smtp_server):
    """Start one real Celery worker (solo pool) for the session and wait until it answers."""
    controller, _ = smtp_server
    db = settings.DATABASES["default"]
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.test_settings",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "REDIS_URL": settings.REDIS_URL,
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "EMAIL_HOST": "127.0.0.1",
        "EMAIL_PORT": str(controller.port),
        "PYTHONUNBUFFERED": "1",
    }
    from config.celery import app

    app.control.purge()
    log = open(Path(settings.MEDIA_ROOT) / "worker.log", "w")  # noqa: SIM115
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "-P",
            "solo",
            "--without-gossip",
            "--without-mingle",
            "--loglevel",
            "INFO",
            "-n",
            "test@%h",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.time() + 60
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"celery worker exited: see {log.name}")
        answers = app.control.inspect(timeout=0.5).ping()
        if answers:
            _SESSION_WORKER.update(answers)
            break
    else:
        proc.kill()
        raise RuntimeError("celery worker did not answer within 60 s")
    yield proc
    _SESSION_WORKER.clear()
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


@pytest.fixture
def user(db):
    """A lab account: ``lab`` / ``lab-password-1``."""
    return UserFactory(username="lab")


@pytest.fixture
def staff(db):
    """A staff account: ``boss`` / ``boss-password-1``."""
    return StaffFactory(username="boss")


@pytest.fixture
def token(user):
    from perfdb.operations.accounts import token_get

    return token_get(user=user)


def _worker_idle(app) -> bool:
    import redis

    names = list(_SESSION_WORKER) or None
    inspect = app.control.inspect(timeout=1.0, destination=names, limit=len(names or ()) or None)
    active = inspect.active()
    reserved = inspect.reserved()
    if active is None or reserved is None:
        # A solo worker busy with a long task cannot answer a broadcast: that is not idle.
        return False
    queues = {settings.CELERY_TASK_DEFAULT_QUEUE}
    queues.update(route["queue"] for route in settings.CELERY_TASK_ROUTES.values())
    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    queued = sum(broker.llen(queue) for queue in queues)
    return not any(active.values()) and not any(reserved.values()) and queued == 0


def wait_for_worker_idle(timeout: float = 60) -> None:
    """Block until the worker has no task running, reserved or queued."""
    from config.celery import app

    deadline = time.time() + timeout
    quiet = 0  # idle twice in a row: a task sent on a commit just before is not missed
    while time.time() < deadline:
        quiet = quiet + 1 if _worker_idle(app) else 0
        if quiet == 2:
            return
        time.sleep(0.2)
    raise AssertionError(f"the Celery worker was still busy after {timeout} s")


@pytest.fixture(autouse=True)
def _worker_quiet_before_flush(request):
    """A transactional test ends by truncating every table. Tasks it queued on the way (the
    regression check after an in-process ingest) may still run in the session's worker, and
    the truncate would deadlock with them; so wait for that worker first. Requesting the
    database here makes its teardown (the truncate) come after this one."""
    marker = request.node.get_closest_marker("django_db")
    transactional = marker is not None and marker.kwargs.get("transaction", False)
    for name in ("transactional_db", "live_server"):
        if name in request.fixturenames:
            request.getfixturevalue(name)
            transactional = True
    if transactional:
        request.getfixturevalue("_django_db_helper")
    yield
    if transactional and _SESSION_WORKER:
        wait_for_worker_idle()


@pytest.fixture
def celery_worker(celery_worker_process):
    """The session's worker, drained after the test so no task outlives the test's data."""
    yield celery_worker_process
    wait_for_worker_idle()


# --- the fault tests: workers on their own queue, SIGKILLed at will (tests/ingest/faults.py) ---


@pytest.fixture
def mailbox():
    """A real SMTP server that can hold a message inside DATA (``Mailbox.hold``)."""
    from tests.ingest.faults import Mailbox

    box = Mailbox()
    box.start()
    yield box
    box.release.set()
    box.stop()


@pytest.fixture
def faults_env(tmp_path, mailbox):
    """Environment for this test's workers; purges the test queue first."""
    import redis

    from tests.ingest.faults import QUEUE

    redis.Redis.from_url(settings.CELERY_BROKER_URL).delete(QUEUE)
    db = settings.DATABASES["default"]
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.test_settings",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "REDIS_URL": settings.REDIS_URL,
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "EMAIL_HOST": "127.0.0.1",
        "EMAIL_PORT": str(mailbox.port),
        "EMAIL_TIMEOUT": "5",
        "CELERY_TASK_DEFAULT_QUEUE": QUEUE,
        "FOLLOWUP_DEADLINE_SECONDS": "1",
        "OUTBOX_RETRY_MAX_SECONDS": "1",
        "OUTBOX_SENDING_TIMEOUT": "2",
        "PERFDB_PAUSE_DIR": str(tmp_path),
        "PYTHONUNBUFFERED": "1",
    }


@pytest.fixture
def workers(faults_env, tmp_path):
    """Celery workers the test starts (``workers.start(...)``) on the faults queue."""
    from tests.ingest.faults import Workers

    pool = Workers(faults_env, tmp_path / "workers.log")
    yield pool
    pool.stop_all()


# --- pages: the dashboard data and a browser (tests/dashboards/) ---------------------------


@pytest.fixture
def data(tmp_path, monkeypatch):
    """The dashboard bundle (tests/dashboards/data.py), ingested in-process: no task is sent
    to a broker when the data commits (a live-server test) or a test runs its commit
    callbacks."""
    from ingest import queue
    from perfdb.alerting import queue as alerting_queue
    from tests.dashboards.data import load

    monkeypatch.setattr(queue, "ingest_upload", lambda **k: None)
    monkeypatch.setattr(alerting_queue, "regressions_check", lambda **k: None)
    return load(tmp_path)


@pytest.fixture(scope="module")
def browser():
    """Debian's headless Chromium through Playwright, one per module (skipped without it)."""
    from tests.dashboards.browser.chromium import ARGS, CHROMIUM

    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's sync API runs a loop
    playwright = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed")
    with playwright.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()
