"""What an emptied cache costs once whatever page is asked first: the reads over every
setup's summary (the scope index, the overview's totals per scope, kernel-time's busiest
profiled setup per scope), each one aggregate in PostgreSQL.

Re-run (on a database built with ``python manage.py synth_history --scale N``):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/perfdb_bench_data python bench/cold_reads.py

Each read is timed ``--repeat`` times straight from the database (no cache); the fastest
is printed, wall and CPU (this process and its PostgreSQL backend, from /proc).
"""

from __future__ import annotations

import argparse
import os
import time

from _common import django_setup, ms, table
from page_speed import backend_pid, cpu_now


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    django_setup()
    from dashboards.chart_queries.charts import WAKEUP_PARAMS
    from dashboards.chart_queries.overview import scope_totals, scopes_with_runs
    from dashboards.page_data.scope_stats import busiest_profiled
    from perfdb.models import SetupSummary

    pid = backend_pid()
    reads = (
        ("scope index (scopes_with_runs)", lambda: scopes_with_runs(needs=WAKEUP_PARAMS)),
        ("overview totals (scope_totals)", lambda: scope_totals(None)),
        ("busiest profiled setup a scope", busiest_profiled),
    )
    rows = []
    for name, read in reads:
        best = None
        for _ in range(args.repeat):
            wall, cpu = time.perf_counter(), cpu_now(pid)
            found = read()
            took = (time.perf_counter() - wall, cpu_now(pid) - cpu)
            best = took if best is None else min(best, took)
        assert best is not None
        rows.append((name, len(found), ms(best[0]), ms(best[1])))
    print(
        f"setups with runs: {SetupSummary.objects.count():,}; fastest of {args.repeat}; "
        f"load average {os.getloadavg()[0]:.1f} at the end\n"
    )
    print(table(["read", "rows", "wall ms", "CPU ms (with PostgreSQL's)"], rows))


if __name__ == "__main__":
    main()
