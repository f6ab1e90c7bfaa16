"""python manage.py synth_history --scale N [--seed S] | --remove

Builds (or grows) a synthetic lab history for benchmarks, or removes it. See ingest/synthetic/
for its shape and docs/performance.md for how long each scale takes.
"""

from django.core.management.base import BaseCommand, CommandError

from ingest import synthetic


class Command(BaseCommand):
    help = (
        "Generate a synthetic history (Run.synthetic = True, names prefixed 'synthetic-'): "
        f"about {synthetic.results_per_unit():,} results per scale unit; --remove deletes it."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--scale", type=int, help="units to store in all (grows, never shrinks)"
        )
        parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
        parser.add_argument("--remove", action="store_true", help="delete all synthetic data")

    def handle(self, *args, scale: int | None, seed: int, remove: bool, **options):
        if remove:
            removed = synthetic.history_remove()
            self.stdout.write("removed: " + ", ".join(f"{k} {v}" for k, v in removed.items() if v))
            return
        if scale is None or scale < 1:
            raise CommandError("give --scale N (N >= 1) or --remove")
        expected = synthetic.counts(range(scale))
        self.stdout.write(
            f"scale {scale}: {expected.results:,} results, {expected.runs:,} runs, "
            f"{expected.samples:,} samples, {expected.profile_entries:,} profile entries in all"
        )

        def progress(done: int, total: int, counts: synthetic.Counts) -> None:
            self.stdout.write(f"  unit {done}/{total}: {counts.results:,} results written")

        report = synthetic.history_write(scale=scale, seed=seed, progress=progress)
        c = report.counts
        rate = c.results / report.seconds if report.seconds else 0
        self.stdout.write(
            f"wrote {len(report.units)} units ({c.results:,} results, {c.runs:,} runs, "
            f"{c.samples:,} samples, {c.profile_entries:,} profile entries) in "
            f"{report.seconds:.1f} s ({rate:,.0f} results/s)"
        )
        seconds = synthetic.statistics_refresh()
        self.stdout.write(f"planner statistics refreshed (VACUUM ANALYZE) in {seconds:.1f} s")
