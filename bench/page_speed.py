"""Server time of every dashboard page, warm, and the bytes each sends.

Re-run (on a database built with ``python manage.py synth_history --scale N``):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/perfdb_bench_data python bench/page_speed.py
    ... python bench/page_speed.py --stale 30   # as under gunicorn: anonymous pages kept 30 s

    ... python bench/page_speed.py --cold       # each page's first request on an emptied cache

Requests go through Django's test Client (the whole view, middleware and template, no
network), each page once to warm up (its time is "first ms": computed from the database when
the cache holds nothing for it yet, e.g. a new Redis db or after an upload to its scope)
and then ``--repeat`` times. With ``--cold`` the cache is emptied before each page's first
request (what a deploy that changes ``CACHE_VERSION`` or a Redis restart leaves): its time
is that page's alone, with nothing computed by the pages before it. "first CPU ms" is this
process's CPU and its PostgreSQL backend's (from /proc) for that request: the cost of the
work whatever else the machine runs. Bytes are the response body: the HTML with its
embedded figure JSON (Plotly's own script is a static file, cached by the browser, and not
counted).
"""

from __future__ import annotations

import argparse
import os
import time

from _common import as_a_gunicorn_worker, django_setup, ms, p50, p95, result_count, table, timed


def page_urls() -> list[tuple[str, str]]:
    """Every page, with a realistic selection taken from the synthetic data."""
    from ingest.synthetic import PREFIX
    from perfdb.models import Alert, Result, Run, Upload

    stock = (
        Run.objects.filter(synthetic=True, patch_set__name="", kernel__version="2.5.40")
        .order_by("id")
        .first()
    )
    if stock is None:
        raise SystemExit("no synthetic history: run manage.py synth_history first")
    patched = (
        Run.objects.filter(setup_id=stock.setup_id, kernel_id=stock.kernel_id)
        .exclude(patch_set__name="")
        .order_by("id")
        .first()
    )
    metric_id = Result.objects.filter(run=stock).values_list("metric_id", flat=True).first()
    vmstat_run = (
        Run.objects.filter(
            synthetic=True, samples__source="vmstat", setup__workload__name__startswith=PREFIX
        )
        .values_list("id", flat=True)
        .first()
    )
    volano = Run.objects.filter(setup__workload__name=PREFIX + "VolanoMark").first()
    if patched is None or volano is None:
        raise SystemExit("no synthetic history: run manage.py synth_history first")
    urls = [
        ("home", "/"),
        ("kernels (default)", "/kernels/"),
        ("kernels (setup, metric)", f"/kernels/?setup={stock.setup_id}&metric={metric_id}"),
        ("scaling (default)", "/scaling/"),
        ("kernel-time (default)", "/kernel-time/"),
        ("wakeups (default)", "/wakeups/"),
        ("wakeups (all thresholds)", "/wakeups/?thresholds=all"),
        ("wakeups (all, page 2)", "/wakeups/?thresholds=all&page=2"),
        ("kernel-time (all setups)", "/kernel-time/?setups=all"),
        ("kernel-time (all, page 2)", "/kernel-time/?setups=all&page=2"),
        ("scaling (all setups)", "/scaling/?setups=all"),
        ("scaling (all, page 2)", "/scaling/?setups=all&page=2"),
        ("activity (default)", "/activity/"),
        ("activity (a synthetic run)", f"/activity/?runs={vmstat_run}"),
        ("compare (picker)", "/compare/"),
        ("compare (stock vs patched)", f"/compare/?base={stock.pk}&new={patched.pk}"),
        ("run detail", f"/runs/{volano.pk}/"),
        ("alerts", "/alerts/"),
        ("api runs", "/api/runs/"),
        ("api run", f"/api/runs/{stock.pk}/"),
        ("api compare", f"/api/compare/?base={stock.pk}&new={patched.pk}"),
    ]
    alert = Alert.objects.order_by("-id").first()
    if alert:
        urls.append(("alert detail", f"/alerts/{alert.pk}/"))
    upload = Upload.objects.order_by("-id").first()
    if upload:
        urls.append(("upload detail", f"/uploads/{upload.pk}/"))
    return urls


def backend_pid() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


def cpu_now(pid: int) -> float:
    """This process's CPU seconds and those of its PostgreSQL backend ``pid`` (schedstat, ns)."""
    with open(f"/proc/{pid}/schedstat") as schedstat:
        return time.process_time() + int(schedstat.read().split()[0]) / 1e9


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument(
        "--stale",
        type=int,
        default=0,
        help="PAGE_CACHE_STALE_SECONDS as gunicorn sets it (30): anonymous pages kept",
    )
    parser.add_argument(
        "--cold",
        action="store_true",
        help="empty the cache before each page's first request (as after a deploy)",
    )
    args = parser.parse_args()
    os.environ["PAGE_CACHE_STALE_SECONDS"] = str(args.stale)
    os.environ.setdefault("PAGE_CACHE_WARM", "0")  # no worker here
    django_setup()
    from django.core.cache import cache
    from django.test import Client

    as_a_gunicorn_worker()
    client = Client()
    client.get("/healthz")  # the first request's one-time set-up is no page's
    pid = backend_pid()
    rows = []
    for name, url in page_urls():
        if args.cold:
            cache.clear()
        cpu = cpu_now(pid)
        cold, first = timed(client.get, url)
        first_cpu = cpu_now(pid) - cpu
        if first.status_code != 200:
            rows.append((name, url, first.status_code, ms(cold), ms(first_cpu), "-", "-", "-", "-"))
            continue
        # A page over 5 s is timed twice only: its figure says enough, and time is bounded.
        repeat = args.repeat if cold < 5 else 2
        times, cpus = [], []
        for _ in range(repeat):
            cpu = time.process_time()
            times.append(timed(client.get, url)[0])
            cpus.append(time.process_time() - cpu)
        rows.append(
            (
                name,
                url,
                200,
                ms(cold),
                ms(first_cpu),
                ms(p50(times)),
                ms(p95(times)),
                ms(p50(cpus)),
                f"{len(first.content):,}",
            )
        )
    print(
        f"results in the table: ~{result_count():,}; {args.repeat} warm requests per page; "
        f"PAGE_CACHE_STALE_SECONDS={args.stale}; "
        f"{'cache emptied before each page; ' if args.cold else ''}"
        f"load average {os.getloadavg()[0]:.1f} at the end (first CPU ms: this process and its "
        "PostgreSQL backend; CPU p50 ms: this process, the web side of a warm request)\n"
    )
    headers = [
        *("page", "url", "status", "first ms", "first CPU ms"),
        *("p50 ms", "p95 ms", "CPU p50 ms", "bytes"),
    ]
    print(table(headers, rows))


if __name__ == "__main__":
    main()
