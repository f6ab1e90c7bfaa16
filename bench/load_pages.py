"""The pages bench/load.py's users open: URLs per page kind from the stored synthetic setups."""

from __future__ import annotations

import random
from collections import defaultdict


def page_pool(n_series: int, n_scopes: int, seed: int) -> dict[str, list[str]]:
    """URLs per page kind, drawn from the stored synthetic setups."""
    from ingest.synthetic import PREFIX
    from perfdb.models import Result, Setup

    rng = random.Random(seed)
    setups = list(
        Setup.objects.filter(workload__name__startswith=PREFIX).values(
            "id", "workload_id", "hardware_id", "mode", "params"
        )
    )
    per_scope: dict[str, int] = defaultdict(int)
    for s in setups:
        per_scope[f"{s['workload_id']}-{s['hardware_id']}-{s['mode']}"] += 1
    # A scope with one setup has nothing to scale over: its scaling page is a 400.
    scope_keys = sorted(key for key, n in per_scope.items() if n > 1)
    scopes = rng.sample(scope_keys, min(n_scopes, len(scope_keys)))
    in_scopes = [
        s for s in setups if f"{s['workload_id']}-{s['hardware_id']}-{s['mode']}" in scopes
    ]
    chosen = rng.sample(in_scopes, min(n_series, len(in_scopes)))
    pool: dict[str, list[str]] = defaultdict(list)
    for setup in chosen:
        metrics = list(
            Result.objects.filter(setup_id=setup["id"]).values_list("metric_id", flat=True)[:40]
        )
        metric = rng.choice(sorted(set(metrics)))
        query = f"setup={setup['id']}&metric={metric}"
        pool["series page"].append(f"/kernels/?{query}")
        pool["series json"].append(f"/kernels/?{query}&format=json")
        pool["api series"].append(f"/api/series/?{query}")
    for key in scopes:
        pool["scaling"].append(f"/scaling/?scope={key}")
        pool["kernel-time"].append(f"/kernel-time/?scope={key}")
    # wakeups charts only the VolanoMark-style scopes with nice values.
    wakeup_scopes = sorted(
        {
            f"{s['workload_id']}-{s['hardware_id']}-{s['mode']}"
            for s in setups
            if "server_nice" in s["params"]
        }
    )
    for key in rng.sample(wakeup_scopes, min(5, len(wakeup_scopes))):
        pool["wakeups"].append(f"/wakeups/?scope={key}")
    _run_pages(pool, [s["id"] for s in chosen])
    pool["home"] = ["/"]
    pool["kernels default"] = ["/kernels/"]
    pool["alerts"] = ["/alerts/"]
    pool["api runs"] = ["/api/runs/"]
    return pool


def _run_pages(pool: dict[str, list[str]], setup_ids: list[int]) -> None:
    """Run pages, and compares of two early against two late kernels of a setup."""
    from django.db.models import Min

    from perfdb.models import Run

    runs = list(
        Run.objects.filter(setup_id__in=setup_ids)
        .values("setup_id", "kernel_id")
        .annotate(run=Min("id"))
        .values_list("setup_id", "run")[:2000]
    )
    by_setup: dict[int, list[int]] = defaultdict(list)
    for setup_id, run_id in runs:
        by_setup[setup_id].append(run_id)
    for run_ids in list(by_setup.values())[:40]:
        pool["run detail"].append(f"/runs/{run_ids[-1]}/")
        if len(run_ids) >= 4:
            pool["compare"].append(
                f"/compare/?base={run_ids[0]},{run_ids[1]}&new={run_ids[-2]},{run_ids[-1]}"
            )
