"""A scope's scaling chart recomputed after an upload to it, as a loaded web server pays it.

Re-run (on a database built with ``python manage.py synth_history --scale N``):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/perfdb_bench_data \\
        python bench/scope_recompute.py [--freeze] [--scopes 6] [--repeat 3]

For the scaling page of each of the --scopes busiest scopes of bench/load.py's pool: opened
once, then --repeat times runs added to one of its setups (``perfdb.cache.runs_added``, what
the ingest writer's commit does) and the page opened again, through Django's test client.
Prints the process's CPU per recompute and the wall time spent in the cycle collector's
collections (``gc.callbacks``). --freeze first does what gunicorn's master does before it
forks a worker (config/gunicorn.conf.py ``pre_fork``: the URL conf imported, ``gc.freeze()``).
"""

from __future__ import annotations

import argparse
import gc
import os
import time

from _common import django_setup, result_count
from load_pages import page_pool


class Collections:
    """Wall time in the cycle collector, from ``gc.callbacks``."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._start = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._start


def busiest_scopes(n: int) -> dict[str, int]:
    """The pool's scaling scopes with the most setups, each with one of its setups."""
    from perfdb.models import Setup

    sizes: dict[str, list[int]] = {}
    for url in page_pool(100, 20, seed=1)["scaling"]:
        scope = url.split("scope=")[1]
        workload, hardware, mode = scope.split("-", 2)
        ids = Setup.objects.filter(workload_id=workload, hardware_id=hardware, mode=mode)
        sizes[scope] = list(ids.values_list("id", flat=True))
    chosen = sorted(sizes, key=lambda s: -len(sizes[s]))[:n]
    return {scope: sizes[scope][0] for scope in chosen}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scopes", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--freeze", action="store_true", help="as gunicorn's pre_fork does")
    args = parser.parse_args()
    os.environ.setdefault("PAGE_CACHE_WARM", "0")  # no worker here
    django_setup()
    from django.test import Client
    from django.urls import get_resolver

    from perfdb.cache import runs_added

    if args.freeze:
        get_resolver().url_patterns  # noqa: B018 (imports every view, as the master does)
        gc.freeze()
    client = Client()
    scopes = busiest_scopes(args.scopes)
    for scope in scopes:
        assert client.get(f"/scaling/?scope={scope}").status_code == 200
    collections = Collections()
    cpu = 0.0
    for _ in range(args.repeat):
        for scope, setup_id in scopes.items():
            runs_added([scope], [setup_id])
            start = time.process_time()
            assert client.get(f"/scaling/?scope={scope}").status_code == 200
            cpu += time.process_time() - start
    n = args.repeat * len(scopes)
    print(
        f"{result_count():,} results; {len(scopes)} scopes x {args.repeat}, freeze "
        f"{'on' if args.freeze else 'off'}: {cpu / n * 1000:.0f} ms CPU per recompute, "
        f"{collections.seconds / n * 1000:.0f} ms in collections"
    )


if __name__ == "__main__":
    main()
