"""What the regression check's setup lock (perfdb/alerting/series_lock.py) costs a check.

Each check transaction sends one ``SELECT pg_advisory_xact_lock(16, k) FROM unnest(...)``.
This runs N transactions with and without it (plus a ``SELECT 1`` standing for the check),
in alternating rounds so both see the same load, and prints wall and client CPU per
transaction. Re-run:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres python bench/check_lock_cost.py 2000
"""

from __future__ import annotations

import os
import sys
import time

import psycopg

LOCK = "SELECT pg_advisory_xact_lock(%s, k) FROM unnest(%s::int[]) AS k"


def per_transaction(conn: psycopg.Connection, n: int, *, lock: bool) -> tuple[float, float]:
    """(wall ms, client CPU ms) per transaction."""
    wall, cpu = time.perf_counter(), time.process_time()
    for i in range(n):
        with conn.transaction():
            if lock:
                conn.execute(LOCK, [16, [i % 50 + 1]])
            conn.execute("SELECT 1")
    return (time.perf_counter() - wall) / n * 1e3, (time.process_time() - cpu) / n * 1e3


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    url = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
    with psycopg.connect(url.replace("postgres://", "postgresql://", 1)) as conn:
        for r in range(3):
            without = per_transaction(conn, n, lock=False)
            with_lock = per_transaction(conn, n, lock=True)
            print(
                f"round {r}: without {without[0]:.3f} ms wall, {without[1]:.3f} ms CPU | "
                f"with the lock {with_lock[0]:.3f} ms wall, {with_lock[1]:.3f} ms CPU"
            )
    print("load average:", " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
