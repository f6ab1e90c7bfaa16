"""perfdb and Codespeed side by side: the same series in both, loaded through their
public write paths, served by gunicorn with the same workers, measured in the same run.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/perfdb_cs REDIS_URL=redis://127.0.0.1:6379/10 \\
        python bench/codespeed_compare.py --sizes 1000,64 --metrics 60

Data: for each size N, one setup (perfdb) / one environment and executable (Codespeed) with
``--metrics`` metrics × N kernels, one value (and its sd) per metric and kernel. perfdb gets
bundles through ``POST /api/uploads/``, ingested by real Celery workers (the regression check
and the pages' warm-up run too; ``--celery``: docker-compose's split workers, the warm-up at
nice 10, as bench/load.py starts them); Codespeed gets one ``POST /result/add/json/`` per
kernel. Both databases are
PostgreSQL on this machine; Codespeed's is DATABASE_URL's name + ``_codespeed`` (or
``--cs-db``), both analyzed once loaded. A second run finds the data loaded and only measures
(``--reload`` starts both databases again).

Two phases (``--phases``), each for every size:

- *warm*: repeat reads, the requests of the two servers interleaved: the series' JSON (perfdb
  ``/api/series/``, Codespeed ``/timeline/json/`` with ``revs=N``), the series page with its
  data (perfdb ``/kernels/`` and what its chart fetches: its figure, with the alert marks;
  Codespeed ``/timeline/`` and its ``/timeline/json/``), p50/p95 ms; then requests/s with
  10 clients on each;
- *first*: the first request after a one-kernel upload (``first_after_upload``), median and
  max of ``--uploads`` uploads, the two servers alternating, on new connections.

Ratios are Codespeed / perfdb (time) and perfdb / Codespeed (throughput): the goal is ≥ 3 on
each. Each series grows by ``--uploads`` kernels per run of the first phase.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import codespeed_side as cs  # noqa: E402
from _common import ROOT, django_setup, ms, p50, p95, table  # noqa: E402
from codespeed_load import (  # noqa: E402
    bench_token,
    clients_run,
    fetch_all,
    load_perfdb,
    perfdb_ids,
    upload_one,
    wait_idle,
)
from load_servers import free_port, server_env, start_servers, stop, wait_until_up  # noqa: E402


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,64", help="kernels per series, one data set each")
    parser.add_argument("--metrics", type=int, default=60)
    parser.add_argument("--series", type=int, default=5, help="series measured per data set")
    parser.add_argument("--rounds", type=int, default=20, help="requests per series and kind")
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=15, help="per throughput measurement")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument(
        "--celery",
        default="ingest:2,detection:1,email:1,pages:1:10",
        help="Celery workers, queue:concurrency[:nice], comma-separated (bench/load.py's "
        "option): docker-compose's split workers, the pages' warm-up at nice 10, by default; "
        "'all:2' = one worker on the default queue for every task",
    )
    parser.add_argument("--per-upload", type=int, default=100, help="kernels per perfdb bundle")
    parser.add_argument("--uploads", type=int, default=10, help="one-kernel uploads, first phase")
    parser.add_argument(
        "--phases", default="warm,first", help="warm (repeat reads, clients), first (after uploads)"
    )
    parser.add_argument(
        "--after-check",
        action="store_true",
        help="first phase: ask perfdb once its worker has finished the upload's regression "
        "check and warm-up (default: as soon as the upload says done)",
    )
    parser.add_argument("--venv", default="/tmp/codespeed-bench-venv")
    parser.add_argument("--reload", action="store_true", help="drop both databases first")
    parser.add_argument(
        "--cs-db", default="", help="Codespeed's database (default: DATABASE_URL's + _codespeed)"
    )
    return parser.parse_args()


def series_values(n: int, metrics: int) -> list[list[tuple[str, float, float]]]:
    """Per kernel: (metric, value, sd) of every metric; a 2 % random walk, fixed seed."""
    rng = random.Random(n)
    level = [1000.0 * (1 + m / 10) for m in range(metrics)]
    out = []
    for _ in range(n):
        level = [v * (1 + rng.gauss(0, 0.02)) for v in level]
        out.append([(f"m{m:02d}", round(v, 3), round(v * 0.01, 3)) for m, v in enumerate(level)])
    return out


def kernel_values(metrics: int, seed: int) -> list[tuple[str, float, float]]:
    """(metric, value, sd) of every metric for one more kernel: the levels of
    ``series_values`` moved by a 2 % random step."""
    rng = random.Random(seed)
    out = []
    for m in range(metrics):
        value = 1000.0 * (1 + m / 10) * (1 + rng.gauss(0, 0.02))
        out.append((f"m{m:02d}", round(value, 3), round(value * 0.01, 3)))
    return out


def queues(celery: str) -> list[str]:
    """The broker queues of the ``--celery`` workers ("all": the default queue)."""
    names = [part.split(":")[0] for part in celery.split(",")]
    return sorted({"celery" if n == "all" else q for n in names for q in n.split("+")})


def loadavg() -> str:
    return Path("/proc/loadavg").read_text().split()[0]


def kernels_of(n: int) -> list[str]:
    return [f"4.{i // 100}.{i % 100}" for i in range(n)]


def databases(reload: bool, cs_name: str) -> tuple[str, str]:
    """perfdb's database (DATABASE_URL, migrated) and Codespeed's beside it (created)."""
    url = os.environ["DATABASE_URL"]
    cs_name = cs_name or url.rsplit("/", 1)[1] + "_codespeed"
    psql = ["psql", "-h", "127.0.0.1", "-U", "postgres", "-q", "-c"]
    if reload:
        for name in (url.rsplit("/", 1)[1], cs_name):
            subprocess.run(psql + [f'DROP DATABASE IF EXISTS "{name}"'], check=True)
            subprocess.run(psql + [f'CREATE DATABASE "{name}"'], check=True)
    else:
        subprocess.run(psql + [f'CREATE DATABASE "{cs_name}"'], capture_output=True)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, check=True)
    return url, url.rsplit("/", 1)[0] + "/" + cs_name


def analyze(urls: list[str]) -> None:
    """Both databases' planner statistics brought up to date, as autovacuum would have on a
    server in use: just loaded, the series query joined 3,000 rows by nested loops planned
    for one (70 ms instead of 13 ms on a loaded 2-core machine)."""
    import psycopg

    for url in urls:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("ANALYZE")


def load_codespeed(args, python, project, base, cs_url, sizes) -> dict[int, float]:
    cs.set_up(python, project, sizes)
    seconds = {}
    for n in sizes:
        if cs.ids(cs_url, n)["results"] >= n * args.metrics:
            continue
        start = time.perf_counter()
        values = iter(series_values(n, args.metrics))
        cs.post_all(base, cs.results_of(n, kernels_of(n), values))
        seconds[n] = time.perf_counter() - start
    return seconds


def measure(args, bases, targets) -> dict[str, list[float]]:
    """Sequential warm requests, the two servers interleaved; ms lists per (server, kind)."""
    times: dict[str, list[float]] = {}
    for round_ in range(args.rounds + 1):
        for target in targets:
            for server in ("perfdb", "codespeed"):
                for kind in ("json", "page"):
                    urls = target[server][kind]
                    seconds = fetch_all(bases[server], urls)
                    if round_:  # the caches warm on the untimed first sweep
                        times.setdefault(f"{server} {kind}", []).append(seconds)
    return times


def report(n: int, times, rates, loads: list[str]) -> None:
    rows = []
    for kind in ("json", "page"):
        pdb, csp = times[f"perfdb {kind}"], times[f"codespeed {kind}"]
        rows.append(
            [f"series {kind} p50 ms", ms(p50(pdb)), ms(p50(csp)), f"{p50(csp) / p50(pdb):.2f}"]
        )
        rows.append(
            [f"series {kind} p95 ms", ms(p95(pdb)), ms(p95(csp)), f"{p95(csp) / p95(pdb):.2f}"]
        )
    for kind in ("json", "page"):
        pdb, csp = rates[f"perfdb {kind}"], rates[f"codespeed {kind}"]
        label = f"{kind} req/s, {len(loads) and 10} clients"
        rows.append([label, f"{pdb:.1f}", f"{csp:.1f}", f"{pdb / csp:.2f}"])
    print(f"\n### {n} kernels per series (load average during: {', '.join(loads)})\n")
    print(table(["", "perfdb", "Codespeed", "ratio (≥ 3 is the goal)"], rows))


def first_after_upload(args, bases, n: int, targets) -> dict[str, list[float]]:
    """The first request after a one-kernel upload, ``args.uploads`` times. Each time, the
    same new kernel is uploaded to each server through its write path (perfdb: a bundle
    through ``/api/uploads/``, waited for until its status says done, as an uploader waits;
    Codespeed: one ``POST /result/add/json/``, which answers once stored), and right after
    its upload each server is asked, on new connections, for the series JSON of one metric
    and the series page with its data of another: both series just changed. Which server
    goes first alternates, and so do the two series. With ``--after-check``, perfdb is asked
    only once its worker is idle again (the upload's regression check and pages warm-up
    done), not sharing the cores with them. Seconds per (server, kind)."""
    from perfdb.models import Run

    token = bench_token()
    before = Run.objects.filter(setup__workload__name=f"cs-compare-{n}").count() - n
    times: dict[str, list[float]] = {}
    for i in range(args.uploads):
        k = before + i  # the new kernel's number: 5.k.0 sorts after every 4.x.y
        kernel, values = f"5.{k}.0", kernel_values(args.metrics, n + k)
        json_of, page_of = targets[i % len(targets)], targets[(i + 1) % len(targets)]
        servers = ("perfdb", "codespeed") if i % 2 == 0 else ("codespeed", "perfdb")
        for server in servers:
            if server == "perfdb":
                upload_one(bases[server], token, n, kernel, values)
                if args.after_check:
                    wait_idle(queues(args.celery))
            else:
                cs.post_all(bases[server], cs.results_of(n, [kernel], iter([values]), n + k), 1)
            for kind, target in (("json", json_of), ("page", page_of)):
                seconds = fetch_all(bases[server], target[server][kind], fresh=True)
                times.setdefault(f"{server} {kind}", []).append(seconds)
    return times


def report_first(n: int, times, loads: list[str], after_check: bool) -> None:
    rows = []
    for kind, name in (("json", "series JSON"), ("page", "series page with its data")):
        pdb, csp = times[f"perfdb {kind}"], times[f"codespeed {kind}"]
        for stat, of in (("p50", statistics.median), ("max", max)):
            rows.append(
                [f"{name}, {stat} ms", ms(of(pdb)), ms(of(csp)), f"{of(csp) / of(pdb):.2f}"]
            )
    uploads = len(times["perfdb json"])
    when = "once its check finished" if after_check else "as soon as it is done"
    print(
        f"\n### {n} kernels per series, first request after a one-kernel upload, {when} "
        f"(n = {uploads}; load average during: {', '.join(loads)})\n"
    )
    print(table(["", "perfdb", "Codespeed", "ratio (≥ 3 is the goal)"], rows))


def run(args, python, project, cs_url) -> None:
    sizes = [int(s) for s in args.sizes.split(",")]
    ports = {"perfdb": free_port(), "codespeed": free_port()}
    bases = {k: f"http://127.0.0.1:{p}" for k, p in ports.items()}
    ns = argparse.Namespace(celery=args.celery, workers=args.workers, threads=args.threads)
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        procs = start_servers(server_env(ports["perfdb"], tmp, ns), tmp, ns.celery)
        procs.append(cs.start(python, project, ports["codespeed"], args.workers, args.threads))
        try:
            wait_until_up(bases["perfdb"])
            cs.wait_until_up(bases["codespeed"])
            loaded = load_codespeed(args, python, project, bases["codespeed"], cs_url, sizes)
            loaded_pdb = {
                n: load_perfdb(
                    bases["perfdb"],
                    n,
                    kernels_of(n),
                    series_values(n, args.metrics),
                    args.per_upload,
                )
                for n in sizes
            }
            wait_idle(queues(args.celery))
            analyze([os.environ["DATABASE_URL"], cs_url])
            for n in sizes:
                if loaded.get(n) or loaded_pdb.get(n):
                    print(
                        f"loaded {n} kernels × {args.metrics} metrics: Codespeed "
                        f"{loaded.get(n, 0):.1f} s, perfdb {loaded_pdb.get(n) or 0:.1f} s"
                    )
            for n in sizes:
                measure_size(args, bases, cs_url, n)
        finally:
            stop(procs)


def measure_size(args, bases, cs_url, n: int) -> None:
    rng = random.Random(n)
    metrics = rng.sample([f"m{m:02d}" for m in range(args.metrics)], args.series)
    setup, metric_ids = perfdb_ids(f"cs-compare-{n}")
    found = cs.ids(cs_url, n)
    targets = []
    for metric in metrics:
        page = f"/kernels/?setup={setup}&metric={metric_ids[metric]}"
        cs_json, cs_page = cs.urls(n, found["exe"], found["env"], metric)
        targets.append(
            {
                "perfdb": {
                    "json": [f"/api/series/?setup={setup}&metric={metric_ids[metric]}"],
                    "page": [page],
                },
                "codespeed": {"json": [cs_json], "page": cs_page},
            }
        )
    phases = args.phases.split(",")
    if "warm" in phases:
        loads = [loadavg()]
        times = measure(args, bases, targets)
        loads.append(loadavg())
        rates = {}
        for server in ("perfdb", "codespeed"):
            for kind in ("json", "page"):
                pools = [t[server][kind] for t in targets]
                rate = clients_run(bases[server], pools, args.clients, args.seconds)
                rates[f"{server} {kind}"] = rate
                loads.append(loadavg())
        report(n, times, rates, loads)
    if "first" in phases:
        wait_idle(queues(args.celery))  # the warm phase's clients have stopped, no check runs
        loads = [loadavg()]
        first = first_after_upload(args, bases, n, targets)
        loads.append(loadavg())
        report_first(n, first, loads, args.after_check)


def main() -> None:
    args = arguments()
    # A TERM (timeout, kill) still stops both servers and the worker: `finally` runs.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    _, cs_url = databases(args.reload, args.cs_db)
    django_setup()
    python = cs.ensure_venv(Path(args.venv))
    project = Path(args.venv) / "project"
    cs.write_project(project, cs_url.rsplit("/", 1)[1])
    print(
        f"machine: {os.cpu_count()} cores; load average {Path('/proc/loadavg').read_text().strip()}"
    )
    run(args, python, project, cs_url)


if __name__ == "__main__":
    main()
