"""What an upload costs the pages: the first request after runs are added to a scope.

Re-run (on a database built with ``python manage.py synth_history --scale N``):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/perfdb_bench_data python bench/upload_miss.py

Through Django's test client, for each page: warm; right after runs were added to *another*
scope (``perfdb.cache.runs_added``, what the ingest writer's commit does); right after runs
were added to the page's *own* scope; the same once the warm-up task's work
(``dashboards.page_cache.warm.pages_after_upload``, run by a worker after each upload's commit) is
done; and with everything stale (``data_changed``, what removing or editing runs does: the
worst case a page meets). Minimum of --repeat tries, wall ms and the process's CPU ms. Then
what the warm-up task costs after one machine's upload (a setup in each of its scopes).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

from _common import as_a_gunicorn_worker, django_setup, result_count, table


def _upload_then_warm(scope: str, setup_id: int) -> None:
    from dashboards.page_cache.warm import pages_after_upload
    from perfdb.cache import runs_added

    runs_added([scope], [setup_id])
    pages_after_upload([scope])


def _first_request(client: Any, url: str, bump: Callable[[], object], repeat: int) -> str:
    """The fastest of ``repeat`` first requests after ``bump``: "ms wall (ms CPU)"."""
    tries = []
    for _ in range(repeat):
        bump()
        wall, cpu = time.perf_counter(), time.process_time()
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)
        tries.append((time.perf_counter() - wall, time.process_time() - cpu))
    wall_s, cpu_s = min(tries)
    return f"{wall_s * 1000:.0f} ({cpu_s * 1000:.0f})"


def _machine_warm(repeat: int) -> str:
    """The pages worker's warm after one machine's nightly upload (a setup in each of its
    scopes, as bench/load.py's uploaders write), its pieces cached: the fastest of
    ``repeat``, "ms wall (ms CPU)", and the number of scopes."""
    from dashboards.page_cache.warm import pages_after_upload
    from ingest.synthetic import PREFIX
    from perfdb.cache import runs_added, scope_key
    from perfdb.models import Setup

    synthetic = Setup.objects.filter(workload__name__startswith=PREFIX).order_by("id")
    machine = synthetic.values_list("hardware_id", flat=True)[0]
    one: dict[str, int] = {}
    for s in synthetic.filter(hardware_id=machine):
        one.setdefault(scope_key(s.workload_id, s.hardware_id, s.mode), s.pk)
    tries = []
    for _ in range(repeat + 1):  # the first fills what was not cached yet
        runs_added(list(one), list(one.values()))
        wall, cpu = time.perf_counter(), time.process_time()
        pages_after_upload(list(one))
        tries.append((time.perf_counter() - wall, time.process_time() - cpu))
    wall_s, cpu_s = min(tries[1:])
    return f"{wall_s * 1000:.0f} ({cpu_s * 1000:.0f}) for {len(one)} scopes"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("PAGE_CACHE_WARM", "0")  # no worker here: the bench runs the warm-up
    django_setup()
    as_a_gunicorn_worker()
    from django.test import Client

    from ingest.synthetic import PREFIX
    from perfdb.cache import data_changed, runs_added, scope_key
    from perfdb.models import Result, Setup

    client = Client()
    synthetic = Setup.objects.filter(workload__name__startswith=PREFIX).order_by("id")
    setup = synthetic[len(synthetic) // 2]
    other = synthetic.exclude(workload_id=setup.workload_id)[len(synthetic) // 3]
    metric = Result.objects.filter(setup_id=setup.pk).values_list("metric_id", flat=True)[0]
    own = scope_key(setup.workload_id, setup.hardware_id, setup.mode)
    elsewhere = scope_key(other.workload_id, other.hardware_id, other.mode)
    series = f"/kernels/?setup={setup.pk}&metric={metric}"
    pages = {
        "home": "/",
        "kernels": "/kernels/",
        "series page": series,
        "series JSON": series + "&format=json",
        "scaling (scope)": f"/scaling/?scope={own}",
        "kernel-time (scope)": f"/kernel-time/?scope={own}",
    }
    cases = (
        ("warm", lambda: None),
        ("upload to another scope", lambda: runs_added([elsewhere], [other.pk])),
        # a run of the series' own setup (the worst case for the series page and JSON)
        ("upload to its own scope", lambda: runs_added([own], [setup.pk])),
        ("same, after the warm-up task", lambda: _upload_then_warm(own, setup.pk)),
        ("everything stale", data_changed),
    )

    for url in pages.values():
        client.get(url)
    rows = [
        [name] + [_first_request(client, url, bump, args.repeat) for _, bump in cases]
        for name, url in pages.items()
    ]
    print(f"{result_count():,} results; first request, min of {args.repeat}: ms wall (ms CPU)\n")
    print(table(["page"] + [name for name, _ in cases], rows))
    print(f"\nthe warm-up task after one machine's upload: {_machine_warm(args.repeat)}")


if __name__ == "__main__":
    main()
