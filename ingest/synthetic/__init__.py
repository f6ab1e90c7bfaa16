"""Synthetic lab history for benchmarks: kernels 2.2 → 2.6, patch sets, hardware, workloads.

``catalogue`` names what the lab has; ``generator`` turns it into setups and runs, pure and
reproducible from a seed; ``store`` writes them with COPY (``history_write``) and removes
them (``history_remove``). ``manage.py synth_history`` is the command.

Sizing: a scale unit is 12 setups (one per workload) each measured on every build, so a
series stays as long as a real lab's (one run per build) while the data grows with the number
of configurations, as a lab's does. ``results_per_unit()`` gives the exact count.
"""

from ingest.synthetic.catalogue import (
    BENCH_KERNELS,
    BUILDS,
    HARDWARE,
    PREFIX,
    SETUPS_PER_UNIT,
    WORKLOADS,
)
from ingest.synthetic.generator import (
    Counts,
    counts,
    metric_defs,
    results_per_unit,
    runs_of_setup,
    setup_spec,
    setups_of_unit,
)
from ingest.synthetic.store import history_remove, history_write, statistics_refresh

__all__ = [
    "BENCH_KERNELS",
    "BUILDS",
    "HARDWARE",
    "PREFIX",
    "SETUPS_PER_UNIT",
    "WORKLOADS",
    "Counts",
    "counts",
    "history_remove",
    "history_write",
    "statistics_refresh",
    "metric_defs",
    "results_per_unit",
    "runs_of_setup",
    "setup_spec",
    "setups_of_unit",
]
