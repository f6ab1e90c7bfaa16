"""Per-setup run summaries kept by the database itself, for the pages that read every scope.

The overview, the pickers' run counts, the busiest setup and the profiled setups need each
setup's number of runs, its newest run and its number of profiled runs. Counting them from
``perfdb_run`` reads every run of the scopes an upload touched (~13 ms of PostgreSQL per
scope at 10M results, twice per upload, and 0.5-1.6 s for all of them): under a lab's load
that was more than half of the database's CPU (docs/performance.md, "Per-setup summaries
kept by PostgreSQL").

PostgreSQL triggers (migration 0015) keep this table in step with every write in the same
transaction: statement-level, with transition tables, so a bulk COPY of runs costs one
aggregate, not one call per row. Runs added or removed, and profile entries added or
removed, change the counts by their difference (the summary row's lock orders concurrent
writers to one setup); an update that moves a run to another setup or time recomputes the
setups involved. Nothing in Python writes it.
"""

from __future__ import annotations

from django.db import models

from perfdb.models.vocabulary import Setup


class SetupSummary(models.Model):
    """One row per setup that has runs (none for a setup without)."""

    setup = models.OneToOneField(
        Setup, primary_key=True, on_delete=models.DO_NOTHING, related_name="summary"
    )
    run_count = models.IntegerField()
    # The newest run by (created_at, id), as the overview's "latest runs" orders them.
    newest_run_id = models.BigIntegerField()
    newest_at = models.DateTimeField()
    profiled_runs = models.IntegerField()  # runs with at least one profile entry

    def __str__(self) -> str:
        return f"setup {self.setup_id}: {self.run_count} runs"
