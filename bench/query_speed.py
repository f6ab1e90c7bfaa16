"""Series query and chart JSON speed, as the across-kernels page does them.

Re-run (after ``python manage.py synth_history --scale 81`` for ~1M results, 808 for ~10M):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/perfdb_bench_data python bench/query_speed.py

For random synthetic series (setup, metric), warm: the metric picker's query
(``metric_choices``), the series query (``series_points``), the Plotly figure
(``across_kernels_figure``) and its JSON, and the page's ``&format=json`` download through
Django's test Client. Prints p50 / p95 in milliseconds.
"""

from __future__ import annotations

import argparse
import json
import random

from _common import as_a_gunicorn_worker, django_setup, ms, p50, p95, result_count, table, timed


def figure_json(series) -> str:
    from dashboards.figures import across_kernels_figure

    return json.dumps(across_kernels_figure(series))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    django_setup()
    as_a_gunicorn_worker()
    from django.test import Client

    from dashboards import chart_queries as cq
    from ingest.synthetic import PREFIX
    from perfdb.models import Setup

    setups = list(
        Setup.objects.filter(workload__name__startswith=PREFIX).values_list("id", flat=True)
    )
    rng = random.Random(args.seed)
    chosen = [rng.choice(setups) for _ in range(args.samples)]
    client = Client()
    timings: dict[str, list[float]] = {k: [] for k in ("choices", "series", "figure", "http")}
    points, sizes = [], []
    for setup_id in chosen:
        metrics = cq.metric_choices(setup_ids=[setup_id])  # warm-up of this setup's pages
        metric = rng.choice(metrics)
        seconds, _ = timed(cq.metric_choices, setup_ids=[setup_id])
        timings["choices"].append(seconds)
        seconds, data = timed(cq.series_points, setup_id=setup_id, metric=metric)
        timings["series"].append(seconds)
        seconds, text = timed(figure_json, data.series)
        timings["figure"].append(seconds)
        url = f"/kernels/?setup={setup_id}&metric={metric['id']}&format=json"
        seconds, response = timed(client.get, url)
        assert response.status_code == 200, response.status_code
        timings["http"].append(seconds)
        points.append(len(data.series.points))
        sizes.append(len(response.content))
    print(f"results in the table: ~{result_count():,}; {args.samples} random series, warm\n")
    rows = [
        ("metric picker query (metric_choices)", timings["choices"]),
        ("series query (series_points)", timings["series"]),
        ("figure + JSON (across_kernels_figure)", timings["figure"]),
        (
            "series query + figure JSON",
            [a + b for a, b in zip(timings["series"], timings["figure"], strict=True)],
        ),
        ("GET /kernels/?…&format=json (test Client)", timings["http"]),
    ]
    print(
        table(
            ["step", "p50 ms", "p95 ms"],
            [(name, ms(p50(values)), ms(p95(values))) for name, values in rows],
        )
    )
    print(
        f"\npoints per series: median {p50(points):.0f}; "
        f"JSON download median {p50(sizes):,.0f} bytes"
    )


if __name__ == "__main__":
    main()
