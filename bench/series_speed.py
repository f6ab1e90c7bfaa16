"""The series page and its data, single requests: warm, and the first request after
an upload to the series' setup (its setup's and scope's versions moved: everything of the
series recomputed).

    export DATABASE_URL=postgres://postgres@127.0.0.1:5432/perfdb_speed10m
    REDIS_URL=redis://127.0.0.1:6379/10 python bench/series_speed.py --series 10 --repeat 20

Read-only on the database (the cache is the only thing written). Series: ``--series`` random
ones with at least ``--min-points`` runs, plus the longest one stored. Through Django's test
Client (the whole view, middleware and template, no network), as bench/page_speed.py. Prints
p50/p95 ms and CPU ms of the process, the p50 wall (CPU) ms of ``--repeat`` first requests
after an upload, the bytes, and the load average.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from _common import as_a_gunicorn_worker, django_setup, ms, p50, p95, result_count, table


def pick_series(n: int, min_points: int, seed: int) -> list[tuple[int, int, int]]:
    """(setup, metric, points) of ``n`` random series and the longest one."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT max(id) FROM perfdb_setup")
        top = cursor.fetchone()[0] or 0
        rng = random.Random(seed)
        found: list[tuple[int, int, int]] = []
        for _ in range(50 * n):
            if len(found) >= n:
                break
            cursor.execute(
                "SELECT setup_id, metric_id, count(DISTINCT run_id) FROM perfdb_result"
                " WHERE setup_id = %s GROUP BY 1, 2 HAVING count(DISTINCT run_id) >= %s LIMIT 1",
                [rng.randint(1, top), min_points],
            )
            found += cursor.fetchall()
        cursor.execute(
            "SELECT setup_id, count(*) FROM perfdb_run GROUP BY 1 ORDER BY 2 DESC LIMIT 1"
        )
        longest = cursor.fetchone()
        if longest:
            cursor.execute(
                "SELECT metric_id, count(DISTINCT run_id) FROM perfdb_result WHERE setup_id = %s"
                " GROUP BY 1 ORDER BY 2 DESC LIMIT 1",
                [longest[0]],
            )
            metric, points = cursor.fetchone()
            found.append((longest[0], metric, points))
    return found


def _get(client, url: str) -> tuple[float, float, int]:
    wall, cpu = time.perf_counter(), time.process_time()
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    return time.perf_counter() - wall, time.process_time() - cpu, len(response.content)


def measure(client, series, repeat: int) -> list[list[str]]:
    from perfdb.cache import runs_added
    from perfdb.models import Setup

    kinds = {
        "series JSON /api/series/": "/api/series/?setup={s}&metric={m}",
        "series page /kernels/ (HTML)": "/kernels/?setup={s}&metric={m}",
        "its figure /kernels/figure/": "/kernels/figure/?setup={s}&metric={m}",
    }
    rows = []
    for setup_id, metric_id, points in series:
        setup = Setup.objects.get(pk=setup_id)
        scope = f"{setup.workload_id}-{setup.hardware_id}-{setup.mode}"
        for kind, pattern in kinds.items():
            url = pattern.format(s=setup_id, m=metric_id)
            first = []
            for _ in range(repeat):
                # as an upload of a run of this setup: the first request recomputes
                runs_added([scope], [setup_id])
                first.append(_get(client, url))
            warm = [_get(client, url) for _ in range(repeat)]
            walls, cpus = [w for w, _, _ in warm], [c for _, c, _ in warm]
            rows.append(
                [
                    kind,
                    str(points),
                    ms(p50(walls)),
                    ms(p95(walls)),
                    ms(p50(cpus)),
                    f"{ms(p50([w for w, _, _ in first]))} ({ms(p50([c for _, c, _ in first]))})",
                    f"{warm[-1][2]:,}",
                ]
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--series", type=int, default=5)
    parser.add_argument("--min-points", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    django_setup()
    as_a_gunicorn_worker()
    from django.test import Client

    series = pick_series(args.series, args.min_points, args.seed)
    load = Path("/proc/loadavg").read_text().split()[:3]
    rows = measure(Client(), series, args.repeat)
    load_after = Path("/proc/loadavg").read_text().split()[:3]
    print(
        f"results: ~{result_count():,}; {args.repeat} warm requests per URL and series; "
        f"load average {' '.join(load)} before, {' '.join(load_after)} after\n"
    )
    headers = [
        "request",
        "points",
        "p50 ms",
        "p95 ms",
        "CPU p50 ms",
        "after upload p50 ms (CPU)",
        "bytes",
    ]
    print(table(headers, rows))


if __name__ == "__main__":
    main()
