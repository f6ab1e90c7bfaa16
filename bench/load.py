"""A lab at once: N browsing users and M uploading machines against gunicorn and Celery.

Re-run (bounded: the clients stop after --seconds, then at most --drain seconds for the
uploads still queued; loopback only):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/perfdb_bench_data \\
        python bench/load.py --users 50 --uploaders 10 --seconds 300

The servers run as docker-compose runs them: ``gunicorn -c config/gunicorn.conf.py`` (gthread;
--workers/--threads override WEB_CONCURRENCY/GUNICORN_THREADS) with DEBUG=0 and collected
static files, and the Celery workers of docker-compose.yml (``--celery`` names their queues
and concurrency), all on 127.0.0.1 against this database and Redis db REDIS_URL.

- **Users** open a random page of the mix below, read it, think 0 to --think seconds, repeat:
  series pages and their JSON most, then the overview, scope charts (scaling, kernel-time,
  wakeups), compare, run pages, alerts and the API. The pool is drawn from the stored
  synthetic setups (--series series over --scopes scopes) and requested once each before
  the clock starts (the steady state of a morning, not a cold start).
- **Uploaders** are machines of the synthetic lab: each upload is that machine's nightly
  results, one run per workload (12 runs, ~190 results) on a newer kernel, POSTed to
  /api/uploads/ with a token. The uploader polls the upload until it is done (upload-to-done),
  then opens the pages the upload changed (the kernels page of one of its series, its
  scope's scaling chart, the overview): the first request after an upload. Then it waits 0
  to 2 x --upload-think seconds.

Prints per page kind and overall p50/p95, the first-after-upload times, upload-to-done,
errors (must be 0) and uploads lost (accepted but not done by the end; must be 0), and the
ratio of each to its goal. Every process started is stopped on the way out; runs made here
are marked synthetic and stay: each run lengthens the uploaders' series (a 90 s run adds
~15 runs to each of their setups; thirty runs take them from 64 to ~500 runs), so
figures drift upwards over many runs on one database: compare runs made in the same minutes
(before and after alternated), or rebuild the database. The tasks a run leaves queued (the
regression checks above all: ~1,500 after twenty runs) are worked through during the next
one: empty the queues first (``redis-cli -n <REDIS_URL's db> del pages celery detection``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections import defaultdict
from pathlib import Path

from _common import django_setup, ms, p50, p95, result_count, table
from load_bundles import multipart, nightly_bundle
from load_pages import page_pool
from load_servers import cpu_now, free_port, server_env, start_servers, stop, wait_until_up

# Goals (docs/performance.md): page p95, first request after an upload, upload-to-done p95.
GOAL_PAGE_P95 = 0.5
GOAL_FIRST_AFTER_UPLOAD = 0.3
GOAL_UPLOAD_DONE_P95 = 30.0

# Page kinds and their share of the browsing.
MIX = (
    ("series page", 30),
    ("series json", 15),
    ("home", 10),
    ("kernels default", 4),
    ("scaling", 10),
    ("kernel-time", 5),
    ("wakeups", 5),
    ("compare", 5),
    ("run detail", 6),
    ("alerts", 4),
    ("api runs", 3),
    ("api series", 3),
)


class Stats:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pages: dict[str, list[float]] = defaultdict(list)
        self.first_after: list[float] = []
        self.first_after_kinds: dict[str, list[float]] = defaultdict(list)
        self.errors: list[str] = []
        self.upload_ids: list[int] = []
        self.upload_done: list[float] = []
        self.upload_post: list[float] = []
        self.polls = 0
        self.cpu: dict[str, float] = {}  # CPU seconds over the run (load_servers.cpu_now)

    def error(self, text: str) -> None:
        with self.lock:
            self.errors.append(text)


def fetch(base: str, url: str, stats: Stats, kind: str, timeout: float = 60) -> float | None:
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(base + url, timeout=timeout) as response:
            response.read()
    except Exception as error:  # noqa: BLE001 (every failure is counted and shown)
        stats.error(f"GET {url}: {error}")
        return None
    seconds = time.perf_counter() - start
    with stats.lock:
        stats.pages[kind].append(seconds)
    return seconds


def user_loop(base, pool, until, stats, seed, think) -> None:
    rng = random.Random(seed)
    kinds = [k for k, _ in MIX if pool.get(k)]
    weights = [w for k, w in MIX if pool.get(k)]
    while time.time() < until:
        kind = rng.choices(kinds, weights)[0]
        fetch(base, rng.choice(pool[kind]), stats, kind)
        time.sleep(rng.uniform(0, think))


def uploader_loop(base, token, until, stats, seed, units, think) -> None:
    from ingest import synthetic

    rng = random.Random(f"uploader-{seed}")
    machine = rng.randrange(units)
    n = 0
    while time.time() < until:
        nonce = uuid.uuid4().hex[:10]
        kernel = synthetic.BENCH_KERNELS[n % len(synthetic.BENCH_KERNELS)]
        n += 1
        data, specs = nightly_bundle(machine, kernel, nonce, rng)
        body, boundary = multipart("bundle", f"night-{nonce}.tar.gz", data)
        request = urllib.request.Request(
            base + "/api/uploads/",
            data=body,
            headers={
                "Authorization": f"Token {token}",
                "Content-Type": f"multipart/form-data; boundary={boundary}",
            },
        )
        start = time.perf_counter()
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                upload_id = json.loads(response.read())["id"]
        except Exception as error:  # noqa: BLE001
            stats.error(f"POST upload: {error}")
            time.sleep(1)
            continue
        with stats.lock:
            stats.upload_ids.append(upload_id)
            stats.upload_post.append(time.perf_counter() - start)
        status, runs = _wait_done(base, token, upload_id, stats, deadline=start + 120)
        if status == "done":
            with stats.lock:
                stats.upload_done.append(time.perf_counter() - start)
            _first_after_upload(base, stats, runs, specs, rng)
        elif status == "failed":
            stats.error(f"upload {upload_id} failed")
        time.sleep(rng.uniform(0, 2 * think))


def _wait_done(base, token, upload_id, stats, deadline) -> tuple[str, list[int]]:
    request = urllib.request.Request(
        f"{base}/api/uploads/{upload_id}/", headers={"Authorization": f"Token {token}"}
    )
    while time.perf_counter() < deadline:
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                doc = json.loads(response.read())
            with stats.lock:
                stats.polls += 1
        except Exception as error:  # noqa: BLE001
            stats.error(f"GET upload {upload_id}: {error}")
            return "error", []
        if doc["status"] in ("done", "failed"):
            return doc["status"], [r["id"] for r in doc["runs"]]
        time.sleep(0.25)
    return "timeout", []


def _first_after_upload(base, stats, runs, specs, rng) -> None:
    """The pages an upload changed, opened as soon as it is done: each is a cache miss if
    the upload invalidated more than it had to."""
    from perfdb.models import Result, Run

    if not runs:
        return
    run_id = rng.choice(runs)
    run = Run.objects.select_related("setup").get(pk=run_id)
    metric = Result.objects.filter(run_id=run_id).values_list("metric_id", flat=True).first()
    setup = run.setup
    scope = f"{setup.workload_id}-{setup.hardware_id}-{setup.mode}"
    urls = {
        "series page": f"/kernels/?setup={setup.pk}&metric={metric}",
        "scaling": f"/scaling/?scope={scope}",
        "home": "/",
    }
    for kind, url in urls.items():
        seconds = fetch(base, url, stats, kind)
        if seconds is not None:
            with stats.lock:
                stats.first_after.append(seconds)
                stats.first_after_kinds[kind].append(seconds)


# --- main ------------------------------------------------------------------------------------


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--uploaders", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=300)
    parser.add_argument("--drain", type=float, default=120, help="most to wait for uploads")
    parser.add_argument("--think", type=float, default=1.0, help="users wait 0 to this, s")
    parser.add_argument("--upload-think", type=float, default=5.0)
    parser.add_argument("--series", type=int, default=200, help="series in the page pool")
    parser.add_argument("--scopes", type=int, default=40, help="scopes in the page pool")
    parser.add_argument("--workers", type=int, help="gunicorn processes (WEB_CONCURRENCY)")
    parser.add_argument("--threads", type=int, help="threads each (GUNICORN_THREADS)")
    parser.add_argument(
        "--celery",
        default="ingest:2,detection:1,email:1,pages:1:10",
        help="Celery workers, queue:concurrency[:nice], comma-separated: docker-compose's "
        "split workers by default; 'all:2' = one worker on the default queue for every task",
    )
    parser.add_argument("--logs", type=Path, help="keep the servers' logs in this directory")
    return parser.parse_args()


def database_ready() -> int:
    """The synthetic units stored; exits when the database cannot be benchmarked."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    from ingest.synthetic.store import units_stored

    executor = MigrationExecutor(connection)
    if executor.migration_plan(executor.loader.graph.leaf_nodes()):
        sys.exit("the benchmark database has unapplied migrations: run manage.py migrate")
    units = units_stored()
    if not units:
        sys.exit("no synthetic history: run manage.py synth_history --scale N first")
    return units


def drive(args, base, pool, token, units, stats: Stats, procs) -> tuple[float, float, float]:
    """Warm the pool, run the users and uploaders, wait for the uploads still queued.
    Returns (warm-up, elapsed, drained) seconds."""
    from perfdb.models import Upload

    warm = time.time()
    for kind, urls in pool.items():  # the morning's steady state, not a cold start
        for url in urls:
            fetch(base, url, Stats(), kind)
    warm = time.time() - warm
    cpu_start = cpu_now(procs)
    start = time.time()
    until = start + args.seconds
    threads = [
        threading.Thread(target=user_loop, args=(base, pool, until, stats, n, args.think))
        for n in range(args.users)
    ] + [
        threading.Thread(
            target=uploader_loop, args=(base, token, until, stats, n, units, args.upload_think)
        )
        for n in range(args.uploaders)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.time() - start
    stats.cpu = {k: v - cpu_start[k] for k, v in cpu_now(procs).items()}
    deadline = time.time() + args.drain
    pending = Upload.objects.filter(pk__in=stats.upload_ids).exclude(status__in=("done", "failed"))
    while pending.exists() and time.time() < deadline:
        time.sleep(1)
    return warm, elapsed, time.time() - start - elapsed


def main() -> None:
    args = arguments()
    django_setup()
    from perfdb.models import Run, Upload
    from perfdb.operations.accounts import token_get, user_ensure

    units = database_ready()
    token = token_get(user=user_ensure(username="bench-uploader", staff=False))
    pool = page_pool(args.series, args.scopes, seed=1)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    stats = Stats()
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        procs = start_servers(server_env(port, tmp, args), tmp, args.celery)
        try:
            wait_until_up(base)
            warm, elapsed, drained = drive(args, base, pool, token, units, stats, procs)
        except Exception:
            for log in sorted(tmp.glob("proc*.log")):
                print(f"\n--- {log.name} (tail) ---\n{log.read_text()[-3000:]}")
            raise
        finally:
            stop(procs)
            logs = {p.name: p.read_text()[-2000:] for p in tmp.glob("proc*.log")}
            if args.logs:
                args.logs.mkdir(parents=True, exist_ok=True)
                for log in tmp.glob("proc*.log"):
                    (args.logs / log.name).write_bytes(log.read_bytes())
    done = Upload.objects.filter(pk__in=stats.upload_ids, status="done")
    lost = len(stats.upload_ids) - done.count()
    Run.objects.filter(upload__in=stats.upload_ids).update(synthetic=True)
    report(args, stats, elapsed, drained, warm, lost, units)
    if stats.errors or lost:
        for name, text in logs.items():
            print(f"\n--- {name} (tail) ---\n{text}")


def _report_cpu(stats: Stats, pages: list[float], celery: str) -> None:
    """CPU per request of the servers over the run: what the machine's other load does not
    inflate (wall times on a shared machine are mostly waiting for a core)."""
    requests = len(pages) + len(stats.first_after) + len(stats.upload_post) + stats.polls
    cpu = stats.cpu
    print(
        f"CPU over the run: web {cpu['web']:.1f} s = {cpu['web'] / max(requests, 1) * 1000:.1f}"
        f" ms per HTTP request ({requests}: pages, first-after, upload POSTs, status polls); "
        f"PostgreSQL {cpu['postgres']:.1f} s = "
        f"{cpu['postgres'] / max(requests, 1) * 1000:.1f} ms per request; Celery "
        f"{cpu['celery']:.1f} s = {cpu['celery'] / max(len(stats.upload_post), 1):.2f} s "
        f"per upload; the load generator (this process) {cpu['client']:.1f} s; the machine "
        f"busy {cpu['machine busy']:.1f} of {cpu['machine']:.1f} CPU seconds "
        f"({cpu['machine busy'] / max(cpu['machine'], 1e-9):.0%})"
    )
    queues = [part.split(":")[0] for part in celery.split(",")]
    print(
        "Celery per worker: "
        + ", ".join(f"{q} {cpu.get(f'celery {n}', 0.0):.1f} s" for n, q in enumerate(queues))
    )


def report(args, stats: Stats, elapsed, drained, warm, lost, units) -> None:
    workers = os.environ.get("WEB_CONCURRENCY", "3") if not args.workers else args.workers
    threads = os.environ.get("GUNICORN_THREADS", "4") if not args.threads else args.threads
    print(
        f"{args.users} users (think 0-{args.think:g} s) + {args.uploaders} uploaders "
        f"(12-run nightly bundles, think 0-{2 * args.upload_think:g} s) for {elapsed:.0f} s "
        f"on 127.0.0.1; {result_count():,} results ({units} synthetic units); gunicorn gthread "
        f"{workers}x{threads}, Celery {args.celery}; warm-up {warm:.0f} s; uploads drained "
        f"{drained:.0f} s after\n"
    )
    everything = [t for times in stats.pages.values() for t in times]
    rows: list[tuple[str, int | str, str, str, str]] = []
    for kind, _ in MIX:
        times = stats.pages.get(kind)
        if times:
            rows.append((kind, len(times), ms(p50(times)), ms(p95(times)), ms(max(times))))
    rows.append(
        (
            "**all pages**",
            f"{len(everything)} ({len(everything) / elapsed:.1f}/s)",
            ms(p50(everything)),
            ms(p95(everything)),
            ms(max(everything)),
        )
    )
    for kind, times in stats.first_after_kinds.items():
        rows.append(
            (
                f"first after upload: {kind}",
                len(times),
                ms(p50(times)),
                ms(p95(times)),
                ms(max(times)),
            )
        )
    if stats.upload_post:
        up = stats.upload_post
        rows.append(("upload POST", len(up), ms(p50(up)), ms(p95(up)), ms(max(up))))
    if stats.upload_done:
        ud = stats.upload_done
        rows.append(("upload to done", len(ud), ms(p50(ud)), ms(p95(ud)), ms(max(ud))))
    print(table(["what", "count", "p50 ms", "p95 ms", "max ms"], rows))
    page = p95(everything) if everything else float("inf")
    first = p95(stats.first_after) if stats.first_after else float("inf")
    done = p95(stats.upload_done) if stats.upload_done else float("inf")
    print(
        f"\npage p95 {ms(page)} ms = {page / GOAL_PAGE_P95:.2f}x the 500 ms goal; "
        f"first request after an upload p95 {ms(first)} ms = "
        f"{first / GOAL_FIRST_AFTER_UPLOAD:.2f}x the 300 ms goal; upload-to-done p95 "
        f"{done:.1f} s = {done / GOAL_UPLOAD_DONE_P95:.2f}x the 30 s goal"
    )
    _report_cpu(stats, everything, args.celery)
    print(
        f"errors: {len(stats.errors)}; uploads accepted {len(stats.upload_ids)}, done "
        f"{len(stats.upload_ids) - lost}, lost {lost}; status polls {stats.polls}"
    )
    for error in stats.errors[:10]:
        print("  ", error)


if __name__ == "__main__":
    main()
