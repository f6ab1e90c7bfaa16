"""bench/codespeed_compare.py's perfdb side and its HTTP clients: the same series uploaded as
bundles through ``/api/uploads/`` (a real Celery worker ingests them), and the timed GETs."""

from __future__ import annotations

import http.client
import io
import json
import random
import re
import tarfile
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Sequence

from load_bundles import multipart

# What a page's charts fetch: their figures (data-src) and the series page's alert marks
# (data-overlay), drawn over its figure.
DATA_SRC = re.compile(rb'data-(?:src|overlay)="([^"]+)"')


def _bundle(workload: str, kernels: Sequence[str], values: Sequence[list]) -> bytes:
    """A format-1 manifest: a run per kernel, each metric's value as three trials whose mean
    and sd are the value and sd Codespeed is given."""
    lines = ["format = 1", "[hardware.cs-box]", "cpus = 2"]
    for metric, _, _ in values[0]:
        lines += [f"[metric.{metric}]", 'unit = "ops/s"', 'better = "higher"']
    for kernel, row in zip(kernels, values, strict=True):
        trials = ", ".join(f"{m} = [{v - sd:.6g}, {v:.6g}, {v + sd:.6g}]" for m, v, sd in row)
        lines += [
            "[[run]]",
            f'workload = "{workload}"',
            f'kernel = "{kernel}"',
            'hardware = "cs-box"',
            'mode = "SMP"',
            f"metrics = {{ {trials} }}",
        ]
    data = ("\n".join(lines) + "\n").encode()
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        info = tarfile.TarInfo("manifest.toml")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def load_perfdb(base: str, n: int, kernels, values, per_upload: int) -> float | None:
    """Upload the data set (unless stored) in bundles of ``per_upload`` kernels, one after
    the other as a lab's machines would, each waited for until done. Seconds, or None."""
    from perfdb.models import Run

    workload = f"cs-compare-{n}"
    if Run.objects.filter(setup__workload__name=workload).count() >= n:
        return None
    token = bench_token()
    start = time.perf_counter()
    for first in range(0, n, per_upload):
        part = slice(first, first + per_upload)
        bundle = _bundle(workload, kernels[part], values[part])
        upload_done(base, token, f"{workload}-{first}.tar.gz", bundle)
    return time.perf_counter() - start


def bench_token() -> str:
    """The API token the bench uploads with (its user made once)."""
    from perfdb.operations.accounts import token_get, user_ensure

    return token_get(user=user_ensure(username="bench-codespeed", staff=False))


def upload_one(base: str, token: str, n: int, kernel: str, values: list) -> None:
    """One kernel's run added to data set ``n`` through ``POST /api/uploads/``, returning
    as soon as the upload's status says done (what an uploader waits for)."""
    workload = f"cs-compare-{n}"
    upload_done(base, token, f"{workload}-{kernel}.tar.gz", _bundle(workload, [kernel], [values]))


def upload_done(base: str, token: str, filename: str, bundle: bytes) -> None:
    body, boundary = multipart("bundle", filename, bundle)
    headers = {
        "Authorization": f"Token {token}",
        "Content-Type": f"multipart/form-data; boundary={boundary}",
    }
    request = urllib.request.Request(base + "/api/uploads/", data=body, headers=headers)
    with urllib.request.urlopen(request, timeout=120) as response:
        upload = json.loads(response.read())["id"]
    _wait_done(base, token, upload)


def _wait_done(base: str, token: str, upload: int, limit: float = 600) -> None:
    request = urllib.request.Request(
        f"{base}/api/uploads/{upload}/", headers={"Authorization": f"Token {token}"}
    )
    deadline = time.time() + limit
    while time.time() < deadline:
        with urllib.request.urlopen(request, timeout=30) as response:
            status = json.loads(response.read())["status"]
        if status == "done":
            return
        if status == "failed":
            raise RuntimeError(f"upload {upload} failed")
        time.sleep(0.05)
    raise RuntimeError(f"upload {upload} not done in {limit} s")


def wait_idle(queues: Sequence[str] = ("celery",), limit: float = 1800) -> None:
    """Until the Celery workers have nothing left (the uploads' regression checks) and
    ``queues`` are empty: the measurements must not share the CPU with them."""
    from config.celery import app

    deadline = time.time() + limit
    while time.time() < deadline:
        inspect = app.control.inspect(timeout=2)
        busy = [t for d in (inspect.active() or {}, inspect.reserved() or {}) for t in d.values()]
        with app.connection_for_read() as conn:
            client = conn.default_channel.client  # type: ignore[attr-defined]
            queued = sum(client.llen(queue) for queue in queues)
        if not any(busy) and not queued:
            return
        time.sleep(2)


def perfdb_ids(workload: str) -> tuple[int, dict[str, int]]:
    from perfdb.models import Metric, Setup

    setup = Setup.objects.get(workload__name=workload)
    metrics = dict(Metric.objects.filter(name__startswith="m").values_list("name", "id"))
    return setup.pk, metrics


class Client:
    """One keep-alive connection per server, as a browser keeps one."""

    def __init__(self, base: str) -> None:
        self.host, self.port = urllib.parse.urlsplit(base).netloc.split(":")
        self.conn = http.client.HTTPConnection(self.host, int(self.port), timeout=120)

    def get(self, url: str) -> bytes:
        for attempt in (1, 2):
            try:
                self.conn.request("GET", url)
                response = self.conn.getresponse()
                body = response.read()
                break
            except (http.client.HTTPException, ConnectionError):
                self.conn.close()  # the server closed a kept-alive connection: once more
                if attempt == 2:
                    raise
        if response.status != 200:
            raise RuntimeError(f"GET {url}: {response.status}")
        if response.getheader("Connection", "").lower() == "close":
            self.conn.close()
        return body


_clients: dict[tuple[int, str], Client] = {}


def _client(base: str) -> Client:
    key = (threading.get_ident(), base)
    if key not in _clients:
        _clients[key] = Client(base)
    return _clients[key]


def fetch_all(base: str, urls: Sequence[str], fresh: bool = False) -> float:
    """Seconds to GET the urls in turn, and the ``data-src`` each page's charts fetch, on
    this thread's kept-alive connection, or on a new one (``fresh``: a first visit)."""
    client = Client(base) if fresh else _client(base)
    start = time.perf_counter()
    for url in urls:
        body = client.get(url)
        for src in DATA_SRC.findall(body):
            client.get(src.decode().replace("&amp;", "&"))
    seconds = time.perf_counter() - start
    if fresh:
        client.conn.close()
    return seconds


def clients_run(base: str, pools: Sequence[Sequence[str]], clients: int, seconds: float) -> float:
    """Views per second (a view = a pool entry's requests) with ``clients`` threads asking
    without pause for ``seconds``."""
    done = [0] * clients
    until = time.time() + seconds

    def loop(n: int) -> None:
        rng = random.Random(n)
        while time.time() < until:
            fetch_all(base, rng.choice(pools))
            done[n] += 1

    threads = [threading.Thread(target=loop, args=(n,)) for n in range(clients)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(done) / (time.perf_counter() - start)
