"""Uploads and runs, and what hangs off a run: trials, results, profiles, samples,
histograms, curves and the raw files. The big tables use BIGINT keys."""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models

from perfdb.models.checks import finite
from perfdb.models.vocabulary import Kernel, Metric, PatchSet, Setup


class Upload(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        PROCESSING = "processing"
        DONE = "done"
        FAILED = "failed"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    file = models.FileField(upload_to="bundles/%Y/%m/")
    filename = models.CharField(max_length=255)
    sha256 = models.CharField(max_length=64, unique=True)
    size = models.BigIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    error = models.TextField(blank=True)
    warnings = models.JSONField(default=list, blank=True)
    files_total = models.PositiveIntegerField(default=0)
    files_done = models.PositiveIntegerField(default=0)
    attempts = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    source = models.CharField(max_length=20, default="api")  # api | web | cli | demo
    # Runs this upload created or found already stored (identical data uploaded before).
    run_ids = ArrayField(models.BigIntegerField(), default=list, blank=True)
    # When the ingest task was handed to the broker (null: not yet, or sending failed; the
    # recovery sweep queues it then).
    task_sent_at = models.DateTimeField(null=True, blank=True)
    # Follow-up work owed, set in the commit that stores the runs and cleared by the
    # regression check once its alerts are committed: a sweep re-queues it past the due time.
    detection_due_at = models.DateTimeField(null=True, blank=True)
    detection_series = models.JSONField(default=list, blank=True)  # [[setup_id, metric_id]]

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            # Serves: the stuck-upload sweep (status = processing AND started_at < now - limit).
            models.Index(fields=["status", "started_at"], name="upload_status_idx"),
            # Serves: the detection sweep (detection_due_at <= now).
            models.Index(
                fields=["detection_due_at"],
                name="upload_detection_due_idx",
                condition=models.Q(detection_due_at__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"upload {self.pk} ({self.filename}, {self.status})"


class Run(models.Model):
    """One measured configuration: setup + kernel + patch set, with trials and raw files."""

    setup = models.ForeignKey(Setup, on_delete=models.PROTECT, related_name="runs")
    kernel = models.ForeignKey(Kernel, on_delete=models.PROTECT, related_name="runs")
    patch_set = models.ForeignKey(PatchSet, on_delete=models.PROTECT, related_name="runs")
    upload = models.ForeignKey(
        Upload, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )
    label = models.CharField(max_length=100, blank=True)
    # The run this one is measured against when its source says so (002's "Base1"); the
    # regression check then compares with it instead of the default baseline.
    baseline = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    notes = models.TextField(blank=True)
    discard_first_trial = models.BooleanField(default=False)
    # sha256 of the run's keys and data: the same run uploaded twice is stored once.
    fingerprint = models.CharField(max_length=64, unique=True)
    synthetic = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            # Serves: runs of one series across kernels (setup = ? ORDER BY kernel).
            models.Index(fields=["setup", "kernel", "patch_set"], name="run_series_idx"),
            # Serves: newest runs first (ORDER BY created_at DESC, id DESC LIMIT n):
            # chart_queries.run_choices (compare and activity pickers), queries.runs_recent.
            models.Index(fields=["-created_at", "-id"], name="run_recent_idx"),
            # The newest run of one setup (setup = ? ORDER BY created_at DESC, id DESC LIMIT 1).
            # No page asks it since the overview reads the per-setup summaries (SetupSummary).
            models.Index(fields=["setup", "-created_at", "-id"], name="run_setup_recent_idx"),
        ]

    def __str__(self) -> str:
        return f"run {self.pk}: {self.setup.workload} {self.build}"

    @property
    def build(self) -> str:
        """Kernel plus patches as the papers write them: ``2.4.20+O(1)``, ``2.5.59``."""
        patches = f"+{self.patch_set.name}" if self.patch_set.name else ""
        return f"{self.kernel.version}{patches}"


class Trial(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="trials")
    number = models.PositiveSmallIntegerField()
    discarded = models.BooleanField(default=False)  # warm-up, left out of means and tests

    class Meta:
        ordering = ["run", "number"]
        constraints = [models.UniqueConstraint(fields=["run", "number"], name="trial_uniq")]

    def __str__(self) -> str:
        return f"run {self.run_id} trial {self.number}"


class Result(models.Model):
    """A scalar result; ``trial`` 0 is a run-level value (no per-trial breakdown).

    ``setup`` and ``metric`` repeat the run's keys so one series is one index range scan.
    The table is hash-partitioned by ``setup`` (migration 0010, docs/deploy.md): a series is
    in one partition. PostgreSQL wants the partition key in every unique key, so the primary
    key in the database is ``(id, setup)`` (``id`` alone stays unique: one sequence) and
    ``result_uniq`` carries ``setup`` too (a run has one setup: the same rows).
    """

    id = models.BigAutoField(primary_key=True)
    # No single-column indexes on run and setup: result_uniq starts with run and
    # result_series_idx with setup, and each index is written for every row (migration 0010).
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="results", db_index=False)
    setup = models.ForeignKey(Setup, on_delete=models.CASCADE, related_name="+", db_index=False)
    metric = models.ForeignKey(Metric, on_delete=models.PROTECT, related_name="results")
    trial = models.PositiveSmallIntegerField(default=0)
    discarded = models.BooleanField(default=False)
    value = models.FloatField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "metric", "trial", "setup"], name="result_uniq"),
            # Every write path (ingest's COPY, admin, shell): a stored result is a finite
            # number (in PostgreSQL NaN sorts above Infinity, so this refuses NaN too).
            models.CheckConstraint(condition=finite("value"), name="result_value_finite"),
        ]
        indexes = [
            # Serves: one series across kernels (setup = ? AND metric = ?).
            models.Index(fields=["setup", "metric"], name="result_series_idx"),
            # "Everything about one run" is served by result_uniq (run, metric, trial).
        ]

    def __str__(self) -> str:
        return f"run {self.run_id} {self.metric_id} trial {self.trial} = {self.value}"


class ResultSummary(models.Model):
    """The spread a report states for a run's value when its trials are not in the file.

    The kernel test robot prints ``1234567 ± 2%`` and mmtests a Stddev row beside each mean:
    the run then has one stored value (trial 0, the mean) and this row says what it summarises.
    Kept as printed (``sd`` in the metric's unit, ``sd_pct`` as a percent of the value, the
    number of ``runs`` only when the report states it), so that a comparison can be tested
    from summary statistics and says so, instead of reading the mean as one trial.
    """

    id = models.BigAutoField(primary_key=True)
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="summaries")
    metric = models.ForeignKey(Metric, on_delete=models.PROTECT, related_name="+")
    sd = models.FloatField(null=True, blank=True)
    sd_pct = models.FloatField(null=True, blank=True)
    runs = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "metric"], name="result_summary_uniq"),
            # A spread is a finite number >= 0 (a zero spread is printed: "0.00").
            models.CheckConstraint(
                condition=finite("sd", null=True) & ~models.Q(sd__lt=0),
                name="result_summary_sd_finite",
            ),
            models.CheckConstraint(
                condition=finite("sd_pct", null=True) & ~models.Q(sd_pct__lt=0),
                name="result_summary_sd_pct_finite",
            ),
        ]

    def __str__(self) -> str:
        return f"run {self.run_id} {self.metric_id}: sd {self.sd} sd% {self.sd_pct} n {self.runs}"


class ProfileEntry(models.Model):
    """One function's ticks in a run's profile. Not partitioned: hash partitions by run made
    the pickers' per-run probes scans of every partition (migration 0011)."""

    id = models.BigAutoField(primary_key=True)
    # run's own index would repeat profile_uniq's first column.
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="profile", db_index=False)
    trial = models.PositiveSmallIntegerField(default=0)
    source = models.CharField(max_length=30, default="readprofile")
    function = models.CharField(max_length=200)
    ticks = models.FloatField()
    load = models.FloatField(null=True, blank=True)
    share_pct = models.FloatField(null=True, blank=True)

    class Meta:
        constraints = [
            # Also serves: a run's profile (run = ?), everything about one run.
            models.UniqueConstraint(
                fields=["run", "trial", "source", "function"], name="profile_uniq"
            ),
            models.CheckConstraint(
                condition=finite("ticks")
                & finite("load", null=True)
                & finite("share_pct", null=True),
                name="profile_finite",
            ),
        ]

    def __str__(self) -> str:
        return f"run {self.run_id} {self.function}: {self.ticks}"


class Sample(models.Model):
    """One column of a time series (vmstat's ``cs`` over a run), its values in row order.

    Stored as arrays, one row per column (see perfdb/timeseries.py for why). Not partitioned
    (migration 0011, as ProfileEntry). ``values`` and ``preview`` hold no NaN or infinity: a
    CHECK written in SQL (``sample_values_finite``, migration 0016), as Q cannot say it.
    """

    id = models.BigAutoField(primary_key=True)
    # run's own index would repeat sample_column_uniq's first column.
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="samples", db_index=False)
    trial = models.PositiveSmallIntegerField(default=0)
    source = models.CharField(max_length=30)
    column = models.CharField(max_length=60)
    values = ArrayField(models.FloatField())
    # Row numbers when they are not simply 0, 1, 2, … (a generic CSV series may skip).
    indexes = ArrayField(models.IntegerField(), null=True, blank=True)
    # vmstat's first row is the average since boot, not a sample of the run.
    first_is_since_boot = models.BooleanField(default=False)
    timestamps = ArrayField(models.CharField(max_length=40), default=list, blank=True)
    # Pre-thinned copy for charts (every preview_stride-th row, at most PREVIEW_POINTS), so a
    # page never reads a million values to draw two thousand.
    preview = ArrayField(models.FloatField(), default=list, blank=True)
    preview_timestamps = ArrayField(models.CharField(max_length=40), default=list, blank=True)
    preview_stride = models.PositiveIntegerField(default=1)

    class Meta:
        constraints = [
            # Also serves: a run's series for the system-activity page (run = ? AND source = ?).
            models.UniqueConstraint(
                fields=["run", "trial", "source", "column"], name="sample_column_uniq"
            )
        ]
        indexes = [
            # Serves: the newest runs with a time series of a source (the activity page's run
            # picker) straight from the index, however rare such runs are among the newest.
            models.Index(fields=["source", "-run"], name="sample_source_run_idx"),
        ]

    def __str__(self) -> str:
        return f"run {self.run_id} {self.source}.{self.column} ({len(self.values)} values)"


class Histogram(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="histograms")
    trial = models.PositiveSmallIntegerField(default=0)
    name = models.CharField(max_length=100)
    x_label = models.CharField(max_length=100)
    bins = models.JSONField()  # [[x, count], ...]

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "trial", "name"], name="histogram_uniq")
        ]

    def __str__(self) -> str:
        return f"run {self.run_id} {self.name}"


class Curve(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="curves")
    trial = models.PositiveSmallIntegerField(default=0)
    name = models.CharField(max_length=100)
    x_label = models.CharField(max_length=100)
    y_label = models.CharField(max_length=100)
    points = models.JSONField()  # [[x, y], ...]

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "trial", "name"], name="curve_uniq")]

    def __str__(self) -> str:
        return f"run {self.run_id} {self.name}"


class RawFile(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="raw_files")
    path = models.CharField(max_length=500)
    parser = models.CharField(max_length=50)
    trial = models.PositiveSmallIntegerField(default=0)
    content = models.BinaryField()
    sha256 = models.CharField(max_length=64)
    warnings = models.JSONField(default=list, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "path"], name="rawfile_uniq")]

    def __str__(self) -> str:
        return f"run {self.run_id} {self.path}"
