"""Concurrency: gunicorn + 2 Celery workers on loopback, N browsing users and M uploaders.

Re-run (bounded: stops by itself after --seconds plus at most --drain seconds):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/perfdb_bench_data \\
        python bench/load.py --users 8 --uploaders 2 --seconds 120

Starts ``gunicorn config.wsgi`` on 127.0.0.1 (2 workers x 4 threads) and two solo-pool Celery
workers against Redis db 14 (REDIS_URL), then runs threads with urllib: users fetch random
dashboard pages back to back; uploaders POST 10k-sample vmstat bundles to /api/uploads/ with a
token. Afterwards it waits until every accepted upload is done. Prints throughput, p50/p95,
errors (must be 0) and uploads lost (accepted but not done; must be 0). Every process it
started is stopped on the way out. Runs made here are marked synthetic.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

from _common import ROOT, django_setup, ms, p50, p95, table
from ingest_speed import bundle_bytes


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_servers(port: int, media: Path, logs: Path) -> list[subprocess.Popen]:
    env = {**os.environ, "MEDIA_ROOT": str(media), "PYTHONUNBUFFERED": "1"}
    gunicorn = [sys.executable, "-m", "gunicorn", "config.wsgi", "-b", f"127.0.0.1:{port}"]
    gunicorn += ["-w", "2", "--threads", "4", "--timeout", "60"]
    commands = [gunicorn]
    for name in ("benchA", "benchB"):
        commands.append(
            [sys.executable, "-m", "celery", "-A", "config", "worker", "-P", "solo"]
            + ["--without-gossip", "--without-mingle", "-n", f"{name}@%h", "-l", "WARNING"]
        )
    procs = []
    for n, command in enumerate(commands):
        log = open(logs / f"proc{n}.log", "w")  # noqa: SIM115 (closed with the process)
        procs.append(subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log))
    return procs


def wait_until_up(base: str, limit: float = 60) -> None:
    deadline = time.time() + limit
    while time.time() < deadline:
        try:
            urllib.request.urlopen(base + "/alerts/", timeout=5).read()
            return
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.5)
    raise RuntimeError("gunicorn did not answer")


def page_pool() -> list[str]:
    from ingest.synthetic import PREFIX
    from perfdb.models import Result, Run, Setup

    setups = list(
        Setup.objects.filter(workload__name__startswith=PREFIX).values_list("id", flat=True)[:200]
    )
    # /activity/ is left out: its default run may be a 1M-sample bench run (100 MB page).
    urls = ["/", "/kernels/", "/scaling/", "/kernel-time/", "/wakeups/", "/alerts/"]
    for setup_id in random.Random(1).sample(setups, min(30, len(setups))):
        metric = Result.objects.filter(setup_id=setup_id).values_list("metric_id", flat=True)[0]
        urls.append(f"/kernels/?setup={setup_id}&metric={metric}")
    run = Run.objects.filter(synthetic=True).order_by("id").first()
    urls += [f"/runs/{run.pk}/", "/api/runs/", f"/api/runs/{run.pk}/"]
    return urls


class Stats:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.times: list[float] = []
        self.errors: list[str] = []
        self.upload_ids: list[int] = []


def user_loop(base: str, urls: list[str], until: float, stats: Stats, seed: int) -> None:
    rng = random.Random(seed)
    while time.time() < until:
        url = rng.choice(urls)
        start = time.perf_counter()
        try:
            with urllib.request.urlopen(base + url, timeout=30) as response:
                response.read()
            with stats.lock:
                stats.times.append(time.perf_counter() - start)
        except Exception as error:  # noqa: BLE001 (every failure is counted and shown)
            with stats.lock:
                stats.errors.append(f"GET {url}: {error}")


def multipart(field: str, filename: str, data: bytes) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="{field}"; '
        f'filename="{filename}"\r\nContent-Type: application/gzip\r\n\r\n'
    ).encode()
    return head + data + f"\r\n--{boundary}--\r\n".encode(), boundary


def uploader_loop(base: str, token: str, until: float, stats: Stats) -> None:
    while time.time() < until:
        label = f"load-{uuid.uuid4().hex[:12]}"
        body, boundary = multipart("bundle", f"{label}.tar.gz", bundle_bytes(10_000, label))
        request = urllib.request.Request(
            base + "/api/uploads/",
            data=body,
            headers={
                "Authorization": f"Token {token}",
                "Content-Type": f"multipart/form-data; boundary={boundary}",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                upload_id = json.loads(response.read())["id"]
            with stats.lock:
                stats.upload_ids.append(upload_id)
        except Exception as error:  # noqa: BLE001
            with stats.lock:
                stats.errors.append(f"POST upload: {error}")
        time.sleep(1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=8)
    parser.add_argument("--uploaders", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--drain", type=float, default=120, help="most to wait for uploads")
    args = parser.parse_args()
    django_setup()
    from perfdb.accounts import token_get, user_ensure
    from perfdb.models import Run, Upload

    token = token_get(user=user_ensure(username="bench-uploader", staff=False))
    urls = page_pool()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as tmp:
        procs = start_servers(port, Path(tmp), Path(tmp))
        try:
            wait_until_up(base)
            stats = Stats()
            start = time.time()
            until = start + args.seconds
            threads = [
                threading.Thread(target=user_loop, args=(base, urls, until, stats, n))
                for n in range(args.users)
            ] + [
                threading.Thread(target=uploader_loop, args=(base, token, until, stats))
                for _ in range(args.uploaders)
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            elapsed = time.time() - start
            deadline = time.time() + args.drain
            pending = Upload.objects.filter(pk__in=stats.upload_ids).exclude(status="done")
            while pending.exists() and time.time() < deadline:
                time.sleep(1)
            drained = time.time() - start - elapsed
        finally:
            for proc in procs:
                proc.terminate()
            for proc in procs:
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
    done = Upload.objects.filter(pk__in=stats.upload_ids, status="done")
    lost = len(stats.upload_ids) - done.count()
    Run.objects.filter(upload__in=done).update(synthetic=True)
    print(
        f"{args.users} users, {args.uploaders} uploaders for {elapsed:.0f} s on 127.0.0.1 "
        f"(gunicorn 2x4, 2 Celery workers); uploads drained {drained:.0f} s after\n"
    )
    rows = [
        (
            "page requests",
            len(stats.times),
            f"{len(stats.times) / elapsed:.1f}/s",
            ms(p50(stats.times)) if stats.times else "-",
            ms(p95(stats.times)) if stats.times else "-",
        ),
        (
            "uploads accepted",
            len(stats.upload_ids),
            f"{len(stats.upload_ids) / elapsed:.2f}/s",
            "-",
            "-",
        ),
    ]
    print(table(["what", "count", "throughput", "p50 ms", "p95 ms"], rows))
    print(f"\nerrors: {len(stats.errors)}; uploads lost: {lost}")
    for error in stats.errors[:10]:
        print("  ", error)


if __name__ == "__main__":
    main()
