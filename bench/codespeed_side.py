"""bench/codespeed_compare.py's Codespeed: installed from the package index into a Python 3.7
venv, a minimal project around the app on its own PostgreSQL database, gunicorn, and the
data posted through its public write path (``/result/add/json/``).

Codespeed 0.13.0 (2019) is the newest release; it needs Django 2.1, which needs Python ≤ 3.7,
and psycopg2 < 2.9 (2.9 refuses Django 2.1's time zone handling).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

PYTHON37 = "/root/.pyenv/versions/3.7.16/bin/python"
PACKAGES = ("codespeed==0.13.0", "Django==2.1.15", "psycopg2-binary==2.8.6", "gunicorn==20.1.0")
# Codespeed's setup.py turns its README into reST with setuptools-markdown, which calls a
# pypandoc.convert() that pypandoc 1.8 removed: given beforehand, and the sdist built without
# isolation, pip uses these instead of fetching the newest. wheel 0.40 and later parse each
# requirement strictly and reject Codespeed's ``django>=1.11<2.2`` (no comma): 0.37.1 is
# the last that builds it.
BUILD_PACKAGES = ("pypandoc==1.4", "setuptools-markdown==0.4.1", "wheel==0.37.1", "setuptools<58")

SETTINGS = """\
import os
from codespeed.settings import *  # noqa: F401,F403  (Codespeed's own defaults)

BASE_DIR = os.path.dirname(os.path.abspath(__file__))
SECRET_KEY = "codespeed-bench-only"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
DATABASES = {{"default": {{"ENGINE": "django.db.backends.postgresql", "NAME": "{db}",
    "USER": "postgres", "HOST": "127.0.0.1", "PORT": 5432, "CONN_MAX_AGE": 600}}}}
INSTALLED_APPS = ["django.contrib.auth", "django.contrib.contenttypes",
    "django.contrib.sessions", "django.contrib.messages", "django.contrib.admin",
    "django.contrib.staticfiles", "codespeed"]
MIDDLEWARE = ["django.middleware.common.CommonMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware"]
ROOT_URLCONF = "cs_urls"
TEMPLATES = [{{"BACKEND": "django.template.backends.django.DjangoTemplates", "DIRS": [],
    "APP_DIRS": True, "OPTIONS": {{"context_processors": [
        "django.template.context_processors.request",
        "django.contrib.auth.context_processors.auth",
        "django.contrib.messages.context_processors.messages"]}}}}]
STATIC_URL = "/static/"
TIME_ZONE = "UTC"
USE_TZ = False
ALLOW_ANONYMOUS_POST = True
"""
URLS = """\
from django.conf.urls import include, url
urlpatterns = [url(r"^", include("codespeed.urls"))]
"""
WSGI = """\
import os
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cs_settings")
from django.core.wsgi import get_wsgi_application
application = get_wsgi_application()
"""


def ensure_venv(venv: Path) -> Path:
    """The venv's python, installing Codespeed and its stack when they are not there yet."""
    python = venv / "bin" / "python"
    probe = [str(python), "-c", "import codespeed, django, psycopg2, gunicorn"]
    if python.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    subprocess.run([PYTHON37, "-m", "venv", str(venv)], check=True)
    pip = [str(python), "-m", "pip", "install", "-q"]
    subprocess.run(pip + list(BUILD_PACKAGES), check=True)
    subprocess.run(pip + ["--no-build-isolation", *PACKAGES], check=True)
    return python


def write_project(project: Path, db: str) -> None:
    project.mkdir(parents=True, exist_ok=True)
    (project / "cs_settings.py").write_text(SETTINGS.format(db=db))
    (project / "cs_urls.py").write_text(URLS)
    (project / "cs_wsgi.py").write_text(WSGI)


def manage(python: Path, project: Path, *args: str) -> None:
    command = [str(python), "-m", "django", *args, "--settings", "cs_settings"]
    subprocess.run(command, cwd=project, check=True, env={"PYTHONPATH": str(project)})


def set_up(python: Path, project: Path, sizes: Sequence[int]) -> None:
    """Migrate, and what an admin makes by hand before results can be posted: an environment
    per data set and its project with a default branch (the timeline shows only that)."""
    manage(python, project, "migrate", "-v0")
    code = "from codespeed.models import Environment, Project\n" + "".join(
        f"Environment.objects.get_or_create(name='box-{n}')\n"
        f"Project.objects.get_or_create(name='linux-{n}', "
        "defaults={'default_branch': 'master'})\n"
        for n in sizes
    )
    manage(python, project, "shell", "-c", code)


def start(python: Path, project: Path, port: int, workers: int, threads: int) -> subprocess.Popen:
    """gunicorn as perfdb's runs: ``workers`` processes of ``threads`` threads (gthread)."""
    command = [str(python), "-m", "gunicorn", "cs_wsgi:application", "-b", f"127.0.0.1:{port}"]
    command += ["-w", str(workers), "--threads", str(threads), "-k", "gthread"]
    command += ["--log-level", "warning", "--keep-alive", "5"]
    log = open(project / "gunicorn.log", "w")  # noqa: SIM115 (closed with the process)
    env = {"PYTHONPATH": str(project), "PATH": "/usr/bin:/bin"}
    return subprocess.Popen(command, cwd=project, env=env, stdout=log, stderr=log)


def wait_until_up(base: str, limit: float = 60) -> None:
    deadline = time.time() + limit
    while time.time() < deadline:
        try:
            urllib.request.urlopen(base + "/timeline/json/?exe=", timeout=5).read()
            return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError("Codespeed's gunicorn did not answer")


def results_of(
    n: int, kernels: Sequence[str], values: Iterator, first: int = 0
) -> Iterator[list[dict]]:
    """One POST per kernel (a revision): its metrics' results, as a benchmark runner sends.
    ``first``: the number of revisions of data set ``n`` before these (their dates follow)."""
    for i, kernel in enumerate(kernels, first):
        date = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(1_577_836_800 + 3600 * i))
        yield [
            {
                "commitid": kernel,
                "branch": "master",
                "project": f"linux-{n}",
                "executable": f"linux-{n}",
                "benchmark": metric,
                "environment": f"box-{n}",
                "result_value": value,
                "std_dev": sd,
                "revision_date": date,
                "result_date": date,
                "units": "ops/s",
                "lessisbetter": False,
            }
            for metric, value, sd in next(values)
        ]


def post_all(base: str, batches: Iterator[list[dict]], clients: int = 4) -> int:
    """POST every batch to ``/result/add/json/`` from ``clients`` threads; results posted."""

    def post(batch: list[dict]) -> int:
        body = urllib.parse.urlencode({"json": json.dumps(batch)}).encode()
        with urllib.request.urlopen(base + "/result/add/json/", data=body, timeout=120) as r:
            if r.status != 202:
                raise RuntimeError(f"Codespeed answered {r.status}")
        return len(batch)

    with ThreadPoolExecutor(clients) as pool:
        return sum(pool.map(post, batches))


def ids(db_url: str, n: int) -> dict[str, object]:
    """The ids a timeline URL names: executable and environment of data set ``n``."""
    import psycopg

    def one(conn, sql: str, arg: object) -> object:
        row = conn.execute(sql, (arg,)).fetchone()
        return row[0] if row else None

    with psycopg.connect(db_url) as conn:
        exe = one(conn, "SELECT id FROM codespeed_executable WHERE name = %s", f"linux-{n}")
        env = one(conn, "SELECT id FROM codespeed_environment WHERE name = %s", f"box-{n}")
        count = one(conn, "SELECT count(*) FROM codespeed_result WHERE environment_id = %s", env)
    return {"exe": exe, "env": env, "results": count}


def urls(n: int, exe: object, env: object, metric: str) -> tuple[str, list[str]]:
    """The series' JSON, and the page with the data request its script makes."""
    query = {"exe": exe, "ben": metric, "env": env, "revs": n, "base": "none", "equid": "off"}
    data = "/timeline/json/?" + urllib.parse.urlencode(query)
    page = "/timeline/?" + urllib.parse.urlencode({"exe": exe, "ben": metric, "env": env})
    return data, [page + f"&revs={n}", data]


if __name__ == "__main__":
    print(ensure_venv(Path(sys.argv[1])))
